//! Settling a promise while a plugin loads or unloads, when the loop that
//! serves calls is not running: the job queue is driven here, and the
//! replies of the processes the plugin started are handed to it.

use super::calls::Shared;
use super::inbox::Message;
use rquickjs::{Ctx, Function};
use std::sync::mpsc;
use std::time::Instant;

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
