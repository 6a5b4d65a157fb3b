//! The QuickJS backend (through `rquickjs`): the runtime, its sandbox, and
//! the thread that owns it.
//!
//! QuickJS runtimes are not `Send`, so each plugin gets one OS thread that
//! owns its runtime and serves hook calls from a channel. Calls of several
//! runs interleave on it: while one call awaits a timer, the next starts.
//! The thread drives promises itself (the job queue, and the timers behind
//! `setTimeout`).
//!
//! The sandbox:
//! - the global object has the language's own built-ins plus `console`,
//!   `setTimeout` and `clearTimeout`: no file, network, process or
//!   environment access; a hook's `ctx.env` holds only the environment
//!   variables the manifest grants;
//! - memory is counted by the runtime's allocator, which refuses to go over
//!   the plugin's limit; a call that fails after a refusal is
//!   [`CallError::OutOfMemory`] and the runtime is rebuilt for later calls;
//! - the native stack is capped at [`MAX_STACK_BYTES`](program::MAX_STACK_BYTES), so deep recursion
//!   is a `RangeError`, not a host crash;
//! - an interrupt handler stops running code once the earliest deadline of
//!   the calls in flight has passed (a spinning script cannot hold the thread
//!   past it), and a call whose promise has not settled by its deadline is
//!   dropped (the host, which enforces the deadline, reports the timeout; a
//!   cancelled run wakes the thread at once). Either way the call's
//!   `ctx.signal` aborts, so the plugin can stop its work;
//! - a process a plugin starts (when granted) runs off this thread and is
//!   killed at the deadline of the call that started it, when that call's
//!   run is cancelled, or when the plugin is dropped; its reply settles a
//!   promise here;
//! - a file it watches (see [`watch`](super::watch)) reports its events here, while one of
//!   its calls is in flight (else at the start of its next call).
//!
//! Another backend (V8, say) would be another module with the same
//! [`start`] / [`Instance::call`] surface, fed the same [`Program`].
//!
//! Its files, in the order they import each other (a file imports only
//! files above it; none imports this one, which starts the thread and
//! holds [`Instance`]):
//! - `alloc`: the memory-limiting allocator;
//! - `program`: what the backend is given ([`Program`], [`Sandbox`]) and
//!   its bounds on stack and load;
//! - `inbox`: what the engine thread receives;
//! - `calls`: the calls in flight, their timers and the work they started;
//! - `waiting`: settling a promise while the plugin loads or unloads;
//! - `loader`: the module loader, serving only what was gathered;
//! - `host`: the host's services as the plugin sees them;
//! - `engine`: one runtime with the plugin loaded;
//! - `unload`: the plugin's `unload`, when it is dropped;
//! - `event_loop`: the thread's loop.

mod alloc;
mod calls;
mod engine;
mod event_loop;
mod host;
mod inbox;
mod loader;
mod program;
mod unload;
mod waiting;

use super::glue::{Caller, Shaped};
use crate::call::codec::encode_json_args;
use crate::call::error::CallError;
use crate::call::handoff::Handoff;
use crate::call::plugin::CallLimits;
use crate::call::unloads::{self, Unload};
use inbox::{Message, Request};
use serde_json::Value;
use std::sync::{mpsc, Arc};
use std::time::Instant;
use tokio::sync::oneshot;
use unload::{UNLOAD_GRACE, UNLOAD_TIMEOUT};
use yohost_contract::HookCall;

pub use program::{Program, Sandbox};

/// The engine thread's own stack: room for [`MAX_STACK_BYTES`](program::MAX_STACK_BYTES) of script
/// plus the host's frames.
const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

/// A running plugin: cheap to clone, calls go to its engine thread. The
/// thread ends when the last clone is dropped.
#[derive(Clone)]
pub struct Instance {
    requests: mpsc::Sender<Message>,
    /// How calls reach the engine thread.
    handoff: Arc<Handoff>,
    _alive: Arc<Alive>,
}

/// Tells the engine thread, when the last [`Instance`] is dropped, to
/// unload the plugin and end, without waiting for it (the drop may be on a
/// tokio worker): the plugin's `unload` (pi's `session_shutdown`, with the
/// processes it awaits) runs on the engine thread, noted in
/// [`crate::call::unloads`] so that dropping the host waits for it, within
/// [`UNLOAD_TIMEOUT`] and [`UNLOAD_GRACE`].
struct Alive {
    requests: mpsc::Sender<Message>,
    /// Over when the engine thread ends.
    unload: Arc<Unload>,
}

impl Drop for Alive {
    fn drop(&mut self) {
        let _ = self.requests.send(Message::Closed);
        unloads::started(
            Arc::clone(&self.unload),
            Instant::now() + UNLOAD_TIMEOUT + UNLOAD_GRACE,
        );
    }
}

impl Instance {
    /// Run one hook call on the engine thread.
    pub async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        let args = encode_json_args(&call)?;
        let (reply, answer) = oneshot::channel();
        let cancel = limits.cancel.clone();
        let request = Request {
            hook: call.hook(),
            run_id: call.run().run_id.clone(),
            args,
            limits,
            reply,
            caller: Caller::current(),
        };
        // The argument is held once, encoded: the typed call goes now.
        drop(call);
        let wait = self.handoff.prepare();
        self.requests
            .send(Message::Call(Box::new(request)))
            .map_err(|_| CallError::Crashed("the plugin's engine thread is gone".into()))?;
        let answer = wait.reply(answer);
        tokio::pin!(answer);
        let replied = tokio::select! {
            replied = &mut answer => replied,
            () = cancel.cancelled() => {
                // The thread sleeps until a deadline: wake it so the call's
                // `ctx.signal` aborts now.
                let _ = self.requests.send(Message::Wake);
                answer.await
            }
        };
        replied.unwrap_or_else(|| {
            Err(CallError::Crashed(
                "the plugin's engine thread stopped before it replied".into(),
            ))
        })
    }
}

/// Start `program` on its own thread and load it. The thread ends when the
/// last [`Instance`] is dropped. Log lines that belong to no call (while it
/// loads and unloads) go to the caller's tracing subscriber.
pub fn start(program: Program) -> Result<(Instance, Shaped), String> {
    let (requests, inbox) = mpsc::channel();
    let (ready, loaded) = mpsc::sync_channel(1);
    let wake = requests.clone();
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    let (unload, ending) = Unload::start();
    let handoff = Arc::new(Handoff::default());
    let its_handoff = Arc::clone(&handoff);
    std::thread::Builder::new()
        .name(format!("yohost-js:{}", program.default_name))
        .stack_size(THREAD_STACK_BYTES)
        .spawn(move || {
            // Dropped when the thread ends: the unload is over.
            let _ending = ending;
            tracing::dispatcher::with_default(&dispatch, || {
                event_loop::serve(program, inbox, wake, ready, its_handoff)
            })
        })
        .map_err(|e| format!("cannot start the engine thread: {e}"))?;
    let started = loaded
        .recv()
        .map_err(|_| "the engine thread stopped while loading".to_string())??;
    let alive = Arc::new(Alive {
        requests: requests.clone(),
        unload,
    });
    Ok((
        Instance {
            requests,
            handoff,
            _alive: alive,
        },
        started,
    ))
}
