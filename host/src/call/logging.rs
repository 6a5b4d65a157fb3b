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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The tracing target of every log line a plugin writes.
pub const PLUGIN_LOG_TARGET: &str = "yohost::plugin";

/// The tracing target of the lines about loading plugins: each refusal
/// (warn, with `plugin`), each load (debug), and each load warning (warn).
pub const LOAD_LOG_TARGET: &str = "yohost::load";

pub use super::decisions::{Decision, DECISION_LOG_TARGET};

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

/// Where one plugin stands against its bounds in one run. Held by the
/// plugin's [`RunLogs`] for the run: only the host's run ids have one,
/// never one a plugin names in a log call.
struct RunBudget {
    /// Its hook calls in flight.
    calls: usize,
    /// Since its first call in flight began.
    call: Window,
    /// What it kept in the run.
    run: Tally,
}

impl RunBudget {
    /// Whether a line of `bytes` written during one of its calls is kept.
    fn admit_in_call(&mut self, bytes: u64) -> bool {
        let bound = if !self
            .call
            .kept
            .fits(bytes, MAX_LOG_LINES_PER_CALL, MAX_LOG_BYTES_PER_CALL)
        {
            Some(Bound::Call)
        } else if !self
            .run
            .fits(bytes, MAX_LOG_LINES_PER_RUN, MAX_LOG_BYTES_PER_RUN)
        {
            Some(Bound::Run)
        } else {
            None
        };
        match bound {
            Some(bound) => {
                self.call.drop_line(bound);
                false
            }
            None => {
                self.call.kept.add(bytes);
                self.run.add(bytes);
                true
            }
        }
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

/// One plugin's window outside its calls, whatever run ids its lines name.
struct Idle {
    window: Mutex<Window>,
    /// The window dropped a line since it was last reported: the plugin's
    /// next call reports it.
    dropped: AtomicBool,
}

/// Where each plugin's lines are counted: the runs' budgets (by run id,
/// then plugin) and the windows outside calls (by plugin). Locked once
/// when a plugin's session opens and closes, and once per plugin log line
/// to find its budget; never by a hook call's start or end.
#[derive(Default)]
struct Budgets {
    runs: HashMap<String, HashMap<String, Arc<Mutex<RunBudget>>>>,
    idle: HashMap<String, Arc<Idle>>,
}

impl Budgets {
    fn idle_of(&mut self, plugin: &str, now: Instant) -> Arc<Idle> {
        Arc::clone(self.idle.entry(plugin.to_string()).or_insert_with(|| {
            Arc::new(Idle {
                window: Mutex::new(Window::new(now)),
                dropped: AtomicBool::new(false),
            })
        }))
    }
}

static BUDGETS: Mutex<Option<Budgets>> = Mutex::new(None);

fn budgets<T>(f: impl FnOnce(&mut Budgets) -> T) -> T {
    f(lock(&BUDGETS).get_or_insert_with(Budgets::default))
}

/// Whether a line of `bytes` from `plugin` in `run_id` is kept, and the
/// report of earlier drops to write first.
fn admit(run_id: &str, plugin: &str, bytes: u64) -> (bool, Option<Dropped>) {
    let now = Instant::now();
    let (held, idle) = budgets(|budgets| {
        let run = budgets
            .runs
            .get(run_id)
            .and_then(|run| run.get(plugin))
            .cloned();
        (run, budgets.idle_of(plugin, now))
    });
    let mut run = held.as_deref().map(lock);
    if let Some(budget) = run.as_deref_mut().filter(|budget| budget.calls > 0) {
        return (budget.admit_in_call(bytes), None);
    }
    let mut window = lock(&idle.window);
    let report = if now.duration_since(window.start) >= Duration::from_secs(1) {
        idle.dropped.store(false, Ordering::Relaxed);
        window.close("", plugin, now)
    } else {
        None
    };
    let bound = if !window.kept.fits(
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
            window.drop_line(bound);
            idle.dropped.store(true, Ordering::Relaxed);
            (false, report)
        }
        None => {
            window.kept.add(bytes);
            if let Some(budget) = run.as_deref_mut() {
                budget.run.add(bytes);
            }
            (true, report)
        }
    }
}

/// One plugin's log bounds in one run, opened with the plugin's session
/// for the run and closed with it. Its hook calls' bounds ([`CallLogs`])
/// lock only this budget, which no other plugin or run shares.
pub(crate) struct RunLogs {
    run_id: String,
    plugin: String,
    budget: Arc<Mutex<RunBudget>>,
    idle: Arc<Idle>,
}

impl RunLogs {
    /// The bounds of `plugin` in run `run_id` (shared with any other
    /// session of the plugin in that run).
    pub(crate) fn open(run_id: &str, plugin: &str) -> RunLogs {
        let now = Instant::now();
        let (budget, idle) = budgets(|budgets| {
            let budget = budgets
                .runs
                .entry(run_id.to_string())
                .or_default()
                .entry(plugin.to_string())
                .or_insert_with(|| {
                    Arc::new(Mutex::new(RunBudget {
                        calls: 0,
                        call: Window::new(now),
                        run: Tally::default(),
                    }))
                });
            (Arc::clone(budget), budgets.idle_of(plugin, now))
        });
        RunLogs {
            run_id: run_id.to_string(),
            plugin: plugin.to_string(),
            budget,
            idle,
        }
    }

