//! Unloading a plugin: its shape's `unload`, within [`UNLOAD_TIMEOUT`].

use super::calls::Shared;
use super::engine::Engine;
use super::inbox::Message;
use super::waiting::Waiting;
use rquickjs::Function;
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
