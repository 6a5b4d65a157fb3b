//! Threads of a plugin's own for calls that block: native dylib code and
//! synchronous Wasm calls.
//!
//! A call's closure runs on a worker with the caller's tracing subscriber
//! and span, so its log lines land where the caller's would (once any
//! subscriber was ever set: before that there is nothing to route). The
//! call is handed over as the `handoff` module says: a sleeping worker is
//! woken on the caller's CPU, and calls back to back find it awake; an idle
//! worker sleeps and costs nothing.
//!
//! A plugin's calls take the worker that answered last, when it is free, so
//! one run's calls keep finding the same warm thread. A call that comes
//! while every worker is busy (another run's call, or a parallel tool call)
//! starts one more, rather than queueing behind a call that may be slow:
//! one run's slow call never makes another run's call wait, or time out.
//! At most `MAX_IDLE` workers wait for calls; more end when they are done.
//!
//! A call that is abandoned (its deadline passed, its run was cancelled)
//! retires its worker: code that cannot be interrupted may keep that thread
//! forever, so it never takes another call. Workers are plain threads, not
//! the async runtime's blocking pool, so a stuck one never holds up the
//! runtime's shutdown.

use crate::call::handoff::{Handoff, Pace};
use crate::model::sync::lock;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// The most workers of one plugin that stay waiting for calls.
const MAX_IDLE: usize = 4;

/// Why a worker could not run a call.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WorkerError {
    /// The thread could not be started.
    #[error("cannot start a worker thread: {0}")]
    Spawn(String),
    /// The worker stopped before answering (the job panicked).
    #[error("its worker thread stopped before answering")]
    Stopped,
}

/// A plugin's worker threads, started as calls need them; a worker is
/// retired when a call on it is abandoned.
pub struct WorkerSlot {
    name: String,
    /// The free workers, the one that answered last at the end.
    idle: Mutex<Vec<Worker>>,
}

/// A started worker: where its jobs go, and how to hand them over.
struct Worker {
    jobs: Sender<Job>,
    handoff: Arc<Handoff>,
}

impl Drop for Worker {
    /// The worker is given up on, or not kept: its thread ends once its job
    /// is done (its queue is closed), and runs unpinned meanwhile.
    fn drop(&mut self) {
        self.handoff.release();
    }
}

