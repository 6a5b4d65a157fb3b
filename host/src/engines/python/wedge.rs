//! Whether the interpreter is wedged: held by code that never lets go of it.
//!
//! Python code gives the GIL up every few milliseconds between bytecodes,
//! and blocking calls (`time.sleep`, I/O) give it up while they wait. Code
//! that does neither (one long C call, such as `sum(range(10**18))`, or a
//! C extension in a loop) keeps it, and no exception raised into its thread
//! can stop it, because exceptions are only checked between bytecodes.
//!
//! Every host thread that takes the GIL (the workers, and the threads that
//! interrupt them) does so through a [`Waiter`], which records when it
//! started waiting. The interpreter counts as wedged while some thread has
//! waited longer than [`WEDGED_AFTER`]; then [`wedged`] says so, naming the
//! plugin whose job the host was trying to interrupt (a job past its
//! deadline that still holds the GIL), and the engine refuses new work at
//! once instead of queueing threads behind the GIL. The state is live: when
//! the holder lets go, the waits end and Python work is accepted again.

use crate::model::sync::lock;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};
use yohost_contract::Hook;

/// How long a thread may wait for the GIL before the interpreter counts as
/// wedged. Far above what a thread waits while others run Python code (the
/// GIL is handed over every 5 ms), and a second of code that never
/// releases the GIL already stalls every Python plugin.
pub(super) const WEDGED_AFTER: Duration = Duration::from_secs(1);

/// What a worker does for a plugin, to name it when it holds the
/// interpreter.
#[derive(Debug, Clone)]
pub(super) struct Task {
    /// The plugin's name.
    pub(super) plugin: Arc<str>,
    /// What is done.
    pub(super) work: Work,
}

/// What a [`Task`] does.
#[derive(Debug, Clone, Copy)]
pub(super) enum Work {
    /// Import the plugin.
    Import,
    /// Call one of its hooks.
    Hook(Hook),
    /// Forget its module.
    Unload,
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plugin = &self.plugin;
        match self.work {
            Work::Import => write!(f, "plugin '{plugin}' (its import)"),
            Work::Hook(hook) => write!(f, "plugin '{plugin}' (its {hook} hook)"),
            Work::Unload => write!(f, "plugin '{plugin}' (unloading it)"),
        }
    }
}

/// The interpreter is wedged: why Python work is refused.
#[derive(Debug, Clone)]
pub(super) struct Wedged {
    /// The jobs past their deadline whose interrupters have waited for the
    /// GIL as long, longest first (usually there is one: the holder).
    holders: Vec<Task>,
    /// How long the longest wait for the GIL has lasted.
    held_for: Duration,
}

impl std::fmt::Display for Wedged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held_for = Duration::from_millis(self.held_for.as_millis() as u64);
        if self.holders.is_empty() {
            return write!(
                f,
                "the Python interpreter has been held for {held_for:?} by code that never \
                 releases it (no Python import or hook is past its deadline: a thread a \
                 Python plugin started may hold it); Python plugins are unavailable until \
                 it lets go"
            );
        }
        let holders: Vec<String> = self.holders.iter().map(Task::to_string).collect();
        write!(
            f,
            "the Python interpreter is held by {}, which ran past its deadline and has not \
             released it for {held_for:?}; Python plugins are unavailable until it lets go",
            holders.join(" or ")
        )
    }
}

/// One thread's wait for the GIL.
pub(super) struct Waiter {
    /// When the wait started ([`now`]), 0 when not waiting.
    since: AtomicU64,
    /// The job this thread waits to interrupt, if it is an interrupter.
    interrupting: Option<Task>,
}

/// Every live waiter.
static WAITERS: Mutex<Vec<Weak<Waiter>>> = Mutex::new(Vec::new());

