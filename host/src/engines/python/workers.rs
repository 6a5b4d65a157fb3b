//! The threads Python code runs on, and stopping code that runs too long.
//!
//! Hooks never run on the async runtime's threads. Each job goes to an idle
//! worker thread (a new one is started when none is idle). A worker keeps
//! its Python thread state, and its asyncio loop, from job to job, and holds
//! the GIL only while it runs a job: it waits for the next one detached.
//!
//! [`Ticket::interrupt`] stops a job that is still running. It cancels the
//! asyncio task the worker is awaiting, if any (which wakes a loop blocked in
//! `select` and lets the coroutine clean up), and then, at once or after
//! [`CANCEL_GRACE`], raises `Interrupted` into the worker's thread
//! (`PyThreadState_SetAsyncExc`), which Python checks between bytecodes:
//! that stops code spinning in Python, `async` or not. A worker whose
//! job was interrupted is retired, with its loop, once the job returns: the
//! job may have been stopped half-way through the loop's own bookkeeping.
//! Code that does not return to the interpreter cannot be stopped: a C
//! extension in a tight loop, or a blocking call such as `time.sleep`,
//! `socket.recv` or `Lock.acquire`, keeps its worker until it returns, and
//! the exception is raised then. Later calls get other workers meanwhile.
//!
//! A job given up on before it started (its worker still waiting for the
//! GIL) never runs. No thread that serves a caller waits for the GIL: every
//! wait is a worker's or an interrupter's, watched by [`wedge`]; while the
//! interpreter is wedged, [`submit`] refuses new jobs at once.

use super::interpreter::{host_module, start_once};
use super::wedge::{self, Task, Waiter, Wedged};
use crate::call::handoff::{Handoff, Pace, Wait};
use crate::model::sync::lock;
use pyo3::prelude::*;
use std::os::raw::c_long;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

/// What a job hands back to deliver its result once its worker is free.
pub(super) type Deliver = Box<dyn FnOnce() + Send>;

/// Python work: given the worker's Python side (a `_yohost_host.Worker`),
/// run and return how to deliver the result.
pub(super) type Job = Box<dyn for<'py> FnOnce(Python<'py>, &Bound<'py, PyAny>) -> Deliver + Send>;

/// Idle workers kept for later jobs; more than this many idle ones exit.
const MAX_IDLE_WORKERS: usize = 8;

/// How long a cancelled coroutine has to finish before `Interrupted` is
/// raised into its thread.
const CANCEL_GRACE: Duration = Duration::from_millis(100);

/// Each worker's stack: Python recursion needs more than Rust's default.
const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());
/// Why Python could not start, once a worker found out.
static START_FAILED: OnceLock<String> = OnceLock::new();
static NEXT_JOB: AtomicU64 = AtomicU64::new(1);

/// A worker thread: where to send it jobs, and what it is doing.
#[derive(Clone)]
struct Worker {
    jobs: mpsc::Sender<(u64, Job)>,
    state: Arc<WorkerState>,
}

struct WorkerState {
    /// The thread's Python thread id (`threading.get_ident()`).
    ident: AtomicU64,
    /// The job running now, 0 when none. Changed only with the GIL held.
    running: AtomicU64,
    /// The last job given up on: if it has not started, it never will.
    abandoned: AtomicU64,
    /// The thread's waits for the GIL.
    waiter: Arc<Waiter>,
    /// Set (with the GIL held) when the running job was interrupted.
    interrupted: AtomicBool,
    /// The worker's Python side.
    python: OnceLock<Py<PyAny>>,
    /// How jobs reach the thread.
    handoff: Arc<Handoff>,
}

/// A submitted job, to interrupt it.
pub(super) struct Ticket {
    state: Arc<WorkerState>,
    job: u64,
    task: Task,
    /// How to wait for the job's result.
    pub(super) wait: Wait,
}

/// Why a job was not submitted.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unavailable {
    /// The interpreter is wedged.
    #[error("{0}")]
    Wedged(Wedged),
    /// No worker thread could be started.
    #[error("cannot start a Python worker thread: {0}")]
    NoThread(#[from] std::io::Error),
}

/// Run `job` (doing `task`) on a worker thread, unless the interpreter is
/// wedged.
pub(super) fn submit(task: Task, job: Job) -> Result<Ticket, Unavailable> {
    if let Some(wedged) = wedge::wedged() {
        return Err(Unavailable::Wedged(wedged));
    }
    let id = NEXT_JOB.fetch_add(1, Ordering::Relaxed);
    let idle = lock(&IDLE).pop();
    let worker = match idle {
        Some(worker) => worker,
        None => spawn()?,
    };
    // Idle workers are alive; a new one's thread is gone only if it could
    // not start Python.
    let wait = worker.state.handoff.prepare();
    worker
        .jobs
        .send((id, job))
        .map_err(|_| std::io::Error::other("the Python worker thread is gone"))?;
    Ok(Ticket {
        state: worker.state,
        job: id,
        task,
        wait,
    })
}

fn spawn() -> std::io::Result<Worker> {
    let (jobs, queue) = mpsc::channel();
    let worker = Worker {
        jobs,
        state: Arc::new(WorkerState {
            ident: AtomicU64::new(0),
            running: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            interrupted: AtomicBool::new(false),
            python: OnceLock::new(),
            waiter: Waiter::new(None),
            handoff: Arc::new(Handoff::default()),
        }),
    };
    let this = worker.clone();
    std::thread::Builder::new()
        .name("yohost-python".into())
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || {
            start_once();
            let waiter = Arc::clone(&this.state.waiter);
            waiter.attach(|py| serve(py, this, Mutex::new(queue)))
        })?;
    Ok(worker)
}

