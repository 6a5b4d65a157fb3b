//! Unloading a plugin, and settling a promise while it loads or unloads
//! (when the loop that serves calls is not running).

use super::calls::Shared;
use super::engine::Engine;
use super::Message;
use rquickjs::{Ctx, Function};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a plugin's `unload` may run when it is dropped: long enough
/// for a few short processes (pi's auto-commit runs three `git` commands).
pub(super) const UNLOAD_TIMEOUT: Duration = Duration::from_secs(5);

/// How long, past [`UNLOAD_TIMEOUT`], dropping the host waits for the
/// engine thread to free the plugin and end.
pub(super) const UNLOAD_GRACE: Duration = Duration::from_secs(1);

/// The plugin is being dropped: run its shape's `unload` and the jobs it
/// queues, for at most [`UNLOAD_TIMEOUT`].
pub(super) fn unload(engine: &Engine, shared: &Shared, inbox: &mpsc::Receiver<Message>) {
    let deadline = Instant::now() + UNLOAD_TIMEOUT;
    shared.phase_deadline.set(Some(deadline));
    engine.interrupted.set(false);
    engine.interrupt_at.set(Some(deadline));
    let _ = engine.context.with(|ctx| -> rquickjs::Result<()> {
        let driver = engine.driver.clone().restore(&ctx)?;
        let unload: Function = driver.get("unload")?;
        let waiting = Waiting {
            shared,
            inbox,
            deadline,
            resume: driver.get("resume")?,
        };
        unload.call::<_, ()>(())?;
        while Instant::now() < deadline && (ctx.execute_pending_job() || waiting.one()) {}
        Ok(())
    });
    shared.kill_running();
}

/// While a plugin loads or unloads, the processes it started reply here
/// (the loop that serves calls is not running).
pub(super) struct Waiting<'a, 'js> {
    pub(super) shared: &'a Shared,
    pub(super) inbox: &'a mpsc::Receiver<Message>,
    /// When to stop waiting.
    pub(super) deadline: Instant,
    /// The driver's `resume`.
    pub(super) resume: Function<'js>,
}

impl Waiting<'_, '_> {
    /// Wait for one running process to reply and hand the reply to the
    /// plugin. False when none is running or the deadline passed.
    pub(super) fn one(&self) -> bool {
        while !self.shared.running.borrow().is_empty() {
            let left = self.deadline.saturating_duration_since(Instant::now());
            match self.inbox.recv_timeout(left) {
                Ok(Message::Exec(id, reply)) => {
                    let known = self.shared.running.borrow_mut().remove(&id).is_some();
                    if known {
                        let _ = self.resume.call::<_, ()>((id as f64, reply));
                        return true;
                    }
                }
                Ok(Message::Call(request)) => self.shared.backlog.borrow_mut().push_back(request),
                Ok(Message::Closed) => self.shared.closed.set(true),
                // They wait for the next call.
                Ok(Message::Wake | Message::Watched) => {}
                Err(_) => return false,
            }
        }
        false
    }
}

/// Drive the job queue, and the replies of processes the plugin started,
/// until `promise` settles.
pub(super) fn settle<'js, T: rquickjs::FromJs<'js>>(
    ctx: &Ctx<'js>,
    promise: &rquickjs::Promise<'js>,
    waiting: &Waiting<'_, 'js>,
) -> rquickjs::Result<T> {
    loop {
        if let Some(result) = promise.result::<T>() {
            return result;
        }
        if !ctx.execute_pending_job() && !waiting.one() {
            return Err(rquickjs::Error::new_loading_message(
                "top-level await",
                "it did not settle while the plugin loaded (timers do not run then)",
            ));
        }
    }
}