impl WorkerSlot {
    /// A slot whose threads are named `yohost-<name>`.
    pub fn new(name: &str) -> Self {
        Self {
            name: format!("yohost-{name}"),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Run `job` on a free worker and wait for its result.
    pub async fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, WorkerError> {
        let (reply, answer) = oneshot::channel();
        let boxed: Job = match CallerTracing::capture() {
            None => Box::new(move || {
                let _ = reply.send(job());
            }),
            Some(tracing) => Box::new(move || {
                let _ = reply.send(tracing.enter(job));
            }),
        };
        let (worker, wait) = self.send(boxed)?;
        // Dropped with this future if the caller stops waiting: the worker
        // is then retired, never given another call.
        let busy = Busy(Some(worker));
        let result = wait.reply(answer).await.ok_or(WorkerError::Stopped);
        if result.is_ok() {
            self.give_back(busy);
        }
        result
    }

    /// Send `job` to a free worker, started if there is none, and return it
    /// with how to wait for its reply.
    fn send(&self, job: Job) -> Result<(Worker, crate::call::handoff::Wait), WorkerError> {
        let free = lock(&self.idle).pop();
        let worker = match free {
            Some(worker) => worker,
            None => start(&self.name)?,
        };
        let wait = worker.handoff.prepare();
        match worker.jobs.send(job) {
            Ok(()) => Ok((worker, wait)),
            Err(std::sync::mpsc::SendError(job)) => {
                // The worker died: start a fresh one for this job.
                let fresh = start(&self.name)?;
                let wait = fresh.handoff.prepare();
                fresh.jobs.send(job).map_err(|_| WorkerError::Stopped)?;
                Ok((fresh, wait))
            }
        }
    }

    /// Make the worker of an answered call free again.
    fn give_back(&self, mut busy: Busy) {
        if let Some(worker) = busy.0.take() {
            let mut idle = lock(&self.idle);
            if idle.len() < MAX_IDLE {
                idle.push(worker);
            }
        }
    }
}

/// The worker of a call in flight; dropped without being given back, it
/// is retired.
struct Busy(Option<Worker>);

/// The caller's tracing subscriber and span, for a call's log lines to land
/// where the caller's would.
struct CallerTracing {
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

impl CallerTracing {
    /// The caller's subscriber and span; `None` when no subscriber was ever
    /// set, so a call pays nothing for tracing that nobody listens to.
    fn capture() -> Option<Self> {
        tracing::dispatcher::has_been_set().then(|| Self {
            dispatch: tracing::dispatcher::get_default(Clone::clone),
            span: tracing::Span::current(),
        })
    }

    /// Run `job` under the caller's subscriber, inside its span.
    fn enter<R>(self, job: impl FnOnce() -> R) -> R {
        tracing::dispatcher::with_default(&self.dispatch, || self.span.in_scope(job))
    }
}

fn start(name: &str) -> Result<Worker, WorkerError> {
    let (jobs, queue) = std::sync::mpsc::channel::<Job>();
    let handoff = Arc::new(Handoff::default());
    let its_handoff = Arc::clone(&handoff);
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            // `None` once the worker is retired (its sender dropped).
            let mut pace = Pace::on_this_thread(its_handoff);
            while let Some(job) = pace.recv(&queue) {
                job();
            }
        })
        .map_err(|e| WorkerError::Spawn(e.to_string()))?;
    Ok(Worker { jobs, handoff })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_job_runs_on_the_worker_and_an_abandoned_one_retires_it() {
        let slot = WorkerSlot::new("test");
        let name = slot
            .run(|| std::thread::current().name().map(String::from))
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("yohost-test"));
        let stuck = tokio::time::timeout(
            Duration::from_millis(50),
            slot.run(|| {
                std::thread::sleep(Duration::from_secs(3600));
            }),
        )
        .await;
        assert!(stuck.is_err(), "the caller stops waiting");
        // A new worker serves the next call, though the old one is stuck.
        assert_eq!(slot.run(|| 7).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn a_reply_slower_than_the_spin_is_still_awaited() {
        let slot = WorkerSlot::new("slow");
        let slow = slot.run(|| {
            std::thread::sleep(crate::call::handoff::SPIN * 20);
            5
        });
        assert_eq!(slow.await.unwrap(), 5);
    }

    #[tokio::test]
    async fn calls_one_after_another_take_the_same_worker() {
        let slot = WorkerSlot::new("reused");
        let first = slot.run(|| std::thread::current().id()).await.unwrap();
        for _ in 0..5 {
            assert_eq!(
                slot.run(|| std::thread::current().id()).await.unwrap(),
                first
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_call_never_holds_up_another() {
        let slot = Arc::new(WorkerSlot::new("busy"));
        // The slow call runs until the quick one has answered: queued
        // behind it, the quick call could never answer. Shown by order, not
        // by the clock; the timeouts only keep a failure from hanging, and
        // are generous so a loaded machine does not fail it.
        let (began, has_begun) = tokio::sync::oneshot::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let slow = tokio::spawn({
            let slot = Arc::clone(&slot);
            async move {
                slot.run(move || {
                    let _ = began.send(());
                    released.recv_timeout(Duration::from_secs(60)).is_ok()
                })
                .await
            }
        });
        // The slow call has reached its worker first.
        tokio::time::timeout(Duration::from_secs(30), has_begun)
            .await
            .expect("the slow call started")
            .unwrap();
        let quick = tokio::time::timeout(Duration::from_secs(30), slot.run(|| 7)).await;
        assert_eq!(quick.expect("not queued behind the slow call").unwrap(), 7);
        release.send(()).unwrap();
        assert!(
            slow.await.unwrap().unwrap(),
            "the slow call ran until released"
        );
    }

    #[tokio::test]
    async fn a_panicking_job_is_an_error_and_the_next_job_runs() {
        let slot = WorkerSlot::new("panics");
        assert!(slot.run(|| panic!("job panicked")).await.is_err());
        assert_eq!(slot.run(|| 1).await.unwrap(), 1);
    }
}
