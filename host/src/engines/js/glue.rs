//! What the embedded engine and the Node engine share, kept once: loading
//! yohost's own flavor, turning what a flavor's
//! shape reported into a [`Loaded`] plugin, and routing a plugin's log line
//! to its call's subscriber and span.
//!
//! The JavaScript half of the glue, `show` and `describe` (how a thrown
//! value or a logged one reads), is `describe.js`: the embedded driver and
//! Node's bootstrap both include it.

use super::flavor::{Flavor, YOHOST};
use crate::call::logging::{plugin_log, LogLevel};
use crate::call::plugin::Plugin;
use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::grants::Grants;
use crate::load::loaded::{AppSurface, Loaded};
use crate::model::names::closest;
use crate::model::Confinement;
use std::path::Path;
use std::sync::Arc;
use yohost_contract::Hook;

/// An engine's loader for a plugin of any flavor: the embedded engine's
/// [`load_with`](super::load_with) or Node's
/// [`load_with`](crate::engines::node::load_with).
pub(crate) type LoadWith = fn(
    &Candidate,
    &[std::path::PathBuf],
    &Flavor,
    &serde_json::Value,
    Grants,
) -> Result<Loaded, LoadError>;

/// Load a yohost plugin (flavor [`YOHOST`], no settings) with an engine's
/// `load_with`.
pub(crate) fn load_yohost(
    load_with: LoadWith,
    candidate: &Candidate,
    grants: Grants,
) -> Result<Loaded, LoadError> {
    let entries = std::slice::from_ref(&candidate.entry);
    load_with(
        candidate,
        entries,
        &YOHOST,
        &serde_json::Value::Null,
        grants,
    )
}

/// What a flavor's shape reported when the plugin loaded, on either engine.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Shaped {
    /// The name the plugin gave itself.
    pub name: Option<String>,
    /// The contract names of the hooks it implements.
    pub hooks: Vec<String>,
    /// What the flavor's shape reported without refusing the plugin.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The event or hook names the plugin used that the flavor does not
    /// know.
    #[serde(default)]
    pub unknown: Vec<UnknownName>,
    /// Whether the shape gave an `unload`, which runs when it is dropped.
    #[serde(default)]
    pub unloads: bool,
    /// The commands and flags it offers an app's user.
    #[serde(default)]
    pub app: AppSurface,
}

/// An event or hook name a plugin used that its flavor does not know, as
/// a flavor's shape reports it: `{what, name, known, strict, outcome}`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct UnknownName {
    /// What the plugin did with it ("listens for `tool_cal`").
    pub what: String,
    /// The name.
    pub name: String,
    /// The names the flavor knows there.
    pub known: Vec<String>,
    /// Whether a name close to none of `known` is unknown too; otherwise
    /// it may be the plugin's own (an event it emits itself), and is only a
    /// warning that the host never emits it.
    #[serde(default)]
    pub strict: bool,
    /// What becomes of the code behind it ("the handler never runs").
    pub outcome: String,
}

impl UnknownName {
    /// The sentence that names it with the closest known name (`Ok`: it
    /// is unknown), or the warning for a name that may be the plugin's
    /// own (`Err`).
    pub fn sentence(&self) -> Result<String, String> {
        let (what, outcome) = (&self.what, &self.outcome);
        let known = self.known.iter().map(String::as_str);
        match (closest(&self.name, known), self.strict) {
            (Some(near), _) => Ok(format!(
                "{what}, which the host does not know (did you mean `{near}`?): {outcome}"
            )),
            (None, true) => Ok(format!(
                "{what}, which the host does not know (it knows {}): {outcome}",
                self.known.join(", ")
            )),
            (None, false) => Err(format!("{what}, which the host never emits: {outcome}")),
        }
    }
}

impl Shaped {
    /// The loaded `plugin` of the entry `path`, with the hooks its shape
    /// named (a name outside the contract refuses it), its shape's warnings
    /// followed by `warnings`, and how its processes are confined.
    pub(crate) fn into_loaded(
        self,
        path: &Path,
        plugin: Arc<dyn Plugin>,
        warnings: impl IntoIterator<Item = String>,
        processes: Option<Confinement>,
    ) -> Result<Loaded, LoadError> {
        let hooks = self
            .hooks
            .iter()
            .map(|name| {
                Hook::from_name(name).ok_or_else(|| LoadError::Invalid {
                    path: path.to_path_buf(),
                    message: format!("internal: the plugin's shape names unknown hook `{name}`"),
                })
            })
            .collect::<Result<Vec<Hook>, _>>()?;
        let mut all = self.warnings;
        let mut unknown_names = Vec::new();
        for unknown in &self.unknown {
            match unknown.sentence() {
                Ok(sentence) => unknown_names.push(sentence),
                Err(warning) => all.push(warning),
            }
        }
        all.extend(warnings);
        let mut loaded = Loaded::new(plugin, hooks);
        loaded.name = self.name;
        loaded.warnings = all;
        loaded.unknown_names = unknown_names;
        loaded.unloads = self.unloads;
        loaded.app = self.app;
        loaded.processes = processes;
        Ok(loaded)
    }
}

/// Who made a hook call: its tracing subscriber and span, which the call's
/// log lines go to wherever the plugin writes them.
#[derive(Clone)]
pub(crate) struct Caller {
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

impl Caller {
    /// The caller on this thread now.
    pub(crate) fn current() -> Caller {
        Caller {
            dispatch: tracing::dispatcher::get_default(|d| d.clone()),
            span: tracing::Span::current(),
        }
    }

    /// Run `f` in the caller's subscriber and span.
    pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        tracing::dispatcher::with_default(&self.dispatch, || self.span.in_scope(f))
    }
}

/// Write a line the plugin `name` logged at `level`. With an `owner` (its
/// call's caller and run id), it goes to the call's subscriber and span and
/// names the call's run unless the line names one; without, to `outside`
/// (the subscriber of whoever loaded the plugin), or to this thread's
/// subscriber when that is `None`.
pub(crate) fn log_line(
    owner: Option<(&Caller, &str)>,
    outside: Option<&tracing::Dispatch>,
    run_id: Option<String>,
    name: &str,
    level: &str,
    message: &str,
) {
    let level = LogLevel::from_name(level);
    match owner {
        Some((caller, call_run)) => {
            let run_id = run_id.as_deref().unwrap_or(call_run);
            caller.in_scope(|| plugin_log(run_id, name, level, message));
        }
        None => {
            let line = || plugin_log(run_id.as_deref().unwrap_or(""), name, level, message);
            match outside {
                Some(dispatch) => tracing::dispatcher::with_default(dispatch, line),
                None => line(),
            }
        }
    }
}
