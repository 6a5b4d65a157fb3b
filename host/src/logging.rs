//! Plugin log lines and hook spans, each carrying the `run_id` of its run.
//!
//! Every hook call runs inside a span named `hook` with fields `run_id`,
//! `plugin` and `hook`. A plugin's own log calls become events with target
//! [`PLUGIN_LOG_TARGET`] and fields `run_id`, `plugin` and `level`, whatever
//! engine the plugin runs on.

use crate::limits::cut_log_message;

/// The tracing target of every log line a plugin writes.
pub const PLUGIN_LOG_TARGET: &str = "yohost::plugin";

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

/// The span a hook call runs in.
pub fn hook_span(run_id: &str, plugin: &str, hook: yohost_contract::Hook) -> tracing::Span {
    tracing::info_span!("hook", run_id, plugin, hook = hook.as_str())
}
