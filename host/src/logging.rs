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
//!
//! # Bounded
//!
//! A plugin's log lines are bounded here, for every engine alike: a
//! message is cut at [`MAX_LOG_BYTES`](crate::limits::MAX_LOG_BYTES); within one hook call a plugin keeps
//! at most [`MAX_LOG_LINES_PER_CALL`] lines and [`MAX_LOG_BYTES_PER_CALL`]
//! bytes; within one run at most [`MAX_LOG_LINES_PER_RUN`] lines and
//! [`MAX_LOG_BYTES_PER_RUN`] bytes; and while none of its calls runs (a
//! timer, a background task) at most [`MAX_LOG_LINES_PER_IDLE_SECOND`]
//! lines and [`MAX_LOG_BYTES_PER_IDLE_SECOND`] bytes a second. Lines over a
//! bound are dropped before any subscriber sees them, so nothing downstream
//! holds them either; one warning line, with the plugin's `run_id` and
//! `plugin`, then says how many were dropped and which bound they crossed
//! (when the call ends, the next second begins, or the run ends).

use crate::limits::{
    cut_log_message, MAX_LOG_BYTES_PER_CALL, MAX_LOG_BYTES_PER_IDLE_SECOND, MAX_LOG_BYTES_PER_RUN,
    MAX_LOG_LINES_PER_CALL, MAX_LOG_LINES_PER_IDLE_SECOND, MAX_LOG_LINES_PER_RUN,
};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
/// at [`MAX_LOG_BYTES`](crate::limits::MAX_LOG_BYTES), and the line is dropped when it crosses one of
/// the plugin's bounds (see the module docs).
pub fn plugin_log(run_id: &str, plugin: &str, level: LogLevel, message: &str) {
    let message = cut_log_message(message);
    let (keep, report) = admit(run_id, plugin, message.len() as u64);
    if let Some(report) = report {
        report.emit();
    }
    if keep {
        emit(run_id, plugin, level, message);
    }
}

fn emit(run_id: &str, plugin: &str, level: LogLevel, message: &str) {
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

/// Lines and bytes counted against a bound.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    lines: u64,
    bytes: u64,
}

impl Tally {
    fn fits(self, bytes: u64, lines_limit: u64, bytes_limit: u64) -> bool {
        self.lines < lines_limit && self.bytes.saturating_add(bytes) <= bytes_limit
    }

