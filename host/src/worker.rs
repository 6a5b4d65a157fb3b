//! A thread of a plugin's own for calls that block: native dylib code and
//! synchronous Wasm calls.
//!
//! A call's closure runs on the worker with the caller's tracing subscriber
//! and span, so its log lines land where the caller's would (once any
//! subscriber was ever set: before that there is nothing to route). The caller
//! spins for up to [`SPIN`] for the reply, and the worker for its next job
//! for as long as [`Pace`] learnt from the last wait (up to [`MAX_SPIN`]),
//! before sleeping, so calls in quick succession cross threads without
//! waking a sleeping thread (which costs microseconds); an idle worker
//! sleeps and costs nothing.
//!
//! A call that is abandoned (its deadline passed, its run was cancelled)
//! retires its worker: code that cannot be interrupted may keep that thread
//! forever, so the next call starts a new one. Workers are plain threads,
//! not the async runtime's blocking pool, so a stuck one never holds up the
//! runtime's shutdown.

use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long a worker spins for its next job, and a caller for its reply.
pub const SPIN: Duration = Duration::from_micros(50);

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
    jobs: Mutex<Option<Sender<Job>>>,
}

impl WorkerSlot {
    /// A slot whose threads are named `yohost-<name>`.
    pub fn new(name: &str) -> Self {
        Self {
            name: format!("yohost-{name}"),
            jobs: Mutex::new(None),
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
        self.send(boxed)?;
        let mut guard = Abandoned {
            slot: self,
            done: false,
        };
        let result = reply_spinning(answer).await.ok_or(WorkerError::Stopped);
        guard.done = true;
        if result.is_err() {
            self.retire();
        }
        result
    }

    fn send(&self, job: Job) -> Result<(), WorkerError> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if jobs.is_none() {
            *jobs = Some(start(&self.name)?);
        }
        let Some(sender) = jobs.as_ref() else {
            return Err(WorkerError::Stopped);
        };
        if let Err(std::sync::mpsc::SendError(job)) = sender.send(job) {
            // The worker died: start a fresh one for this job.
            let fresh = start(&self.name)?;
            fresh.send(job).map_err(|_| WorkerError::Stopped)?;
            *jobs = Some(fresh);
        }
        Ok(())
    }

    fn retire(&self) {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
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

fn start(name: &str) -> Result<Sender<Job>, WorkerError> {
    let (jobs, queue) = std::sync::mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            // `None` once the worker is retired (its sender dropped).
            let mut pace = Pace::default();
            while let Some(job) = pace.recv(&queue) {
                job();
            }
        })
        .map_err(|e| WorkerError::Spawn(e.to_string()))?;
    Ok(jobs)
}

/// The longest a thread spins for its next call, when calls have been
/// coming that fast.
pub const MAX_SPIN: Duration = Duration::from_micros(250);

/// How long a thread that serves calls spins for the next one before it
/// sleeps, learnt from the last wait: one and a half times as long as the
/// last call took to come, between [`SPIN`] and [`MAX_SPIN`]; [`SPIN`]
/// after a wait longer than [`MAX_SPIN`]. An agent loop that calls a
/// plugin every few tens of microseconds (its own work between tool calls)
/// then finds the thread awake, instead of paying a wake-up per call; a
/// plugin called at a model's pace (milliseconds or more) costs the short
/// spin per call, as before.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    window: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Self { window: SPIN }
    }
}

impl Pace {
    /// The next item of `queue`, spinning for the learnt window before
    /// blocking; `None` when every sender is gone. Engine threads (a
    /// dylib's worker, the JS engine's thread, Python's workers) wait for
    /// their next call this way.
    pub fn recv<T>(&mut self, queue: &Receiver<T>) -> Option<T> {
        let waiting = Instant::now();
        let item = recv_spinning_for(queue, self.window);
        self.learn(waiting.elapsed());
        item
    }

    /// The spin window after a wait of `waited`.
    fn learn(&mut self, waited: Duration) {
        self.window = if waited <= MAX_SPIN {
            (waited * 3 / 2).clamp(SPIN, MAX_SPIN)
        } else {
            SPIN
        };
    }
}

fn recv_spinning_for<T>(queue: &Receiver<T>, spin: Duration) -> Option<T> {
    let mut spinning = Spin::for_(spin);
    loop {
        match queue.try_recv() {
            Ok(item) => return Some(item),
            Err(TryRecvError::Empty) if spinning.goes_on() => {}
            Err(TryRecvError::Empty) => return queue.recv().ok(),
            Err(TryRecvError::Disconnected) => return None,
        }
    }
}

/// Await a reply from another thread, spinning for up to [`SPIN`] before
/// yielding to the runtime; `None` when the sender was dropped. Callers
/// wait for an engine thread's answer this way.
pub async fn reply_spinning<T>(mut answer: oneshot::Receiver<T>) -> Option<T> {
    let mut spinning = Spin::for_(SPIN);
    loop {
        match answer.try_recv() {
            Ok(reply) => return Some(reply),
            Err(oneshot::error::TryRecvError::Closed) => return None,
            Err(oneshot::error::TryRecvError::Empty) if spinning.goes_on() => {}
            Err(oneshot::error::TryRecvError::Empty) => return answer.await.ok(),
        }
    }
}

/// A busy wait of a given length that reads the clock only every
/// [`Spin::TURNS_PER_CLOCK`] turns: a turn is a few nanoseconds, a clock
/// read tens of them under a hypervisor, so the waiter notices what it
/// waits for sooner.
struct Spin {
    until: Instant,
    turns: u32,
}

impl Spin {
    const TURNS_PER_CLOCK: u32 = 32;

    fn for_(length: Duration) -> Self {
        Self {
            until: Instant::now() + length,
            turns: 0,
        }
    }

    /// Whether to look again: true until the length has passed.
    fn goes_on(&mut self) -> bool {
        self.turns = self.turns.wrapping_add(1);
        if !self.turns.is_multiple_of(Self::TURNS_PER_CLOCK) {
            std::hint::spin_loop();
            return true;
        }
        Instant::now() < self.until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_spin_window_follows_fast_callers_and_falls_back_for_slow_ones() {
        let mut pace = Pace::default();
        pace.learn(Duration::from_micros(80));
        assert_eq!(pace.window, Duration::from_micros(120));
        pace.learn(Duration::from_micros(10));
        assert_eq!(pace.window, SPIN, "never below the short spin");
        pace.learn(Duration::from_micros(200));
        assert_eq!(pace.window, MAX_SPIN, "never above the cap");
        pace.learn(Duration::from_millis(5));
        assert_eq!(pace.window, SPIN, "a slow caller gets the short spin");
    }

    #[test]
    fn a_spin_ends_once_its_length_has_passed() {
        let started = Instant::now();
        let mut spinning = Spin::for_(Duration::from_millis(2));
        while spinning.goes_on() {}
        assert!(started.elapsed() >= Duration::from_millis(2));
    }

    #[tokio::test]
    async fn a_reply_slower_than_the_spin_is_still_awaited() {
        let slot = WorkerSlot::new("slow");
        let slow = slot.run(|| {
            std::thread::sleep(SPIN * 20);
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
