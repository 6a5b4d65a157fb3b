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
//! message is cut at [`MAX_LOG_BYTES`](crate::model::limits::MAX_LOG_BYTES); within one hook call a plugin keeps
//! at most [`MAX_LOG_LINES_PER_CALL`] lines and [`MAX_LOG_BYTES_PER_CALL`]
//! bytes; within one run at most [`MAX_LOG_LINES_PER_RUN`] lines and
//! [`MAX_LOG_BYTES_PER_RUN`] bytes; and while none of its calls runs (a
//! timer, a background task, or a line naming a run id the host did not
//! call it in) at most [`MAX_LOG_LINES_PER_IDLE_SECOND`] lines and
//! [`MAX_LOG_BYTES_PER_IDLE_SECOND`] bytes a second, whatever run ids its
//! lines name. Lines over a bound are dropped before any subscriber sees
//! them, so nothing downstream holds them either; one warning line, with
//! `plugin` (and the `run_id` of the call), then says how many were dropped
//! and which bound they crossed: when the call ends (or the run does), or
//! for lines outside calls when the next second's first line comes or its
//! next call begins.

use crate::model::limits::{
    cut_log_message, MAX_LOG_BYTES_PER_CALL, MAX_LOG_BYTES_PER_IDLE_SECOND, MAX_LOG_BYTES_PER_RUN,
    MAX_LOG_LINES_PER_CALL, MAX_LOG_LINES_PER_IDLE_SECOND, MAX_LOG_LINES_PER_RUN,
};
use crate::model::sync::lock;
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
/// and `decision` (a [`Decision`] name); a deny and a failure have `reason`
/// too (a failure's says what failed, with the reply's expected and actual
/// shape when the reply did not fit), a rewrite `args` (the arguments it
/// asked for, as JSON).
pub const DECISION_LOG_TARGET: &str = "yohost::decision";

/// What a plugin decided about one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// `before_tool` denied the call (or failed, which denies it).
    Deny,
    /// `before_tool` rewrote the call's arguments.
    Rewrite,
    /// `after_tool` changed the call's output (a redaction, say).
    EditOutput,
    /// `after_tool` failed (it threw, timed out, or its reply did not fit
    /// the contract), which withholds the call's output.
    Fail,
}

impl Decision {
    /// The decision's name in the `decision` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Deny => "deny",
            Decision::Rewrite => "rewrite",
            Decision::EditOutput => "edit_output",
            Decision::Fail => "fail",
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
/// [`DECISION_LOG_TARGET`]. `detail` is a deny's or a failure's reason, or a
/// rewrite's arguments (as JSON): written out only by a subscriber that
/// records the line, never encoded for nothing.
pub(crate) fn decision(
    call: &CallRef<'_>,
    plugin: &str,
    hook: yohost_contract::Hook,
    decision: Decision,
    detail: &dyn std::fmt::Display,
) {
    let (run_id, tool, call_id) = (call.run_id, call.tool, call.call_id);
    let (hook, name) = (hook.as_str(), decision.as_str());
    match decision {
        Decision::Deny => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, reason = %detail, "{plugin} denied {tool}")
        }
        Decision::Rewrite => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, args = %detail, "{plugin} rewrote {tool}")
        }
        Decision::EditOutput => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, "{plugin} edited the output of {tool}")
        }
        Decision::Fail => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, reason = %detail, "{plugin} failed in {hook}, so the output of {tool} was withheld")
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
/// at [`MAX_LOG_BYTES`](crate::model::limits::MAX_LOG_BYTES), and the line is dropped when it crosses one of
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

/// What was kept since a window began, and what was dropped.
struct Window {
    start: Instant,
    kept: Tally,
    dropped: u64,
    /// The bound the first dropped line crossed.
    crossed: Bound,
}

impl Window {
    fn new(now: Instant) -> Self {
        Window {
            start: now,
            kept: Tally::default(),
            dropped: 0,
            crossed: Bound::Call,
        }
    }

    fn drop_line(&mut self, bound: Bound) {
        if self.dropped == 0 {
            self.crossed = bound;
        }
        self.dropped += 1;
    }