impl Waiter {
    /// A waiter for a worker thread, or (`interrupting`) for a thread that
    /// interrupts that task. An interrupter's wait starts now, before its
    /// thread runs: the holder it is stuck behind is then named even when
    /// a thread scheduled sooner started waiting after it was made.
    pub(super) fn new(interrupting: Option<Task>) -> Arc<Waiter> {
        let since = if interrupting.is_some() { now() } else { 0 };
        let waiter = Arc::new(Waiter {
            since: AtomicU64::new(since),
            interrupting,
        });
        let mut all = lock(&WAITERS);
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&waiter));
        waiter
    }

    /// Take the GIL on this thread (waiting for it, watched, from when the
    /// wait started) and run `f`.
    pub(super) fn attach<R>(&self, f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
        let _ = self
            .since
            .compare_exchange(0, now(), Ordering::SeqCst, Ordering::SeqCst);
        Python::attach(|py| {
            self.since.store(0, Ordering::SeqCst);
            f(py)
        })
    }

    /// Release the GIL while `f` runs, then take it again (watched).
    pub(super) fn detach<R: Send>(&self, py: Python<'_>, f: impl Send + FnOnce() -> R) -> R {
        let result = py.detach(|| {
            let result = f();
            self.since.store(now(), Ordering::SeqCst);
            result
        });
        self.since.store(0, Ordering::SeqCst);
        result
    }
}

/// Whether the interpreter is wedged now, and by whom. Cheap when it is
/// not: one pass over the waiters, no allocation.
pub(super) fn wedged() -> Option<Wedged> {
    wedged_at(now())
}

/// Whether the interpreter is wedged at `now` ([`now`]'s clock).
fn wedged_at(now: u64) -> Option<Wedged> {
    let waiters = lock(&WAITERS);
    let waits = || {
        waiters
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(move |w| match w.since.load(Ordering::SeqCst) {
                0 => None,
                since => Some((Duration::from_nanos(now.saturating_sub(since)), w)),
            })
    };
    let held_for = waits().map(|(waited, _)| waited).max()?;
    if held_for < WEDGED_AFTER {
        return None;
    }
    // An interrupter that has waited as long is stuck behind the holder; the
    // one stuck longest is most likely the holder's own.
    let mut interrupters: Vec<(Duration, Task)> = waits()
        .filter(|(waited, _)| *waited >= WEDGED_AFTER)
        .filter_map(|(waited, w)| Some((waited, w.interrupting.clone()?)))
        .collect();
    interrupters.sort_by_key(|(waited, _)| std::cmp::Reverse(*waited));
    let mut holders: Vec<Task> = Vec::new();
    for (_, task) in interrupters {
        if !holders.iter().any(|h| h.plugin == task.plugin) {
            holders.push(task);
        }
    }
    Some(Wedged { holders, held_for })
}

/// Nanoseconds since the first use, plus one (0 means "not waiting").
fn now() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(plugin: &str, work: Work) -> Task {
        Task {
            plugin: plugin.into(),
            work,
        }
    }

    /// The time the test looks at the waiters: late enough that every wait
    /// below started after the clock's start.
    fn at() -> u64 {
        now() + (WEDGED_AFTER * 4).as_nanos() as u64
    }

    /// A waiter that has waited `waited` by [`at`].
    fn waiting(interrupting: Option<Task>, waited: Duration, at: u64) -> Arc<Waiter> {
        let waiter = Waiter::new(interrupting);
        waiter
            .since
            .store(at - waited.as_nanos() as u64, Ordering::SeqCst);
        waiter
    }

    #[test]
    fn a_long_wait_wedges_and_names_the_jobs_that_could_not_be_interrupted() {
        let at = at();
        let quick = Some(task("quick", Work::Import));
        let short = waiting(quick, Duration::from_millis(10), at);
        assert!(
            wedged_at(at).is_none(),
            "short waits are the GIL changing hands"
        );

        let worker = waiting(None, WEDGED_AFTER * 2, at);
        let unknown = wedged_at(at).expect("wedged").to_string();
        assert!(
            unknown.contains("no Python import or hook is past its deadline"),
            "{unknown}"
        );

        let first = waiting(Some(task("holder", Work::Import)), WEDGED_AFTER * 3, at);
        let again = waiting(
            Some(task("holder", Work::Hook(Hook::BeforeTool))),
            WEDGED_AFTER,
            at,
        );
        let named = wedged_at(at).expect("wedged").to_string();
        assert!(
            named.starts_with(
                "the Python interpreter is held by plugin 'holder' (its import), which"
            ),
            "{named}"
        );
        assert!(named.contains("for 3s"), "{named}");

        for waiter in [&short, &worker, &first, &again] {
            waiter.since.store(0, Ordering::SeqCst);
        }
        assert!(wedged_at(at).is_none(), "the state is live");
    }
}
