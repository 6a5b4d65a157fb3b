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
//! - the native stack is capped at [`MAX_STACK_BYTES`], so deep recursion
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

mod alloc;
mod calls;
mod engine;
mod event_loop;
mod host;
mod loader;
mod unload;

use super::glue::{Caller, Shaped};
use super::modules::ModuleSet;
use super::services::Services;
use super::Flavor;
use crate::call::codec::encode_json_args;
use crate::call::error::CallError;
use crate::call::handoff::Handoff;
use crate::call::plugin::CallLimits;
use crate::call::unloads::{self, Unload};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use unload::{UNLOAD_GRACE, UNLOAD_TIMEOUT};
use yohost_contract::HookCall;

/// The most native stack a plugin's code may use.
pub const MAX_STACK_BYTES: usize = 1024 * 1024;

/// The engine thread's own stack: room for [`MAX_STACK_BYTES`] of script
/// plus the host's frames.
const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

/// How long loading (evaluating the plugin's modules) may take.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(5);

/// What a plugin may use.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    /// The most memory its runtime may hold.
    pub memory_bytes: u64,
    /// The environment variables it was granted, with their values at load.
    pub env: BTreeMap<String, String>,
    /// The host's services, for flavors that offer them.
    pub services: Option<Services>,
}

/// Everything a backend needs to run a plugin.
#[derive(Debug, Clone)]
pub struct Program {
    /// Its modules (the plugin's and its flavor's), resolved and transpiled.
    pub modules: ModuleSet,
    /// How its module becomes hooks.
    pub flavor: Flavor,
    /// What the flavor's shape receives besides the module, as JSON text.
    pub settings: String,
    /// What it may use.
    pub sandbox: Sandbox,
    /// The name its log lines carry unless the plugin names itself.
    pub default_name: String,
    /// Whether `default_name` wins over the plugin's own name (the manifest
    /// set it).
    pub name_is_fixed: bool,
    /// The plugin's folder, which hooks see as `ctx.pluginDir`.
    pub plugin_dir: PathBuf,
}

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

/// What the engine thread receives.
enum Message {
    /// A hook call.
    Call(Box<Request>),
    /// A process the plugin started ended: its id and reply (JSON text).
    Exec(u64, String),
    /// A run was cancelled: look at the calls in flight.
    Wake,
    /// File-watch events wait for the plugin ([`watch`](super::watch)).
    Watched,
    /// Every [`Instance`] is gone.
    Closed,
}

struct Request {
    call: HookCall,
    /// The call's argument as JSON text, encoded by the caller.
    args: String,
    limits: CallLimits,
    reply: oneshot::Sender<Result<Value, CallError>>,
    caller: Caller,
}

impl Instance {
    /// Run one hook call on the engine thread.
    pub async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        let args = encode_json_args(&call)?;
        let (reply, answer) = oneshot::channel();
        let cancel = limits.cancel.clone();
        let request = Request {
            call,
            args,
            limits,
            reply,
            caller: Caller::current(),
        };
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