/// The worker thread: run jobs until it is retired (interrupted, or not
/// needed as an idle worker).
fn serve(py: Python<'_>, this: Worker, queue: Mutex<mpsc::Receiver<(u64, Job)>>) {
    let python = match host_module(py).and_then(|host| {
        host.bind(py)
            .call_method0("Worker")
            .map_err(|e| e.to_string())
    }) {
        Ok(python) => python,
        Err(e) => {
            let _ = START_FAILED.set(e);
            return; // dropping the queue fails the jobs sent here
        }
    };
    // SAFETY: plain query of the calling thread's id.
    let ident = unsafe { pyo3::ffi::PyThread_get_thread_ident() };
    this.state.ident.store(ident as u64, Ordering::SeqCst);
    let _ = this.state.python.set(python.clone().unbind());
    let waiter = &this.state.waiter;
    let mut pace = Pace::on_this_thread(Arc::clone(&this.state.handoff));
    loop {
        let next = waiter.detach(py, || pace.recv(&lock(&queue)).ok_or(()));
        let Ok((id, job)) = next else { return };
        this.state.running.store(id, Ordering::SeqCst);
        // Given up on while this thread waited for the GIL: never run it.
        let wanted = this.state.abandoned.load(Ordering::SeqCst) != id;
        let deliver = wanted.then(|| job(py, &python));
        this.state.running.store(0, Ordering::SeqCst);
        // SAFETY: clearing this thread's pending async exception, if the
        // interrupt came as the job was returning; the GIL is held.
        unsafe { pyo3::ffi::PyThreadState_SetAsyncExc(ident as c_long, std::ptr::null_mut()) };
        let retire = this.state.interrupted.load(Ordering::SeqCst) || {
            let mut idle = lock(&IDLE);
            let full = idle.len() >= MAX_IDLE_WORKERS;
            if !full {
                idle.push(this.clone());
            }
            full
        };
        if let Some(deliver) = deliver {
            deliver();
        }
        if retire {
            return;
        }
    }
}

/// Why a job's worker went away without delivering its result.
pub(super) fn lost() -> String {
    match START_FAILED.get() {
        Some(e) => e.clone(),
        None => "its Python worker thread failed".into(),
    }
}

impl Ticket {
    /// Give up on the job: if it has not started it never will, and if it
    /// is running it is stopped. Never waits for the GIL: the interrupt is
    /// sent from a thread of its own, whose wait [`wedge`] watches (a job
    /// that holds the GIL past its deadline wedges the interpreter).
    pub(super) fn interrupt(&self) {
        // The worker stores `running` before it reads `abandoned`, and this
        // stores `abandoned` before it reads `running`: at least one of
        // them sees the other, so the job is either skipped or interrupted.
        self.state.abandoned.store(self.job, Ordering::SeqCst);
        if self.state.running.load(Ordering::SeqCst) != self.job {
            return;
        }
        // It may not come back: let it run on any CPU.
        self.state.handoff.release();
        let state = Arc::clone(&self.state);
        let job = self.job;
        let waiter = Waiter::new(Some(self.task.clone()));
        let sent = std::thread::Builder::new()
            .name("yohost-python-interrupt".into())
            .spawn(move || waiter.attach(|py| interrupt_now(py, &state, job, &waiter)));
        if let Err(e) = sent {
            tracing::error!("cannot interrupt a Python hook: {e}");
        }
    }

    /// Whether the job is running on its worker now (not waiting to
    /// start, not finished).
    pub(super) fn running(&self) -> bool {
        self.state.running.load(Ordering::SeqCst) == self.job
    }
}

fn interrupt_now(py: Python<'_>, state: &WorkerState, job: u64, waiter: &Waiter) {
    if state.running.load(Ordering::SeqCst) != job {
        return;
    }
    state.interrupted.store(true, Ordering::SeqCst);
    let cancelled = state.python.get().is_some_and(|python| {
        python
            .bind(py)
            .call_method0("interrupt")
            .and_then(|cancelled| cancelled.extract::<bool>())
            .unwrap_or(false)
    });
    if cancelled {
        // Let the coroutine see the cancellation and clean up first.
        waiter.detach(py, || std::thread::sleep(CANCEL_GRACE));
    }
    raise_interrupted(py, state, job);
}

/// Raise `Interrupted` into the worker's thread if `job` still runs there.
fn raise_interrupted(py: Python<'_>, state: &WorkerState, job: u64) {
    let Ok(host) = host_module(py) else { return };
    let Ok(interrupted) = host.bind(py).getattr("Interrupted") else {
        return;
    };
    // With the GIL held the job cannot end between this check and the
    // exception: nothing in between runs Python code.
    if state.running.load(Ordering::SeqCst) != job {
        return;
    }
    let ident = state.ident.load(Ordering::SeqCst);
    // SAFETY: the GIL is held and `interrupted` is a live exception class.
    unsafe { pyo3::ffi::PyThreadState_SetAsyncExc(ident as c_long, interrupted.as_ptr()) };
}
