//! What `yohost check` prints: every plugin, loaded or refused.

use crate::plugin::LoadedPlugin;
use crate::registry::Snapshot;
use crate::session::PluginSession;
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
    /// Its engine (`dylib`, `wasm`, `js`, `python`), if known.
    pub engine: Option<String>,
    /// Its ecosystem (`yohost`, `pi`, `dsh`, `rutis-agent`), if known.
    pub ecosystem: Option<String>,
    /// Loaded or refused.
    pub status: Status,
    /// The hooks it implements.
    pub hooks: Vec<String>,
    /// The tools it offers.
    pub tools: Vec<String>,
    /// Why it was refused.
    pub reason: Option<String>,
    /// What a person should know about it.
    pub warnings: Vec<String>,
}

/// A path as text, with bytes that are not UTF-8 replaced: a file name in
/// the plugin directory must never make the report fail.
fn lossy_path<S: serde::Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
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
            ecosystem: refusal.ecosystem.map(|e| e.as_str().to_string()),
            status: Status::Refused,
            hooks: Vec::new(),
            tools: Vec::new(),
            reason: Some(refusal.reason.to_string()),
            warnings: Vec::new(),
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
        let session = PluginSession::open(Arc::clone(plugin), run, CancellationToken::new()).await;
        match session.call::<kind::Tools>(session.run.clone()).await {
            Ok(specs) => tools = specs.into_iter().map(|t| t.name).collect(),
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
        ecosystem: Some(plugin.ecosystem.as_str().to_string()),
        status: Status::Loaded,
        hooks: plugin
            .hooks
            .iter()
            .map(|h| h.as_str().to_string())
            .collect(),
        tools,
        reason: None,
        warnings,
    }
}
