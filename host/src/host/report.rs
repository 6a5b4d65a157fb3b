//! What `yohost check` prints: every plugin, loaded or refused.

use crate::load::loaded::{AppSurface, LoadedPlugin};
use crate::load::registry::Snapshot;
use crate::model::{Confinement, Mode};
use crate::run::session::PluginSession;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use yohost_contract::{kind, FinishArgs, Hook, RunInfo};

/// The `run_id` of the run `yohost check` opens to list tools.
pub const CHECK_RUN_ID: &str = "check";

/// Whether a plugin loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It loaded and runs.
    Loaded,
    /// It was refused; `reason` says why.
    Refused,
}

/// One line of `yohost check`.
#[derive(Debug, Clone, Serialize)]
pub struct PluginReport {
    /// The plugin's name.
    pub name: String,
    /// Its file or folder (in JSON, bytes that are not UTF-8 are replaced).
    #[serde(serialize_with = "lossy_path")]
    pub file: PathBuf,
    /// Its engine (`dylib`, `wasm`, `js`, `node`, `python`), if known.
    pub engine: Option<String>,
    /// Why it runs on that engine, when `engine = "auto"` sent it to
    /// another than its file's (a plugin that needs Node).
    pub routed: Option<String>,
    /// Its ecosystem (`yohost`, `pi`, `dsh`, `rutis-agent`), if known.
    pub ecosystem: Option<String>,
    /// Loaded or refused.
    pub status: Status,
    /// Advisory or required (a refused plugin: the mode it would have had).
    pub mode: Mode,
    /// What its manifest grants, one item each (`read data/`, `exec`, …;
    /// see [`Capabilities::granted`](crate::manifest::Capabilities::granted));
    /// empty for a refused plugin or one granted nothing.
    pub grants: Vec<String>,
    /// The hooks it implements.
    pub hooks: Vec<String>,
    /// The tools it offers.
    pub tools: Vec<String>,
    /// The commands and flags it offers an app's user (in JSON, the
    /// plugin's `commands` and `flags`).
    #[serde(flatten)]
    pub app: AppSurface,
    /// Why it was refused.
    pub reason: Option<String>,
    /// What a person should know about it.
    pub warnings: Vec<String>,
    /// How the processes it runs in or starts are confined: `kernel
    /// sandbox` (Landlock, from its grants) or `unconfined` (no Landlock,
    /// and its manifest allows it); absent for a plugin without processes.
    pub processes: Option<&'static str>,
    /// A loaded plugin's data folder ([`LoadedPlugin::data_dir`]; in JSON,
    /// bytes that are not UTF-8 are replaced); absent for a refused plugin.
    #[serde(serialize_with = "lossy_optional_path")]
    pub data_dir: Option<PathBuf>,
}

/// One plugin as a person reads it, for logs and embedding programs:
/// `guard (js, yohost): loaded; hooks before_tool; tools shout` then one
/// indented line per warning, or `guard (js, yohost): refused: REASON`.
impl std::fmt::Display for PluginReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let engine = self.engine.as_deref().unwrap_or("unknown engine");
        let ecosystem = self.ecosystem.as_deref().unwrap_or("unknown ecosystem");
        write!(f, "{} ({engine}, {ecosystem}): ", self.name)?;
        match self.status {
            Status::Refused => write!(
                f,
                "refused: {}",
                self.reason.as_deref().unwrap_or("no reason given")
            )?,
            Status::Loaded => {
                write!(f, "loaded")?;
                if !self.hooks.is_empty() {
                    write!(f, "; hooks {}", self.hooks.join(", "))?;
                }
                if !self.tools.is_empty() {
                    write!(f, "; tools {}", self.tools.join(", "))?;
                }
                let names = |prefix: &str, names: Vec<&str>| {
                    names
                        .iter()
                        .map(|name| format!("{prefix}{name}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                if !self.app.commands.is_empty() {
                    let commands = self.app.commands.iter().map(|c| c.name.as_str());
                    write!(f, "; commands {}", names("/", commands.collect()))?;
                }
                if !self.app.flags.is_empty() {
                    let flags = self.app.flags.iter().map(|c| c.name.as_str());
                    write!(f, "; flags {}", names("--", flags.collect()))?;
                }
            }
        }
        if let (Some(engine), Some(why)) = (&self.engine, &self.routed) {
            write!(f, "\n  on {engine}: {why}")?;
        }
        if let Some(processes) = self.processes {
            write!(f, "\n  processes: {processes}")?;
        }
        for warning in &self.warnings {
            write!(f, "\n  warning: {warning}")?;
        }
        Ok(())
    }
}

/// A path as text, with bytes that are not UTF-8 replaced: a file name in
/// the plugin directory must never make the report fail.
fn lossy_path<S: serde::Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

