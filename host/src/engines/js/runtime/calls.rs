//! Call bookkeeping: the calls in flight on the engine thread, their
//! timers and the work they started, and the state the host callbacks
//! share with the loop.

use super::inbox::{Message, Request};
use crate::call::error::CallError;
use crate::call::progress::ProgressReporter;
use crate::call::ui::UserInterface;
use crate::call::ui_requests::ask;
use crate::engines::js::glue::{log_line, Caller};
use crate::engines::js::watch::Watches;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use yohost_contract::Hook;

/// A call in flight on the engine thread.
pub(super) struct InFlight {
    pub(super) hook: Hook,
    pub(super) run_id: String,
    pub(super) deadline: Instant,
    pub(super) cancel: CancellationToken,
    pub(super) reply: oneshot::Sender<Result<Value, CallError>>,
    pub(super) caller: Caller,
    /// The app's user interface the call may ask (`None`: headless).
    pub(super) ui: Option<Arc<dyn UserInterface>>,
    /// Where its progress goes (`None`: no one listens).
    pub(super) progress: Option<ProgressReporter>,
}

/// How a call settled on the engine thread.
pub(super) enum Settled {
    /// The reply, as JSON text.
    Replied(String),
    /// The plugin's code threw, or its promise rejected: its own answer.
    Threw(String),
    /// The reply cannot be turned into JSON.
    Unreadable(String),
    /// The driver failed before the plugin's code could catch anything.
    Broke(String),
}

/// A call the host gave up on: its log lines still go to its caller's
/// subscriber and span.
pub(super) struct Expired {
    pub(super) id: u64,
    /// Its run was cancelled (else its deadline passed).
    pub(super) cancelled: bool,
    pub(super) caller: Caller,
}

/// A pending timer: when it is due, its id, and the call that set it.
pub(super) type Timer = (Instant, u64, Option<u64>);

/// A process the plugin started that has not replied yet.
pub(super) struct Running {
    /// The call that started it, if known.
    pub(super) owner: Option<u64>,
    /// Set to kill it.
    pub(super) kill: Arc<AtomicBool>,
}

/// State the host callbacks (called from JavaScript) share with the loop.
/// The loop never holds a borrow while JavaScript runs.
pub(super) struct Shared {
    /// The name log lines carry.
    pub(super) name: RefCell<String>,
    pub(super) calls: RefCell<HashMap<u64, InFlight>>,
    /// Calls that settled, not yet answered.
    pub(super) settled: RefCell<Vec<(u64, Settled)>>,
    /// Pending timers, earliest first.
    pub(super) timers: RefCell<BinaryHeap<Reverse<Timer>>>,
    /// The call whose code is running, when the loop knows it.
    pub(super) current: Cell<Option<u64>>,
    /// Processes started and not yet replied, by id.
    pub(super) running: RefCell<HashMap<u64, Running>>,
    pub(super) next_exec: Cell<u64>,
    /// Where a process's reply is sent (this thread's inbox).
    pub(super) wake: mpsc::Sender<Message>,
    /// While the plugin loads or unloads (no call in flight), when a
    /// process it starts must end.
    pub(super) phase_deadline: Cell<Option<Instant>>,
    /// Calls that arrived while the engine was being rebuilt.
    pub(super) backlog: RefCell<VecDeque<Box<Request>>>,
    /// Every [`Instance`](super::Instance) went while the engine was being rebuilt.
    pub(super) closed: Cell<bool>,
    /// The files the plugin watches, and their events.
    pub(super) watches: Watches,
}

impl Shared {
    pub(super) fn new(wake: mpsc::Sender<Message>) -> Self {
        let watched = wake.clone();
        Shared {
            watches: Watches::new(move || {
                let _ = watched.send(Message::Watched);
            }),
            name: RefCell::default(),
            calls: RefCell::default(),
            settled: RefCell::default(),
            timers: RefCell::default(),
            current: Cell::default(),
            running: RefCell::default(),
            next_exec: Cell::default(),
            wake,
            phase_deadline: Cell::default(),
            backlog: RefCell::default(),
            closed: Cell::default(),
        }
    }

    /// When a process started now must end, and which cancels stop it: the
    /// attributed call's; with several calls in flight and none known, the
    /// earliest deadline and every cancel; while loading or unloading, the
    /// phase's deadline. `None` when nothing bounds it.
    pub(super) fn exec_bounds(&self) -> Option<(Option<u64>, Instant, Vec<CancellationToken>)> {
        let calls = self.calls.borrow();
        if let Some(owner) = self
            .attributed()
            .and_then(|id| calls.get(&id).map(|c| (id, c)))
        {
            let (id, call) = owner;
            return Some((Some(id), call.deadline, vec![call.cancel.clone()]));
        }
        if let Some(deadline) = calls.values().map(|c| c.deadline).min() {
            let cancels = calls.values().map(|c| c.cancel.clone()).collect();
            return Some((None, deadline, cancels));
        }
        self.phase_deadline.get().map(|at| (None, at, Vec::new()))
    }