    fn add(&mut self, bytes: u64) {
        self.lines += 1;
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

/// Where one plugin stands against its bounds in one run.
struct Budget {
    /// Its hook calls in flight.
    calls: usize,
    /// What it kept since its first call in flight began, or (with no
    /// call in flight) since `window_start`.
    window: Tally,
    window_start: Instant,
    /// What it kept in the run.
    run: Tally,
    /// Lines dropped and not yet reported, and the bound the first of them
    /// crossed.
    dropped: u64,
    crossed: Bound,
    last_used: Instant,
}

impl Budget {
    fn new(now: Instant) -> Self {
        Budget {
            calls: 0,
            window: Tally::default(),
            window_start: now,
            run: Tally::default(),
            dropped: 0,
            crossed: Bound::Call,
            last_used: now,
        }
    }

    /// The report of the lines dropped so far, if any, and a new window.
    fn close_window(&mut self, run_id: &str, plugin: &str, now: Instant) -> Option<Dropped> {
        self.window = Tally::default();
        self.window_start = now;
        (self.dropped > 0).then(|| Dropped {
            run_id: run_id.to_string(),
            plugin: plugin.to_string(),
            lines: std::mem::take(&mut self.dropped),
            crossed: self.crossed,
        })
    }
}

/// A report of dropped lines, written once the budgets' lock is released.
#[must_use]
struct Dropped {
    run_id: String,
    plugin: String,
    lines: u64,
    crossed: Bound,
}

impl Dropped {
    fn emit(&self) {
        let message = format!(
            "{} log lines of plugin '{}' dropped: over {}",
            self.lines, self.plugin, self.crossed
        );
        emit(&self.run_id, &self.plugin, LogLevel::Warn, &message);
    }
}

/// How long a plugin's budget in a run outlives its last line when many
/// budgets are kept (runs that ended without saying so, lines outside any
/// run).
const BUDGET_IDLE: Duration = Duration::from_secs(60);

/// How many budgets are kept before idle ones are forgotten.
const BUDGETS_KEPT: usize = 1024;

/// Run id → plugin → its budget.
type Budgets = HashMap<String, HashMap<String, Budget>>;

static BUDGETS: Mutex<Option<Budgets>> = Mutex::new(None);

fn with_budget<T>(run_id: &str, plugin: &str, f: impl FnOnce(&mut Budget, Instant) -> T) -> T {
    let now = Instant::now();
    let mut budgets = BUDGETS.lock().unwrap_or_else(|e| e.into_inner());
    let budgets = budgets.get_or_insert_with(HashMap::new);
    if let Some(budget) = budgets.get_mut(run_id).and_then(|run| run.get_mut(plugin)) {
        budget.last_used = now;
        return f(budget, now);
    }
    if budgets.values().map(HashMap::len).sum::<usize>() >= BUDGETS_KEPT {
        for run in budgets.values_mut() {
            run.retain(|_, b| b.calls > 0 || now.duration_since(b.last_used) < BUDGET_IDLE);
        }
        budgets.retain(|_, run| !run.is_empty());
    }
    let budget = budgets
        .entry(run_id.to_string())
        .or_default()
        .entry(plugin.to_string())
        .or_insert_with(|| Budget::new(now));
    f(budget, now)
}

/// Whether a line of `bytes` from `plugin` in `run_id` is kept, and the
/// report of earlier drops to write first.
fn admit(run_id: &str, plugin: &str, bytes: u64) -> (bool, Option<Dropped>) {
    with_budget(run_id, plugin, |budget, now| {
        let mut report = None;
        if budget.calls == 0 && now.duration_since(budget.window_start) >= Duration::from_secs(1) {
            report = budget.close_window(run_id, plugin, now);
        }
        let crossed = if budget.calls > 0 {
            (!budget
                .window
                .fits(bytes, MAX_LOG_LINES_PER_CALL, MAX_LOG_BYTES_PER_CALL))
            .then_some(Bound::Call)
        } else {
            (!budget.window.fits(
                bytes,
                MAX_LOG_LINES_PER_IDLE_SECOND,
                MAX_LOG_BYTES_PER_IDLE_SECOND,
            ))
            .then_some(Bound::IdleSecond)
        }
        .or_else(|| {
            let counted = !run_id.is_empty();
            (counted
                && !budget
                    .run
                    .fits(bytes, MAX_LOG_LINES_PER_RUN, MAX_LOG_BYTES_PER_RUN))
            .then_some(Bound::Run)
        });
        match crossed {
            Some(bound) => {
                if budget.dropped == 0 {
                    budget.crossed = bound;
                }
                budget.dropped += 1;
                (false, report)
            }
            None => {
                budget.window.add(bytes);
                budget.run.add(bytes);
                (true, report)
            }
        }
    })
}

/// The bound a dropped line crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Call,
    Run,
    IdleSecond,
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (lines, bytes, within) = match self {
            Bound::Call => (
                MAX_LOG_LINES_PER_CALL,
                MAX_LOG_BYTES_PER_CALL,
                "in one hook call",
            ),
            Bound::Run => (MAX_LOG_LINES_PER_RUN, MAX_LOG_BYTES_PER_RUN, "in one run"),
            Bound::IdleSecond => (
                MAX_LOG_LINES_PER_IDLE_SECOND,
                MAX_LOG_BYTES_PER_IDLE_SECOND,
                "a second outside its hook calls",
            ),
        };
        write!(
            f,
            "the limit of {lines} lines or {} KiB of log messages {within}",
            bytes / 1024
        )
    }
}

/// The log bounds of one hook call: made when the call begins, and when
/// dropped (the call ended, or was abandoned) it reports in `span` the
/// lines the call's bound dropped.
pub(crate) struct CallLogs {
    run_id: String,
    plugin: String,
    span: tracing::Span,
}

impl CallLogs {
    /// The call of `plugin` in `run_id` begins: its first call in flight
    /// starts a new window (reporting drops from before it).
    pub(crate) fn begin(run_id: &str, plugin: &str, span: tracing::Span) -> CallLogs {
        let report = with_budget(run_id, plugin, |budget, now| {
            budget.calls += 1;
            if budget.calls == 1 {
                budget.close_window(run_id, plugin, now)
            } else {
                None
            }
        });
        if let Some(report) = report {
            span.in_scope(|| report.emit());
        }
        CallLogs {
            run_id: run_id.to_string(),
            plugin: plugin.to_string(),
            span,
        }
    }
}

impl Drop for CallLogs {
    fn drop(&mut self) {
        let report = with_budget(&self.run_id, &self.plugin, |budget, now| {
            budget.calls = budget.calls.saturating_sub(1);
            if budget.calls == 0 {
                budget.close_window(&self.run_id, &self.plugin, now)
            } else {
                None
            }
        });
        if let Some(report) = report {
            self.span.in_scope(|| report.emit());
        }
    }
}

/// Run `run_id` ended: report what its plugins' bounds dropped since the
/// last report, and forget their budgets.
pub(crate) fn run_ended(run_id: &str) {
    let now = Instant::now();
    let ended = {
        let mut budgets = BUDGETS.lock().unwrap_or_else(|e| e.into_inner());
        budgets.as_mut().and_then(|b| b.remove(run_id))
    };
    for (plugin, mut budget) in ended.into_iter().flatten() {
        if let Some(report) = budget.close_window(run_id, &plugin, now) {
            report.emit();
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