/// [`lossy_path`] of a path that may be absent (`null`).
fn lossy_optional_path<S: serde::Serializer>(
    path: &Option<PathBuf>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match path {
        Some(path) => lossy_path(path, serializer),
        None => serializer.serialize_none(),
    }
}

/// Report every plugin of `snapshot`; tools come from each plugin's `tools`
/// hook, called in a run with `run_id` [`CHECK_RUN_ID`].
pub async fn report(snapshot: &Snapshot) -> Vec<PluginReport> {
    let mut out = Vec::new();
    for plugin in &snapshot.plugins {
        out.push(loaded_report(plugin).await);
    }
    for refusal in &snapshot.refused {
        out.push(PluginReport {
            name: refusal.name.clone(),
            file: refusal.file.clone(),
            engine: refusal.engine.map(|e| e.as_str().to_string()),
            routed: None,
            ecosystem: refusal.ecosystem.map(|e| e.as_str().to_string()),
            status: Status::Refused,
            mode: refusal.mode,
            grants: Vec::new(),
            hooks: Vec::new(),
            tools: Vec::new(),
            app: AppSurface::default(),
            reason: Some(refusal.reason.to_string()),
            warnings: Vec::new(),
            processes: None,
            data_dir: None,
        });
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

async fn loaded_report(plugin: &Arc<LoadedPlugin>) -> PluginReport {
    let mut warnings = plugin.warnings.clone();
    let mut tools = Vec::new();
    if plugin.has(Hook::Tools) {
        let run = RunInfo {
            run_id: CHECK_RUN_ID.into(),
            ..RunInfo::default()
        };
        let session =
            PluginSession::open(Arc::clone(plugin), run, CancellationToken::new(), None).await;
        match session.call::<kind::Tools>(session.run.clone()).await {
            Ok(specs) => {
                for spec in specs {
                    let check =
                        crate::call::arguments::ArgumentCheck::new(&spec.name, &spec.parameters);
                    match check.refusal() {
                        Some(why) => warnings.push(why.to_string()),
                        None => tools.push(spec.name),
                    }
                }
            }
            // Not the model's eyes: the person running `check` gets the detail.
            Err(e) => warnings.push(format!("listing its tools failed: {}", e.error)),
        }
        session
            .finish(FinishArgs {
                run: session.run.clone(),
                end: "completed".into(),
                reason: None,
                error: None,
            })
            .await;
    }
    PluginReport {
        name: plugin.name.clone(),
        file: plugin.file.clone(),
        engine: Some(plugin.engine.as_str().to_string()),
        routed: plugin.routed.clone(),
        ecosystem: Some(plugin.ecosystem.as_str().to_string()),
        status: Status::Loaded,
        mode: plugin.mode(),
        grants: plugin.manifest.capabilities.granted(),
        hooks: plugin
            .hooks
            .iter()
            .map(|h| h.as_str().to_string())
            .collect(),
        tools,
        app: plugin.app.clone(),
        reason: None,
        warnings,
        processes: plugin.processes.map(Confinement::as_str),
        data_dir: plugin.data_dir.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(status: Status) -> PluginReport {
        PluginReport {
            name: "guard".into(),
            file: PathBuf::from("plugins/guard.ts"),
            engine: Some("js".into()),
            routed: None,
            ecosystem: Some("yohost".into()),
            status,
            mode: Mode::Advisory,
            grants: Vec::new(),
            hooks: vec!["tools".into(), "before_tool".into()],
            tools: vec!["shout".into()],
            reason: None,
            app: AppSurface::default(),
            warnings: Vec::new(),
            processes: None,
            data_dir: None,
        }
    }

    #[test]
    fn a_report_reads_as_one_line_per_plugin_and_one_per_warning() {
        let mut loaded = line(Status::Loaded);
        assert_eq!(
            loaded.to_string(),
            "guard (js, yohost): loaded; hooks tools, before_tool; tools shout"
        );
        loaded.warnings = vec!["no network API yet".into()];
        assert_eq!(
            loaded.to_string(),
            "guard (js, yohost): loaded; hooks tools, before_tool; tools shout\n  warning: no network API yet"
        );
        let mut routed = line(Status::Loaded);
        routed.engine = Some("node".into());
        routed.routed = Some("index.ts imports `node:net`".into());
        assert_eq!(
            routed.to_string(),
            "guard (node, yohost): loaded; hooks tools, before_tool; tools shout\n  on node: index.ts imports `node:net`"
        );
        let mut app = line(Status::Loaded);
        app.app.commands = vec![yohost_contract::CommandSpec {
            name: "plan".into(),
            description: String::new(),
        }];
        assert_eq!(
            app.to_string(),
            "guard (js, yohost): loaded; hooks tools, before_tool; tools shout; commands /plan"
        );
        let mut refused = line(Status::Refused);
        refused.engine = None;
        refused.reason = Some("syntax error".into());
        assert_eq!(
            refused.to_string(),
            "guard (unknown engine, yohost): refused: syntax error"
        );
    }
}