    /// The id of a new process or request, and the flag that stops it.
    pub(super) fn next_work(&self) -> (u64, Arc<AtomicBool>) {
        let id = self.next_exec.get() + 1;
        self.next_exec.set(id);
        (id, Arc::new(AtomicBool::new(false)))
    }

    /// Ask the app's user interface of call `id` the request `request`
    /// (JSON, see [`ask`]). Returns the work's id, whose reply comes back
    /// through the inbox as [`Message::Exec`]; a call without one is
    /// answered headless.
    pub(super) fn ask(&self, id: u64, request: String) -> Result<u64, String> {
        let (ui, run_id) = {
            let calls = self.calls.borrow();
            let call = calls
                .get(&id)
                .ok_or("the call that asks has ended: nobody is asked")?;
            (call.ui.clone(), call.run_id.clone())
        };
        let (work, kill) = self.next_work();
        self.running.borrow_mut().insert(
            work,
            Running {
                owner: Some(id),
                kill,
            },
        );
        let wake = self.wake.clone();
        let plugin = self.name.borrow().clone();
        ask(ui, plugin, run_id, &request, move |reply| {
            let _ = wake.send(Message::Exec(work, reply));
        });
        Ok(work)
    }

    /// Pass call `id`'s progress `message` to its listener, if it has one
    /// and is still in flight.
    pub(super) fn progress(&self, id: u64, message: &str) {
        if let Some(reporter) = self
            .calls
            .borrow()
            .get(&id)
            .and_then(|c| c.progress.as_ref())
        {
            reporter.report(message);
        }
    }

    /// Kill every process still running.
    pub(super) fn kill_running(&self) {
        for process in self.running.borrow_mut().drain() {
            process.1.kill.store(true, Ordering::Relaxed);
        }
    }

    /// The call running code belongs to: the one the loop entered, else the
    /// only one in flight.
    pub(super) fn attributed(&self) -> Option<u64> {
        self.current.get().or_else(|| {
            let calls = self.calls.borrow();
            (calls.len() == 1).then(|| *calls.keys().next().expect("one call"))
        })
    }

    /// Write a plugin log line for `call` (or the attributed call).
    pub(super) fn log(
        &self,
        call: Option<u64>,
        run_id: Option<String>,
        level: &str,
        message: &str,
    ) {
        let name = self.name.borrow();
        let calls = self.calls.borrow();
        let owner = call
            .or_else(|| self.attributed())
            .and_then(|id| calls.get(&id))
            .map(|owner| (&owner.caller, owner.run_id.as_str()));
        // Outside a call, this thread's subscriber is the loader's.
        log_line(owner, None, run_id, &name, level, message);
    }

    /// When the loop must next wake: the next timer or call deadline.
    pub(super) fn next_wake(&self) -> Option<Instant> {
        let timer = self.timers.borrow().peek().map(|Reverse((due, ..))| *due);
        let deadline = self.earliest_deadline();
        match (timer, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub(super) fn earliest_deadline(&self) -> Option<Instant> {
        self.calls.borrow().values().map(|c| c.deadline).min()
    }

    /// Answer call `id`, if it is still in flight.
    pub(super) fn answer(&self, id: u64, outcome: impl FnOnce(Hook) -> Result<Value, CallError>) {
        let taken = self.calls.borrow_mut().remove(&id);
        if let Some(call) = taken {
            let _ = call.reply.send(outcome(call.hook));
        }
    }

    /// Stop serving every call whose deadline passed or whose run was
    /// cancelled, dropping its promise. The host has stopped waiting for it
    /// (the deadline is enforced in [`crate::run::invoke`], which reports the
    /// timeout); this frees the engine. Returns them, so that their
    /// `ctx.signal` can abort.
    pub(super) fn expire(&self, now: Instant) -> Vec<Expired> {
        let gone: Vec<(u64, bool)> = self
            .calls
            .borrow()
            .iter()
            .filter(|(_, c)| c.deadline <= now || c.cancel.is_cancelled())
            .map(|(id, c)| (*id, c.cancel.is_cancelled()))
            .collect();
        gone.into_iter()
            .filter_map(|(id, cancelled)| {
                let call = self.calls.borrow_mut().remove(&id)?;
                let _ = call.reply.send(Err(if cancelled {
                    CallError::Cancelled
                } else {
                    CallError::Timeout(Duration::ZERO)
                }));
                Some(Expired {
                    id,
                    cancelled,
                    caller: call.caller,
                })
            })
            .collect()
    }

    /// Fail every call in flight with `why`.
    pub(super) fn fail_all(&self, why: &str) {
        let ids: Vec<u64> = self.calls.borrow().keys().copied().collect();
        for id in ids {
            self.answer(id, |_| Err(CallError::Crashed(why.to_string())));
        }
    }
}
