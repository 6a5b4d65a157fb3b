//! Plugin log lines and hook spans, each carrying the `run_id` of its run.
//!
//! Every hook call runs inside a span named `hook` with fields `run_id`,
//! `plugin`, `hook` and, for a hook about a tool call, `call_id`. A
//! plugin's own log calls become events inside it, with target
//! [`PLUGIN_LOG_TARGET`] and fields `run_id`, `plugin` and `level`, whatever
//! engine the plugin runs on.
//!
//! Two more targets let a program show what the host decided without
//! repeating it: every load outcome goes to [`LOAD_LOG_TARGET`] (what
//! [`PluginHost::report`](crate::PluginHost::report) also carries), and
//! every decision a plugin makes about a tool call goes to
//! [`DECISION_LOG_TARGET`], naming the plugin.

use crate::limits::cut_log_message;

/// The tracing target of every log line a plugin writes.
pub const PLUGIN_LOG_TARGET: &str = "yohost::plugin";

/// The tracing target of the lines about loading plugins: each refusal
/// (warn, with `plugin`), each load (debug), and each load warning (warn).
pub const LOAD_LOG_TARGET: &str = "yohost::load";

/// The tracing target of every decision a plugin makes about a tool call,
/// at info level, with fields `run_id`, `plugin`, `hook`, `tool`, `call_id`
/// and `decision` (a [`Decision`] name); a deny has `reason` too, a
/// rewrite `args` (the arguments it asked for, as JSON).
pub const DECISION_LOG_TARGET: &str = "yohost::decision";

/// What a plugin decided about one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// `before_tool` denied the call (or failed, which denies it).
    Deny,
    /// `before_tool` rewrote the call's arguments.
    Rewrite,
    /// `after_tool` changed the call's output (a redaction, say), or
    /// withheld it by failing.
    EditOutput,
}

impl Decision {
    /// The decision's name in the `decision` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Deny => "deny",
            Decision::Rewrite => "rewrite",
            Decision::EditOutput => "edit_output",
        }
    }
}

/// The tool call a decision is about.
pub struct CallRef<'a> {
    /// The run's id.
    pub run_id: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The call's id.
    pub call_id: &'a str,
}

/// Log one decision of `plugin` about `call`, at target
/// [`DECISION_LOG_TARGET`]. `detail` is a deny's reason or a rewrite's
/// arguments.
pub(crate) fn decision(
    call: &CallRef<'_>,
    plugin: &str,
    hook: yohost_contract::Hook,
    decision: Decision,
    detail: Option<&str>,
) {
    let (run_id, tool, call_id) = (call.run_id, call.tool, call.call_id);
    let (hook, name) = (hook.as_str(), decision.as_str());
    match decision {
        Decision::Deny => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, reason = detail.unwrap_or_default(), "{plugin} denied {tool}")
        }
        Decision::Rewrite => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, args = detail.unwrap_or_default(), "{plugin} rewrote {tool}")
        }
        Decision::EditOutput => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, "{plugin} edited the output of {tool}")
        }
    }
}

/// A plugin log level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Something failed.
    Error,
    /// Something looks wrong.
    Warn,
    /// Progress worth recording.
    Info,
    /// Detail for debugging.
    Debug,
}

impl LogLevel {
    /// The level with this name (`error`, `warn`/`warning`, `info`/`log`,
    /// `debug`/`trace`); unknown names are `info`.
    pub fn from_name(name: &str) -> LogLevel {
        match name.to_ascii_lowercase().as_str() {
            "error" | "critical" | "fatal" => LogLevel::Error,
            "warn" | "warning" => LogLevel::Warn,
            "debug" | "trace" => LogLevel::Debug,
            _ => LogLevel::Info,
        }
    }

    /// The level's name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
        }
    }
}

/// Write one line on behalf of `plugin` in run `run_id`. The message is cut
/// at [`MAX_LOG_BYTES`](crate::limits::MAX_LOG_BYTES).
pub fn plugin_log(run_id: &str, plugin: &str, level: LogLevel, message: &str) {
    let message = cut_log_message(message);
    let lvl = level.as_str();
    match level {
        LogLevel::Error => {
            tracing::error!(target: PLUGIN_LOG_TARGET, run_id, plugin, level = lvl, "{message}")
        }
        LogLevel::Warn => {
            tracing::warn!(target: PLUGIN_LOG_TARGET, run_id, plugin, level = lvl, "{message}")
        }
        LogLevel::Info => {
            tracing::info!(target: PLUGIN_LOG_TARGET, run_id, plugin, level = lvl, "{message}")
        }
        LogLevel::Debug => {
            tracing::debug!(target: PLUGIN_LOG_TARGET, run_id, plugin, level = lvl, "{message}")
        }
    }
}

/// The name of the span every hook call runs in ([`hook_span`]).
pub const HOOK_SPAN: &str = "hook";

/// The span a hook call runs in, with the id of the tool call it is about
/// (`call_tool`, `before_tool`, `after_tool`): a plugin's log lines are
/// events inside it.
pub fn hook_span(call: &yohost_contract::HookCall, plugin: &str) -> tracing::Span {
    let (run_id, hook, call_id) = (&call.run().run_id, call.hook().as_str(), call.call_id());
    tracing::info_span!(HOOK_SPAN, run_id, plugin, hook, call_id)
}
