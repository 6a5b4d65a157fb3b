//! A thread of a plugin's own for calls that block: native dylib code and
//! synchronous Wasm calls.
//!
//! A call's closure runs on the worker with the caller's tracing subscriber
//! and span, so its log lines land where the caller's would (once any
//! subscriber was ever set: before that there is nothing to route). The
//! call is handed over as the `handoff` module says: a sleeping worker is
//! woken on the caller's CPU, and calls back to back find it awake; an idle
//! worker sleeps and costs nothing.
//!
//! A call that is abandoned (its deadline passed, its run was cancelled)
//! retires its worker: code that cannot be interrupted may keep that thread
//! forever, so the next call starts a new one. Workers are plain threads,
//! not the async runtime's blocking pool, so a stuck one never holds up the
//! runtime's shutdown.

use crate::handoff::{Handoff, Pace};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

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

/// A lazily started worker thread, retired when a call is abandoned.
pub struct WorkerSlot {
    name: String,
    worker: Mutex<Option<Worker>>,
}

/// A started worker: where its jobs go, and how to hand them over.
struct Worker {
    jobs: Sender<Job>,
    handoff: Arc<Handoff>,
}

impl WorkerSlot {
    /// A slot whose threads are named `yohost-<name>`.
    pub fn new(name: &str) -> Self {
        Self {
            name: format!("yohost-{name}"),
            worker: Mutex::new(None),
        }
    }

    /// Run `job` on the worker and wait for its result.
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
        let wait = self.send(boxed)?;
        let mut guard = Abandoned {
            slot: self,
            done: false,
        };
        let result = wait.reply(answer).await.ok_or(WorkerError::Stopped);
        guard.done = true;
        if result.is_err() {
            self.retire();
        }
        result
    }

    /// Send `job` to the worker, started if there is none, and say how to
    /// wait for its reply.
    fn send(&self, job: Job) -> Result<crate::handoff::Wait, WorkerError> {
        let mut worker = self.worker.lock().unwrap_or_else(|e| e.into_inner());
        let current = match worker.take() {
            Some(current) => current,
            None => start(&self.name)?,
        };
        let wait = current.handoff.prepare();
        let current = match current.jobs.send(job) {
            Ok(()) => current,
            Err(std::sync::mpsc::SendError(job)) => {
                // The worker died: start a fresh one for this job.
                let fresh = start(&self.name)?;
                fresh.jobs.send(job).map_err(|_| WorkerError::Stopped)?;
                fresh
            }
        };
        *worker = Some(current);
        Ok(wait)
    }

    /// Give up on the worker: code that cannot be interrupted may keep it
    /// forever, so the next call starts a new one.
    fn retire(&self) {
        let retired = self.worker.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(retired) = retired {
            retired.handoff.release();
        }
    }
}

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

/// Retires the worker if the call it guards is dropped before it ends.
struct Abandoned<'a> {
    slot: &'a WorkerSlot,
    done: bool,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.slot.retire();
        }
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
            std::thread::sleep(crate::handoff::SPIN * 20);
            5
        });
        assert_eq!(slow.await.unwrap(), 5);
    }

    #[tokio::test]
    async fn a_panicking_job_is_an_error_and_the_next_job_runs() {
        let slot = WorkerSlot::new("panics");
        assert!(slot.run(|| panic!("job panicked")).await.is_err());
        assert_eq!(slot.run(|| 1).await.unwrap(), 1);
    }
}