    /// A hook call begins: its plugin's first call in flight starts a new
    /// window, and what the plugin's lines outside its calls dropped is
    /// reported first.
    pub(crate) fn begin(&self, span: tracing::Span) -> CallLogs<'_> {
        let now = Instant::now();
        {
            let mut budget = lock(&self.budget);
            budget.calls += 1;
            if budget.calls == 1 {
                budget.call = Window::new(now);
            }
        }
        if self.idle.dropped.swap(false, Ordering::Relaxed) {
            if let Some(report) = lock(&self.idle.window).close("", &self.plugin, now) {
                report.emit();
            }
        }
        CallLogs { logs: self, span }
    }
}

impl Drop for RunLogs {
    /// The session ended: what its calls in flight dropped is reported, and
    /// the budget is forgotten once no other session of the run holds it.
    fn drop(&mut self) {
        budgets(|budgets| {
            if let Some(run) = budgets.runs.get_mut(&self.run_id) {
                // The map's and this one's: no other session holds it.
                if run
                    .get(&self.plugin)
                    .is_some_and(|held| Arc::ptr_eq(held, &self.budget))
                    && Arc::strong_count(&self.budget) <= 2
                {
                    run.remove(&self.plugin);
                }
                if run.is_empty() {
                    budgets.runs.remove(&self.run_id);
                }
            }
        });
        let report = lock(&self.budget)
            .call
            .close(&self.run_id, &self.plugin, Instant::now());
        if let Some(report) = report {
            report.emit();
        }
    }
}

/// The log bounds of one hook call: when dropped (the call ended, or was
/// abandoned) it reports in `span` the lines the call's bound dropped.
pub(crate) struct CallLogs<'a> {
    logs: &'a RunLogs,
    span: tracing::Span,
}

impl Drop for CallLogs<'_> {
    fn drop(&mut self) {
        let report = {
            let mut budget = lock(&self.logs.budget);
            budget.calls = budget.calls.saturating_sub(1);
            if budget.calls > 0 {
                return;
            }
            budget
                .call
                .close(&self.logs.run_id, &self.logs.plugin, Instant::now())
        };
        if let Some(report) = report {
            self.span.in_scope(|| report.emit());
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

    fn dropped_in_call(logs: &RunLogs) -> u64 {
        lock(&logs.budget).call.dropped
    }

    fn run_is_known(run_id: &str) -> bool {
        budgets(|b| b.runs.contains_key(run_id))
    }

    #[test]
    fn a_call_keeps_its_bound_of_lines_and_counts_the_rest() {
        let run = RunLogs::open("bound-run", "bound-plugin");
        let calls = run.begin(tracing::Span::none());
        let kept = (0..MAX_LOG_LINES_PER_CALL + 10)
            .filter(|_| admit("bound-run", "bound-plugin", 1).0)
            .count() as u64;
        assert_eq!(kept, MAX_LOG_LINES_PER_CALL);
        assert_eq!(dropped_in_call(&run), 10);
        // Bytes are bounded too.
        let bytes_run = RunLogs::open("bytes-run", "bound-plugin");
        let bytes = bytes_run.begin(tracing::Span::none());
        let big = 8 * 1024;
        let kept = (0..3000)
            .filter(|_| admit("bytes-run", "bound-plugin", big).0)
            .count() as u64;
        assert_eq!(kept, MAX_LOG_BYTES_PER_CALL / big);
        drop((calls, bytes));
        // The call ended: its window was reported and closed.
        assert_eq!(dropped_in_call(&run), 0);
        assert!(run_is_known("bound-run"));
        drop((run, bytes_run));
        assert!(!run_is_known("bound-run"));
        assert!(!run_is_known("bytes-run"));
    }

    #[test]
    fn a_run_s_budget_outlives_one_of_two_sessions_sharing_it() {
        let first = RunLogs::open("shared-run", "shared-plugin");
        let second = RunLogs::open("shared-run", "shared-plugin");
        assert!(Arc::ptr_eq(&first.budget, &second.budget));
        drop(first);
        assert!(run_is_known("shared-run"));
        let _call = second.begin(tracing::Span::none());
        assert!(admit("shared-run", "shared-plugin", 1).0);
        assert_eq!(lock(&second.budget).run.lines, 1);
    }

    #[test]
    fn lines_outside_calls_are_bounded_whatever_run_id_they_name() {
        let kept = (0..5 * MAX_LOG_LINES_PER_IDLE_SECOND)
            .filter(|i| admit(&format!("forged-{i}"), "idle-plugin", 1).0)
            .count() as u64;
        assert_eq!(kept, MAX_LOG_LINES_PER_IDLE_SECOND);
        // A run id a plugin names makes no budget of its own.
        assert!(budgets(|b| !b
            .runs
            .keys()
            .any(|r| r.starts_with("forged-"))));
    }

    #[test]
    fn a_call_reports_what_the_plugin_dropped_outside_calls_once() {
        let plugin = "idle-report-plugin";
        let dropped = (0..MAX_LOG_LINES_PER_IDLE_SECOND + 3)
            .filter(|_| !admit("", plugin, 1).0)
            .count();
        assert_eq!(dropped, 3);
        let run = RunLogs::open("idle-report-run", plugin);
        assert!(run.idle.dropped.load(Ordering::Relaxed));
        drop(run.begin(tracing::Span::none()));
        // Reported and closed: the window starts again.
        assert!(!run.idle.dropped.load(Ordering::Relaxed));
        assert_eq!(lock(&run.idle.window).dropped, 0);
        assert_eq!(lock(&run.idle.window).kept.lines, 0);
    }
}