    /// Start a new window at `now`; the report of what this one dropped,
    /// if it dropped anything.
    fn close(&mut self, run_id: &str, plugin: &str, now: Instant) -> Option<Dropped> {
        let closed = std::mem::replace(self, Window::new(now));
        (closed.dropped > 0).then(|| Dropped {
            run_id: run_id.to_string(),
            plugin: plugin.to_string(),
            lines: closed.dropped,
            crossed: closed.crossed,
        })
    }
}

/// Where one plugin stands against its bounds in one run. Made only when
/// one of its hook calls begins ([`CallLogs`]): the host's run ids, never
/// one a plugin names in a log call.
struct RunBudget {
    /// Its hook calls in flight.
    calls: usize,
    /// Since its first call in flight began.
    call: Window,
    /// What it kept in the run.
    run: Tally,
    last_used: Instant,
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

/// How long a plugin's budget in a run outlives its last call when many
/// budgets are kept (runs that ended without saying so).
const BUDGET_IDLE: Duration = Duration::from_secs(60);

/// How many budgets are kept before idle ones are forgotten.
const BUDGETS_KEPT: usize = 1024;

#[derive(Default)]
struct Budgets {
    /// Run id → plugin → its budget in the run.
    runs: HashMap<String, HashMap<String, RunBudget>>,
    /// Plugin → its window outside its hook calls (whatever run id its
    /// lines name).
    idle: HashMap<String, Window>,
}

static BUDGETS: Mutex<Option<Budgets>> = Mutex::new(None);

fn budgets<T>(f: impl FnOnce(&mut Budgets, Instant) -> T) -> T {
    let now = Instant::now();
    let mut budgets = lock(&BUDGETS);
    f(budgets.get_or_insert_with(Budgets::default), now)
}

/// Whether a line of `bytes` from `plugin` in `run_id` is kept, and the
/// report of earlier drops to write first.
fn admit(run_id: &str, plugin: &str, bytes: u64) -> (bool, Option<Dropped>) {
    budgets(|budgets, now| {
        let run = budgets
            .runs
            .get_mut(run_id)
            .and_then(|run| run.get_mut(plugin));
        match run {
            Some(budget) if budget.calls > 0 => {
                let bound =
                    if !budget
                        .call
                        .kept
                        .fits(bytes, MAX_LOG_LINES_PER_CALL, MAX_LOG_BYTES_PER_CALL)
                    {
                        Some(Bound::Call)
                    } else if !budget
                        .run
                        .fits(bytes, MAX_LOG_LINES_PER_RUN, MAX_LOG_BYTES_PER_RUN)
                    {
                        Some(Bound::Run)
                    } else {
                        None
                    };
                match bound {
                    Some(bound) => {
                        budget.call.drop_line(bound);
                        (false, None)
                    }
                    None => {
                        budget.call.kept.add(bytes);
                        budget.run.add(bytes);
                        (true, None)
                    }
                }
            }
            run => {
                let idle = budgets
                    .idle
                    .entry(plugin.to_string())
                    .or_insert_with(|| Window::new(now));
                let report = if now.duration_since(idle.start) >= Duration::from_secs(1) {
                    idle.close("", plugin, now)
                } else {
                    None
                };
                let bound = if !idle.kept.fits(
                    bytes,
                    MAX_LOG_LINES_PER_IDLE_SECOND,
                    MAX_LOG_BYTES_PER_IDLE_SECOND,
                ) {
                    Some(Bound::IdleSecond)
                } else if run.as_ref().is_some_and(|budget| {
                    !budget
                        .run
                        .fits(bytes, MAX_LOG_LINES_PER_RUN, MAX_LOG_BYTES_PER_RUN)
                }) {
                    Some(Bound::Run)
                } else {
                    None
                };
                match bound {
                    Some(bound) => {
                        idle.drop_line(bound);
                        (false, report)
                    }
                    None => {
                        idle.kept.add(bytes);
                        if let Some(budget) = run {
                            budget.run.add(bytes);
                        }
                        (true, report)
                    }
                }
            }
        }
    })
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
    /// starts a new window (reporting what the plugin's lines outside its
    /// calls dropped).
    pub(crate) fn begin(run_id: &str, plugin: &str, span: tracing::Span) -> CallLogs {
        let report = budgets(|budgets, now| {
            let kept: usize = budgets.runs.values().map(HashMap::len).sum();
            if kept >= BUDGETS_KEPT {
                for run in budgets.runs.values_mut() {
                    run.retain(|_, b| b.calls > 0 || now.duration_since(b.last_used) < BUDGET_IDLE);
                }
                budgets.runs.retain(|_, run| !run.is_empty());
            }
            let budget = budgets
                .runs
                .entry(run_id.to_string())
                .or_default()
                .entry(plugin.to_string())
                .or_insert_with(|| RunBudget {
                    calls: 0,
                    call: Window::new(now),
                    run: Tally::default(),
                    last_used: now,
                });
            budget.calls += 1;
            budget.last_used = now;
            if budget.calls == 1 {
                budget.call = Window::new(now);
            }
            budgets
                .idle
                .get_mut(plugin)
                .and_then(|idle| idle.close("", plugin, now))
        });
        if let Some(report) = report {
            report.emit();
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
        let report = budgets(|budgets, now| {
            let budget = budgets
                .runs
                .get_mut(&self.run_id)
                .and_then(|run| run.get_mut(&self.plugin))?;
            budget.calls = budget.calls.saturating_sub(1);
            budget.last_used = now;
            if budget.calls > 0 {
                return None;
            }
            budget.call.close(&self.run_id, &self.plugin, now)
        });
        if let Some(report) = report {
            self.span.in_scope(|| report.emit());
        }
    }
}

/// Run `run_id` ended: forget its plugins' budgets, reporting what their
/// calls in flight dropped.
pub(crate) fn run_ended(run_id: &str) {
    let now = Instant::now();
    let ended = budgets(|budgets, _| budgets.runs.remove(run_id));
    for (plugin, mut budget) in ended.into_iter().flatten() {
        if let Some(report) = budget.call.close(run_id, &plugin, now) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dropped_in_call(run_id: &str, plugin: &str) -> u64 {
        budgets(|b, _| b.runs[run_id][plugin].call.dropped)
    }

    #[test]
    fn a_call_keeps_its_bound_of_lines_and_counts_the_rest() {
        let calls = CallLogs::begin("bound-run", "bound-plugin", tracing::Span::none());
        let kept = (0..MAX_LOG_LINES_PER_CALL + 10)
            .filter(|_| admit("bound-run", "bound-plugin", 1).0)
            .count() as u64;
        assert_eq!(kept, MAX_LOG_LINES_PER_CALL);
        assert_eq!(dropped_in_call("bound-run", "bound-plugin"), 10);
        // Bytes are bounded too.
        let bytes = CallLogs::begin("bytes-run", "bound-plugin", tracing::Span::none());
        let big = 8 * 1024;
        let kept = (0..3000)
            .filter(|_| admit("bytes-run", "bound-plugin", big).0)
            .count() as u64;
        assert_eq!(kept, MAX_LOG_BYTES_PER_CALL / big);
        drop((calls, bytes));
        // The call ended: its window was reported and closed.
        assert_eq!(dropped_in_call("bound-run", "bound-plugin"), 0);
        run_ended("bound-run");
        run_ended("bytes-run");
        assert!(budgets(|b, _| !b.runs.contains_key("bound-run")));
    }

    #[test]
    fn lines_outside_calls_are_bounded_whatever_run_id_they_name() {
        let kept = (0..5 * MAX_LOG_LINES_PER_IDLE_SECOND)
            .filter(|i| admit(&format!("forged-{i}"), "idle-plugin", 1).0)
            .count() as u64;
        assert_eq!(kept, MAX_LOG_LINES_PER_IDLE_SECOND);
        // A run id a plugin names makes no budget of its own.
        assert!(budgets(|b, _| !b
            .runs
            .keys()
            .any(|r| r.starts_with("forged-"))));
    }
}
