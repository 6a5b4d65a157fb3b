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
//! - a file it watches (see [`watch`]) reports its events here, while one of
//!   its calls is in flight (else at the start of its next call).
//!
//! Another backend (V8, say) would be another module with the same
//! [`start`] / [`Instance::call`] surface, fed the same [`Program`].

use super::modules::ModuleSet;
use super::positions::{self, LineMap};
use super::services::{self, ExecBounds, ExecRequest, Services};
use super::watch::{self, Watches};
use super::Flavor;
use super::{crypto, fetch};
use crate::call::codec::{decode_json_reply, encode_json_args};
use crate::call::error::CallError;
use crate::call::handoff::{Handoff, Pace};
use crate::call::logging::{plugin_log, LogLevel};
use crate::call::plugin::CallLimits;
use crate::call::unloads::{self, Unload};
use crate::load::manifest::Network;
use crate::sandbox::ProcessSandbox;
use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Context, Ctx, Function, Module, Object, Persistent, Runtime};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use yohost_contract::{HookCall, HookReply, ReplyError};

/// The most native stack a plugin's code may use.
pub const MAX_STACK_BYTES: usize = 1024 * 1024;

/// The engine thread's own stack: room for [`MAX_STACK_BYTES`] of script
/// plus the host's frames.
const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

/// How long loading (evaluating the plugin's modules) may take.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(5);

/// The glue between host and plugin, evaluated in every runtime.
const DRIVER: &str = include_str!("driver.js");

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
    /// File-watch events wait for the plugin ([`watch`]).
    Watched,
    /// Every [`Instance`] is gone.
    Closed,
}

/// What loading found.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Started {
    /// The name the plugin gave itself.
    pub name: Option<String>,
    /// The contract names of the hooks it implements.
    pub hooks: Vec<String>,
    /// What the flavor's shape reported without refusing the plugin.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Whether the shape gave an `unload`, which runs when it is dropped.
    #[serde(default)]
    pub unloads: bool,
}

struct Request {
    call: HookCall,
    /// The call's argument as JSON text, encoded by the caller.
    args: String,
    limits: CallLimits,
    reply: oneshot::Sender<Result<HookReply, CallError>>,
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

impl Instance {
    /// Run one hook call on the engine thread.
    pub async fn call(&self, call: HookCall, limits: CallLimits) -> Result<HookReply, CallError> {
        let args = encode_json_args(&call)?;
        let (reply, answer) = oneshot::channel();
        let cancel = limits.cancel.clone();
        let request = Request {
            call,
            args,
            limits,
            reply,
            dispatch: tracing::dispatcher::get_default(|d| d.clone()),
            span: tracing::Span::current(),
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
pub fn start(program: Program) -> Result<(Instance, Started), String> {
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
                serve(program, inbox, wake, ready, its_handoff)
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

/// A call in flight on the engine thread.
struct InFlight {
    call: HookCall,
    deadline: Instant,
    cancel: CancellationToken,
    reply: oneshot::Sender<Result<HookReply, CallError>>,
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

/// How a call settled on the engine thread.
enum Settled {
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
struct Expired {
    id: u64,
    /// Its run was cancelled (else its deadline passed).
    cancelled: bool,
    dispatch: tracing::Dispatch,
    span: tracing::Span,
}

/// A pending timer: when it is due, its id, and the call that set it.
type Timer = (Instant, u64, Option<u64>);

/// A process the plugin started that has not replied yet.
struct Running {
    /// The call that started it, if known.
    owner: Option<u64>,
    /// Set to kill it.
    kill: Arc<AtomicBool>,
}

/// State the host callbacks (called from JavaScript) share with the loop.
/// The loop never holds a borrow while JavaScript runs.
struct Shared {
    /// The name log lines carry.
    name: RefCell<String>,
    calls: RefCell<HashMap<u64, InFlight>>,
    /// Calls that settled, not yet answered.
    settled: RefCell<Vec<(u64, Settled)>>,
    /// Pending timers, earliest first.
    timers: RefCell<BinaryHeap<Reverse<Timer>>>,
    /// The call whose code is running, when the loop knows it.
    current: Cell<Option<u64>>,
    /// Processes started and not yet replied, by id.
    running: RefCell<HashMap<u64, Running>>,
    next_exec: Cell<u64>,
    /// Where a process's reply is sent (this thread's inbox).
    wake: mpsc::Sender<Message>,
    /// While the plugin loads or unloads (no call in flight), when a
    /// process it starts must end.
    phase_deadline: Cell<Option<Instant>>,
    /// Calls that arrived while the engine was being rebuilt.
    backlog: RefCell<VecDeque<Box<Request>>>,
    /// Every [`Instance`] went while the engine was being rebuilt.
    closed: Cell<bool>,
    /// The files the plugin watches, and their events.
    watches: Watches,
}

impl Shared {
    fn new(wake: mpsc::Sender<Message>) -> Self {
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
    fn exec_bounds(&self) -> Option<(Option<u64>, Instant, Vec<CancellationToken>)> {
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
    fn next_work(&self) -> (u64, Arc<AtomicBool>) {
        let id = self.next_exec.get() + 1;
        self.next_exec.set(id);
        (id, Arc::new(AtomicBool::new(false)))
    }

    /// Kill every process still running.
    fn kill_running(&self) {
        for process in self.running.borrow_mut().drain() {
            process.1.kill.store(true, Ordering::Relaxed);
        }
    }

    /// The call running code belongs to: the one the loop entered, else the
    /// only one in flight.
    fn attributed(&self) -> Option<u64> {
        self.current.get().or_else(|| {
            let calls = self.calls.borrow();
            (calls.len() == 1).then(|| *calls.keys().next().expect("one call"))
        })
    }

    /// Write a plugin log line for `call` (or the attributed call).
    fn log(&self, call: Option<u64>, run_id: Option<String>, level: &str, message: &str) {
        let level = LogLevel::from_name(level);
        let name = self.name.borrow();
        let calls = self.calls.borrow();
        match call
            .or_else(|| self.attributed())
            .and_then(|id| calls.get(&id))
        {
            Some(owner) => {
                let run_id = run_id.unwrap_or_else(|| owner.call.run().run_id.clone());
                tracing::dispatcher::with_default(&owner.dispatch, || {
                    owner
                        .span
                        .in_scope(|| plugin_log(&run_id, &name, level, message))
                });
            }
            None => plugin_log(run_id.as_deref().unwrap_or(""), &name, level, message),
        }
    }

    /// When the loop must next wake: the next timer or call deadline.
    fn next_wake(&self) -> Option<Instant> {
        let timer = self.timers.borrow().peek().map(|Reverse((due, ..))| *due);
        let deadline = self.earliest_deadline();
        match (timer, deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn earliest_deadline(&self) -> Option<Instant> {
        self.calls.borrow().values().map(|c| c.deadline).min()
    }

    /// Answer call `id`, if it is still in flight.
    fn answer(&self, id: u64, outcome: impl FnOnce(&HookCall) -> Result<HookReply, CallError>) {
        let taken = self.calls.borrow_mut().remove(&id);
        if let Some(call) = taken {
            let _ = call.reply.send(outcome(&call.call));
        }
    }

    /// Stop serving every call whose deadline passed or whose run was
    /// cancelled, dropping its promise. The host has stopped waiting for it
    /// (the deadline is enforced in [`crate::run::invoke`], which reports the
    /// timeout); this frees the engine. Returns them, so that their
    /// `ctx.signal` can abort.
    fn expire(&self, now: Instant) -> Vec<Expired> {
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
                    dispatch: call.dispatch,
                    span: call.span,
                })
            })
            .collect()
    }

    /// Fail every call in flight with `why`.
    fn fail_all(&self, why: &str) {
        let ids: Vec<u64> = self.calls.borrow().keys().copied().collect();
        for id in ids {
            self.answer(id, |_| Err(CallError::Crashed(why.to_string())));
        }
    }
}

/// An allocator that counts what the runtime holds and refuses to go over
/// the limit, recording that it did: an out-of-memory failure is known by
/// this flag, not by the engine's message.
struct Limited {
    used: usize,
    limit: usize,
    refused: Arc<AtomicBool>,
}

impl Limited {
    fn admit(&mut self, more: usize) -> bool {
        let fits = self.used.saturating_add(more) <= self.limit;
        if !fits {
            self.refused.store(true, Ordering::Relaxed);
        }
        fits
    }
}

// SAFETY: every block comes from `RustAllocator`, which upholds the
// contract; this only counts sizes and refuses requests over the limit.
unsafe impl Allocator for Limited {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(size) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.alloc(size);
        if !ptr.is_null() {
            // SAFETY: `ptr` was just allocated by `RustAllocator`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return std::ptr::null_mut();
        };
        if !self.admit(total) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.calloc(count, size);
        if !ptr.is_null() {
            // SAFETY: as in `alloc`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        self.used = self.used.saturating_sub(RustAllocator::usable_size(ptr));
        RustAllocator.dealloc(ptr);
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        let old = RustAllocator::usable_size(ptr);
        if new_size > old && !self.admit(new_size - old) {
            return std::ptr::null_mut();
        }
        let new = RustAllocator.realloc(ptr, new_size);
        if !new.is_null() {
            self.used = self.used.saturating_sub(old) + RustAllocator::usable_size(new);
        }
        new
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        RustAllocator::usable_size(ptr)
    }
}

/// Resolves only what [`ModuleSet`] linked at load.
struct PluginResolver(Arc<ModuleSet>);

impl Resolver for PluginResolver {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if let Some(target) = self.0.resolve(base, name) {
            return Ok(target.to_string());
        }
        // The host imports the entry and the flavor's shape by name; plugin
        // code reaches the shape only through a link (never).
        let from_host = !self.0.sources.contains_key(base);
        let host_only = name == self.0.shape || self.0.prelude.as_deref() == Some(name);
        if name == self.0.entry || (from_host && host_only) {
            return Ok(name.to_string());
        }
        Err(rquickjs::Error::new_resolving_message(
            base,
            name,
            "plugins may import only their own files and the built-in modules found at load",
        ))
    }
}

/// Serves the sources of [`ModuleSet`].
struct PluginLoader(Arc<ModuleSet>);

impl Loader for PluginLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        match self.0.sources.get(name) {
            Some(Cow::Borrowed(builtin)) => builtin_module(ctx, name, builtin),
            Some(Cow::Owned(source)) => {
                let module = Module::declare(ctx.clone(), name, source.as_str())?;
                if let Some(url) = self.0.file_url(name) {
                    module.meta()?.set("url", url)?;
                }
                Ok(module)
            }
            None => Err(rquickjs::Error::new_loading(name)),
        }
    }
}

/// The bytecode of each built-in module this process compiled, by its name
/// (the bytecode holds it, and its imports resolve from it) and its source
/// (a `&'static str` of the host's binary, so its address and length name
/// it; one source may serve several names). Entries are never removed:
/// there are as many as the host has built-ins, and loaded modules may keep
/// pointing into their bytes.
type BuiltinKey = (String, usize, usize);
static BUILTIN_BYTECODE: std::sync::Mutex<BTreeMap<BuiltinKey, &'static [u8]>> =
    std::sync::Mutex::new(BTreeMap::new());

/// The built-in module `name` whose source is `builtin`: compiled the first
/// time in this process, then read from its bytecode, which skips parsing
/// the SDK's and the flavors' modules again for every plugin.
fn builtin_module<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    builtin: &'static str,
) -> rquickjs::Result<Module<'js, Declared>> {
    let key = (name.to_string(), builtin.as_ptr() as usize, builtin.len());
    let known = BUILTIN_BYTECODE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .copied();
    if let Some(bytecode) = known {
        // SAFETY: these bytes were written by `Module::write` of this very
        // QuickJS build, from the same source, and are never freed.
        return unsafe { Module::load(ctx.clone(), bytecode) };
    }
    let module = Module::declare(ctx.clone(), name, builtin)?;
    let bytecode = module.write(rquickjs::WriteOptions::default())?;
    BUILTIN_BYTECODE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_insert_with(|| Vec::leak(bytecode));
    Ok(module)
}

/// One runtime with the plugin loaded. Fields drop in order: the driver
/// before the context, the context before the runtime.
struct Engine {
    driver: Persistent<Object<'static>>,
    context: Context,
    _runtime: Runtime,
    /// An allocation was refused (the limit was hit).
    refused: Arc<AtomicBool>,
    /// The interrupt handler stopped code.
    interrupted: Rc<Cell<bool>>,
    /// When the interrupt handler stops running code.
    interrupt_at: Rc<Cell<Option<Instant>>>,
    memory_bytes: u64,
}

impl Engine {
    /// Build a runtime, evaluate the plugin and shape its hooks. While it
    /// loads, processes it started reply through `inbox` (calls that arrive
    /// meanwhile wait in the backlog).
    fn build(
        program: &Program,
        shared: &Rc<Shared>,
        inbox: &mpsc::Receiver<Message>,
    ) -> Result<(Engine, Started), String> {
        let refused = Arc::new(AtomicBool::new(false));
        let limit = usize::try_from(program.sandbox.memory_bytes).unwrap_or(usize::MAX);
        let runtime = Runtime::new_with_alloc(Limited {
            used: 0,
            limit,
            refused: Arc::clone(&refused),
        })
        .map_err(|e| format!("cannot create a JavaScript runtime: {e}"))?;
        runtime.set_max_stack_size(MAX_STACK_BYTES);
        let interrupted = Rc::new(Cell::new(false));
        let interrupt_at = Rc::new(Cell::new(None::<Instant>));
        {
            let interrupted = Rc::clone(&interrupted);
            let interrupt_at = Rc::clone(&interrupt_at);
            runtime.set_interrupt_handler(Some(Box::new(move || {
                let stop = interrupt_at.get().is_some_and(|at| Instant::now() >= at);
                if stop {
                    interrupted.set(true);
                }
                stop
            })));
        }
        let modules = Arc::new(program.modules.clone());
        runtime.set_loader(
            PluginResolver(Arc::clone(&modules)),
            PluginLoader(Arc::clone(&modules)),
        );
        let context = Context::full(&runtime)
            .map_err(|e| format!("cannot create a JavaScript context: {e}"))?;
        let load_deadline = Instant::now() + LOAD_TIMEOUT;
        interrupt_at.set(Some(load_deadline));
        shared.phase_deadline.set(Some(load_deadline));
        let loaded: Result<_, String> = context.with(|ctx| {
            let positions = Arc::new(program.modules.positions.clone());
            let driver =
                install_driver(&ctx, shared, &positions).map_err(|e| format!("internal: {e}"))?;
            let describe: Function = driver.get("describe").map_err(|e| e.to_string())?;
            let fail = |e: rquickjs::Error| {
                if interrupted.get() {
                    format!("loading took longer than {LOAD_TIMEOUT:?}")
                } else if refused.load(Ordering::Relaxed) {
                    format!(
                        "loading ran out of memory (limit {} bytes)",
                        program.sandbox.memory_bytes
                    )
                } else {
                    positions::in_source(
                        &program.modules.positions,
                        &error_text(&ctx, &describe, e),
                    )
                }
            };
            if let Some(services) = &program.sandbox.services {
                install_services(&ctx, services, shared, &driver)
                    .map_err(|e| format!("internal: {e}"))?;
            }
            let waiting = Waiting {
                shared,
                inbox,
                deadline: load_deadline,
                resume: driver.get("resume").map_err(|e| format!("internal: {e}"))?,
            };
            let env = serde_json::to_string(&program.sandbox.env).unwrap_or_else(|_| "{}".into());
            if let Some(prelude) = &modules.prelude {
                let install: Function = Module::import(&ctx, prelude.as_str())
                    .and_then(|p| settle::<Object>(&ctx, &p, &waiting))
                    .and_then(|prelude| prelude.get("default"))
                    .map_err(fail)?;
                install
                    .call::<_, ()>((program.settings.as_str(), env.as_str()))
                    .map_err(fail)?;
            }
            let namespace = Module::import(&ctx, modules.entry.as_str())
                .and_then(|p| settle::<Object>(&ctx, &p, &waiting))
                .map_err(fail)?;
            let shape: Function = Module::import(&ctx, program.flavor.shape)
                .and_then(|p| settle::<Object>(&ctx, &p, &waiting))
                .and_then(|shape| shape.get("default"))
                .map_err(fail)?;
            let plugin_dir = program.plugin_dir.to_string_lossy().into_owned();
            let install: Function = driver.get("install").map_err(fail)?;
            let settings = program.settings.as_str();
            let info: String = install
                .call::<_, rquickjs::Promise>((shape, namespace, settings, env, plugin_dir))
                .and_then(|p| settle::<String>(&ctx, &p, &waiting))
                .map_err(fail)?;
            let started: Started = serde_json::from_str(&info)
                .map_err(|e| format!("internal: the plugin's shape is unreadable: {e}"))?;
            Ok((Persistent::save(&ctx, driver), started))
        });
        interrupt_at.set(None);
        shared.phase_deadline.set(None);
        let (driver, started) = loaded?;
        Ok((
            Engine {
                driver,
                context,
                _runtime: runtime,
                refused,
                interrupted,
                interrupt_at,
                memory_bytes: program.sandbox.memory_bytes,
            },
            started,
        ))
    }

    /// Run `f` with the driver's function `name`, interrupting it at the
    /// earliest deadline in flight. On failure, returns why.
    fn enter(
        &self,
        shared: &Shared,
        name: &str,
        f: impl for<'js> FnOnce(&Ctx<'js>, Function<'js>) -> rquickjs::Result<()>,
    ) -> Result<(), String> {
        self.interrupted.set(false);
        self.interrupt_at.set(shared.earliest_deadline());
        self.context.with(|ctx| {
            let driver = self
                .driver
                .clone()
                .restore(&ctx)
                .map_err(|e| e.to_string())?;
            let function: Function = driver.get(name).map_err(|e| e.to_string())?;
            f(&ctx, function).map_err(|e| match driver.get::<_, Function>("describe") {
                Ok(describe) => error_text(&ctx, &describe, e),
                Err(lookup) => lookup.to_string(),
            })
        })
    }

    /// Answer the calls whose deadline passed or whose run was cancelled,
    /// and abort their `ctx.signal`, giving the listeners at most
    /// [`ABORT_TIMEOUT`].
    fn expire(&self, shared: &Shared) {
        for expired in shared.expire(Instant::now()) {
            let (name, message) = if expired.cancelled {
                ("AbortError", "the run was cancelled")
            } else {
                ("TimeoutError", "the call ran past its deadline")
            };
            self.interrupted.set(false);
            self.interrupt_at.set(Some(Instant::now() + ABORT_TIMEOUT));
            tracing::dispatcher::with_default(&expired.dispatch, || {
                expired.span.in_scope(|| {
                    let _ = self.context.with(|ctx| -> rquickjs::Result<()> {
                        let driver = self.driver.clone().restore(&ctx)?;
                        let abort: Function = driver.get("abort")?;
                        abort.call::<_, ()>((expired.id as f64, name, message))
                    });
                })
            });
        }
        self.interrupt_at.set(None);
    }

    /// Run queued promise jobs, one at a time, expiring calls whose deadline
    /// an interrupted job passed.
    fn run_jobs(&self, shared: &Shared) {
        loop {
            self.interrupted.set(false);
            self.interrupt_at.set(shared.earliest_deadline());
            let ran = self.context.with(|ctx| ctx.execute_pending_job());
            if self.interrupted.get() {
                self.expire(shared);
            }
            if !ran {
                return;
            }
        }
    }

    /// Whether an allocation was refused since the last call; clears it.
    fn take_refused(&self) -> bool {
        self.refused.swap(false, Ordering::Relaxed)
    }
}

/// Give the plugin the host's services as
/// `globalThis[Symbol.for("yohost.host")]`: `cwd`, `fs(op, path, data)`
/// within its grants (see [`services`]; op `watch` starts a watch, data
/// `"recursive"` for a folder's tree, and replies its id), `unwatch(id)`,
/// `validate(tool, schema, args)` (JSON texts; `null` when the arguments match, else the host's
/// `Validation failed for tool` text), and, when it is granted,
/// `exec(command, args, options)`, which returns a promise of
/// `{stdout, stderr, code, killed}`.
fn install_services<'js>(
    ctx: &Ctx<'js>,
    services: &Services,
    shared: &Rc<Shared>,
    driver: &Object<'js>,
) -> rquickjs::Result<()> {
    let object = Object::new(ctx.clone())?;
    object.set("cwd", services.cwd.to_string_lossy().into_owned())?;
    let files = services.files.clone();
    let s = Rc::clone(shared);
    object.set(
        "fs",
        Function::new(
            ctx.clone(),
            move |op: String, path: String, data: Option<String>| match op.as_str() {
                "watch" => files.watch(&s.watches, &path, data.as_deref() == Some("recursive")),
                _ => files.run(&op, &path, data),
            },
        )?,
    )?;
    let s = Rc::clone(shared);
    object.set(
        "unwatch",
        Function::new(ctx.clone(), move |id: f64| s.watches.stop(id as u64))?,
    )?;
    object.set(
        "validate",
        Function::new(
            ctx.clone(),
            |tool: String, schema: String, args: String| -> Option<String> {
                let parse =
                    |text: &str| serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
                crate::call::arguments::check_once(&tool, &parse(&schema), &parse(&args)).err()
            },
        )?,
    )?;
    // In a check, `exec` is there even when not granted, to report what
    // would be denied.
    if services.exec || services.dry_run.is_some() {
        let granted = services.exec;
        let sandbox = services.sandbox.clone();
        let cwd = services.cwd.clone();
        let dry_run = services.dry_run.clone();
        let shared = Rc::clone(shared);
        let start = Function::new(
            ctx.clone(),
            move |command: String,
                  args: String,
                  dir: Option<String>,
                  timeout: Option<f64>,
                  env: Option<String>| {
                let options = ExecOptions { dir, timeout, env };
                let started = match &dry_run {
                    Some(dry_run) if granted => pretend_exec(&shared, dry_run, command, &args),
                    Some(dry_run) => Err(deny_exec(dry_run, command, &args)),
                    None => match &sandbox {
                        Some(sandbox) => {
                            start_exec(&shared, sandbox, &cwd, command, &args, options)
                        }
                        None => Err("exec: processes are not granted".into()),
                    },
                };
                let reply = match started {
                    Ok(id) => serde_json::json!({ "ok": id }),
                    Err(why) => serde_json::json!({ "error": why }),
                };
                reply.to_string()
            },
        )?;
        let exec: Function = ctx.eval(
            "(later) => (start) => later((command, args, options) => start(command, JSON.stringify(args), options?.cwd ?? null, options?.timeout == null ? null : Number(options.timeout), options?.env == null ? null : JSON.stringify(options.env)))",
        )?;
        let later: Function = driver.get("later")?;
        object.set(
            "exec",
            exec.call::<_, Function>((later,))?
                .call::<_, Function>((start,))?,
        )?;
    }
    if services.network.is_granted() {
        let network = services.network.clone();
        let shared = Rc::clone(shared);
        let start = Function::new(ctx.clone(), move |request: String| {
            let reply = match start_fetch(&shared, &network, &request) {
                Ok(id) => serde_json::json!({ "ok": id }),
                Err(why) => serde_json::json!({ "error": why }),
            };
            reply.to_string()
        })?;
        let later: Function = driver.get("later")?;
        object.set("fetch", later.call::<_, Function>((start,))?)?;
    }
    object.set(
        "randomBytes",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, count: f64| {
            let count = if count >= 0.0 {
                count as usize
            } else {
                usize::MAX
            };
            crypto::random_bytes(count)
                .map_err(|e| rquickjs::Exception::throw_message(&ctx, &e.to_string()))
        })?,
    )?;
    object.set(
        "hash",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, algorithm: String, data: Vec<u8>| {
                crypto::digest(&algorithm, &data)
                    .map_err(|e| rquickjs::Exception::throw_message(&ctx, &e.to_string()))
            },
        )?,
    )?;
    let key: rquickjs::Symbol = ctx.eval("Symbol.for(\"yohost.host\")")?;
    ctx.globals().set(key, object)
}

/// The command line of a process the plugin asks for, as a check shows it.
fn command_line(command: String, args: &str) -> Result<String, String> {
    let args: Vec<String> = serde_json::from_str(args)
        .map_err(|e| format!("exec: the arguments must be strings: {e}"))?;
    Ok(std::iter::once(command)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" "))
}

/// A process the plugin asks for in a check without `capabilities.exec`:
/// noted in `dry_run` as denied; the call fails, as it would in a run.
fn deny_exec(dry_run: &services::DryRun, command: String, args: &str) -> String {
    let shown = match command_line(command, args) {
        Ok(shown) => shown,
        Err(why) => return why,
    };
    let why = format!(
        "exec: `{shown}` would be denied: the plugin's plugin.toml does not grant `capabilities.exec = true`"
    );
    dry_run.note(why.clone());
    why
}

/// A process the plugin asks for in a check: noted in `dry_run`, not
/// started; it "ends" at once with code 0 and no output.
fn pretend_exec(
    shared: &Shared,
    dry_run: &services::DryRun,
    command: String,
    args: &str,
) -> Result<u64, String> {
    let shown = command_line(command, args)?;
    dry_run.note(format!("would run `{shown}`"));
    let id = shared.next_exec.get() + 1;
    shared.next_exec.set(id);
    let (owner, _, _) = shared
        .exec_bounds()
        .ok_or("exec: a process can only start while a hook, load or unload is running")?;
    shared.running.borrow_mut().insert(
        id,
        Running {
            owner,
            kill: Arc::new(AtomicBool::new(false)),
        },
    );
    let reply = serde_json::json!({"ok": {"stdout": "", "stderr": "", "code": 0, "killed": false}});
    let _ = shared.wake.send(Message::Exec(id, reply.to_string()));
    Ok(id)
}

/// The options of `exec(command, args, options)`, as the plugin gave them.
struct ExecOptions {
    /// `cwd`, relative to the working directory.
    dir: Option<String>,
    /// `timeout` in ms.
    timeout: Option<f64>,
    /// `env` as JSON: `{name: value or null}`, changes to the inherited
    /// environment.
    env: Option<String>,
}

/// Start a process for the plugin, bounded by the call that asks for it
/// (see [`Shared::exec_bounds`]); returns its id, whose reply comes back
/// through the inbox as [`Message::Exec`].
fn start_exec(
    shared: &Shared,
    sandbox: &ProcessSandbox,
    cwd: &std::path::Path,
    command: String,
    args: &str,
    options: ExecOptions,
) -> Result<u64, String> {
    let args: Vec<String> = serde_json::from_str(args)
        .map_err(|e| format!("exec: the arguments must be strings: {e}"))?;
    let env = match options.env {
        Some(env) => services::exec_env(&env)?,
        None => Vec::new(),
    };
    let own_limit = services::exec_timeout(options.timeout)?;
    let (owner, deadline, cancels) = shared
        .exec_bounds()
        .ok_or("exec: a process can only start while a hook, load or unload is running")?;
    let now = Instant::now();
    let deadline = own_limit
        .map_or(deadline, |limit| deadline.min(now + limit))
        .min(now + services::MAX_EXEC);
    let request = ExecRequest {
        command,
        args,
        dir: services::exec_dir(cwd, options.dir.as_deref()),
        env,
    };
    start_work(shared, owner, deadline, cancels, |bounds, done| {
        services::spawn(request, sandbox.clone(), bounds, done)
    })
}

/// Start a piece of work off the engine thread (a process, a request) for
/// the call `owner`, bounded by `deadline` and `cancels`: `spawn` gets the
/// bounds and what to call with the reply, which comes back through the
/// inbox as [`Message::Exec`]. Returns the work's id.
fn start_work(
    shared: &Shared,
    owner: Option<u64>,
    deadline: Instant,
    cancels: Vec<CancellationToken>,
    spawn: impl FnOnce(ExecBounds, Box<dyn FnOnce(String) + Send>) -> Result<(), String>,
) -> Result<u64, String> {
    let (id, kill) = shared.next_work();
    let bounds = ExecBounds {
        deadline,
        cancels,
        kill: Arc::clone(&kill),
    };
    let wake = shared.wake.clone();
    spawn(
        bounds,
        Box::new(move |reply| {
            let _ = wake.send(Message::Exec(id, reply));
        }),
    )?;
    shared
        .running
        .borrow_mut()
        .insert(id, Running { owner, kill });
    Ok(id)
}

/// Start an HTTP request for the plugin (`request` is a
/// [`fetch::FetchRequest`] as JSON), bounded as a process is; returns its
/// id, whose reply comes back through the inbox as [`Message::Exec`].
fn start_fetch(shared: &Shared, network: &Network, request: &str) -> Result<u64, String> {
    let request: fetch::FetchRequest =
        serde_json::from_str(request).map_err(|e| format!("fetch: {e}"))?;
    let (owner, deadline, cancels) = shared
        .exec_bounds()
        .ok_or("fetch: a request can only start while a hook, load or unload is running")?;
    let deadline = deadline.min(Instant::now() + services::MAX_EXEC);
    start_work(shared, owner, deadline, cancels, |bounds, done| {
        fetch::spawn(request, network, bounds, done)
    })
}

/// How long the abort listeners of a call the host gave up on may run.
const ABORT_TIMEOUT: Duration = Duration::from_millis(100);

/// How long a plugin's `unload` may run when it is dropped: long enough
/// for a few short processes (pi's auto-commit runs three `git` commands).
const UNLOAD_TIMEOUT: Duration = Duration::from_secs(5);

/// How long, past [`UNLOAD_TIMEOUT`], dropping the host waits for the
/// engine thread to free the plugin and end.
const UNLOAD_GRACE: Duration = Duration::from_secs(1);

/// The plugin is being dropped: run its shape's `unload` and the jobs it
/// queues, for at most [`UNLOAD_TIMEOUT`].
fn unload(engine: &Engine, shared: &Shared, inbox: &mpsc::Receiver<Message>) {
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
struct Waiting<'a, 'js> {
    shared: &'a Shared,
    inbox: &'a mpsc::Receiver<Message>,
    /// When to stop waiting.
    deadline: Instant,
    /// The driver's `resume`.
    resume: Function<'js>,
}

impl Waiting<'_, '_> {
    /// Wait for one running process to reply and hand the reply to the
    /// plugin. False when none is running or the deadline passed.
    fn one(&self) -> bool {
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

/// Evaluate the driver with the host's callbacks; returns its functions.
fn install_driver<'js>(
    ctx: &Ctx<'js>,
    shared: &Rc<Shared>,
    positions: &Arc<BTreeMap<String, LineMap>>,
) -> rquickjs::Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;
    let s = Rc::clone(shared);
    host.set(
        "done",
        Function::new(ctx.clone(), move |id: f64, json: String| {
            s.settled
                .borrow_mut()
                .push((id as u64, Settled::Replied(json)));
        })?,
    )?;
    let s = Rc::clone(shared);
    let positions = Arc::clone(positions);
    host.set(
        "fail",
        Function::new(ctx.clone(), move |id: f64, message: String| {
            let message = positions::in_source(&positions, &message);
            s.settled
                .borrow_mut()
                .push((id as u64, Settled::Threw(message)));
        })?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "badReply",
        Function::new(ctx.clone(), move |id: f64, message: String| {
            s.settled
                .borrow_mut()
                .push((id as u64, Settled::Unreadable(message)));
        })?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "log",
        Function::new(
            ctx.clone(),
            move |id: Option<f64>, run_id: Option<String>, level: String, message: String| {
                s.log(id.map(|i| i as u64), run_id, &level, &message);
            },
        )?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "timer",
        Function::new(ctx.clone(), move |id: f64, ms: f64| {
            let ms = if ms > 0.0 { ms.min(1e9) } else { 0.0 }; // NaN is 0
            let due = Instant::now() + Duration::from_secs_f64(ms / 1000.0);
            let owner = s.attributed();
            s.timers.borrow_mut().push(Reverse((due, id as u64, owner)));
        })?,
    )?;
    let driver: Function = ctx.eval(DRIVER)?;
    driver.call((host,))
}

/// Drive the job queue, and the replies of processes the plugin started,
/// until `promise` settles.
fn settle<'js, T: rquickjs::FromJs<'js>>(
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

/// A failure as text: a thrown value through the driver's `describe`.
fn error_text<'js>(ctx: &Ctx<'js>, describe: &Function<'js>, error: rquickjs::Error) -> String {
    if !error.is_exception() {
        return error.to_string();
    }
    let thrown = ctx.catch();
    describe
        .call::<_, String>((thrown,))
        .unwrap_or_else(|_| "threw a value that cannot be shown".into())
}

/// The engine thread: load, then serve calls until every [`Instance`] is
/// dropped.
fn serve(
    program: Program,
    inbox: mpsc::Receiver<Message>,
    wake: mpsc::Sender<Message>,
    ready: mpsc::SyncSender<Result<Started, String>>,
    handoff: Arc<Handoff>,
) {
    let shared = Rc::new(Shared::new(wake));
    // Lines logged while loading carry the name the plugin is found under.
    *shared.name.borrow_mut() = program.default_name.clone();
    let mut engine = match Engine::build(&program, &shared, &inbox) {
        Ok((engine, started)) => {
            let name = match (&started.name, program.name_is_fixed) {
                (Some(own), false) if !own.is_empty() => own.clone(),
                _ => program.default_name.clone(),
            };
            *shared.name.borrow_mut() = name;
            let _ = ready.send(Ok(started));
            Some(engine)
        }
        Err(why) => {
            shared.kill_running();
            let _ = ready.send(Err(why));
            return;
        }
    };
    let mut next_id: u64 = 0;
    let mut pace = Pace::on_this_thread(handoff);
    loop {
        let waiting = shared.backlog.borrow_mut().pop_front();
        let message = match (waiting, shared.next_wake()) {
            (Some(request), _) => Ok(Message::Call(request)),
            _ if shared.closed.get() => Ok(Message::Closed),
            (None, None) => pace
                .recv(&inbox)
                .ok_or(mpsc::RecvTimeoutError::Disconnected),
            (None, Some(at)) => inbox.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match &engine {
            Some(current) => current.expire(&shared),
            None => drop(shared.expire(Instant::now())),
        }
        match message {
            Ok(Message::Wake) => {}
            Ok(Message::Watched) => {
                if let Some(engine) = &engine {
                    deliver_watched(engine, &shared, None);
                }
            }
            Ok(Message::Call(request)) => {
                next_id += 1;
                match &engine {
                    Some(engine) => start_call(engine, &shared, next_id, *request),
                    None => {
                        let _ = request.reply.send(Err(CallError::Crashed(
                            "the plugin's engine could not be rebuilt after a failure".into(),
                        )));
                    }
                }
            }
            Ok(Message::Exec(id, reply)) => {
                if let Some(engine) = &engine {
                    resume_exec(engine, &shared, id, reply);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Ok(Message::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                shared.kill_running();
                if let Some(engine) = &engine {
                    unload(engine, &shared, &inbox);
                }
                shared.watches.stop_all();
                return;
            }
        }
        let Some(current) = &engine else { continue };
        fire_timers(current, &shared);
        current.run_jobs(&shared);
        if settle_calls(current, &shared) {
            // Out of memory: start afresh so later calls have room.
            shared.fail_all("the plugin's engine was rebuilt after it ran out of memory");
            shared.timers.borrow_mut().clear();
            shared.kill_running();
            shared.watches.stop_all();
            engine = Engine::build(&program, &shared, &inbox)
                .ok()
                .map(|(e, _)| e);
        }
    }
}

/// A process the plugin started replied: settle its promise, as part of
/// the call that started it.
fn resume_exec(engine: &Engine, shared: &Shared, id: u64, reply: String) {
    let Some(process) = shared.running.borrow_mut().remove(&id) else {
        return;
    };
    let owner = process
        .owner
        .filter(|owner| shared.calls.borrow().contains_key(owner));
    shared.current.set(owner);
    let entered = engine.enter(shared, "resume", |_, resume| {
        resume.call::<_, ()>((id as f64, reply))
    });
    shared.current.set(None);
    if let Err(why) = entered {
        fail_entry(engine, shared, owner, why);
    }
}

/// Register a call and run its hook up to its first `await`.
fn start_call(engine: &Engine, shared: &Shared, id: u64, request: Request) {
    if shared.calls.borrow().is_empty() {
        engine.take_refused();
    }
    let hook = request.call.hook().as_str();
    let args = request.args;
    let run_id = request.call.run().run_id.clone();
    shared.calls.borrow_mut().insert(
        id,
        InFlight {
            call: request.call,
            deadline: request.limits.deadline,
            cancel: request.limits.cancel,
            reply: request.reply,
            dispatch: request.dispatch,
            span: request.span,
        },
    );
    deliver_watched(engine, shared, Some(id));
    shared.current.set(Some(id));
    let entered = engine.enter(shared, "call", |_, call| {
        call.call::<_, ()>((id as f64, hook, args, run_id))
    });
    shared.current.set(None);
    if let Err(why) = entered {
        fail_entry(engine, shared, Some(id), why);
    }
}

/// Hand the file-watch events that wait to the plugin (the flavor's
/// `host.watched(eventsJson)`), as part of `call` or of the call the loop
/// attributes them to. Only while a call is in flight: otherwise they wait
/// for the next call (see [`watch`]).
fn deliver_watched(engine: &Engine, shared: &Shared, call: Option<u64>) {
    if shared.calls.borrow().is_empty() {
        return;
    }
    let Some((events, dropped)) = shared.watches.take() else {
        return;
    };
    let owner = call.or_else(|| shared.attributed());
    if dropped > 0 {
        let limit = watch::MAX_QUEUED_EVENTS;
        let message = format!(
            "{dropped} file-watch events were dropped: at most {limit} wait for the plugin"
        );
        shared.log(owner, None, "warn", &message);
    }
    if events.is_empty() {
        return;
    }
    let batch = serde_json::to_string(&events).unwrap_or_else(|_| "[]".into());
    shared.current.set(owner);
    engine.interrupted.set(false);
    engine.interrupt_at.set(shared.earliest_deadline());
    let delivered = engine.context.with(|ctx| -> rquickjs::Result<()> {
        let key: rquickjs::Symbol = ctx.eval("Symbol.for(\"yohost.host\")")?;
        let host: Option<Object> = ctx.globals().get(key)?;
        match host
            .map(|h| h.get::<_, Option<Function>>("watched"))
            .transpose()?
        {
            Some(Some(watched)) => watched.call((batch,)),
            _ => Ok(()),
        }
    });
    shared.current.set(None);
    if let Err(why) = delivered {
        if engine.interrupted.get() {
            fail_entry(engine, shared, owner, why.to_string());
        } else {
            shared.log(
                owner,
                None,
                "error",
                &format!("file-watch events were not delivered: {why}"),
            );
        }
    }
}

/// Fire the timers that are due and whose call is still in flight.
fn fire_timers(engine: &Engine, shared: &Shared) {
    loop {
        let now = Instant::now();
        let due = {
            let mut timers = shared.timers.borrow_mut();
            match timers.peek() {
                Some(Reverse((at, ..))) if *at <= now => timers.pop().map(|Reverse(t)| t),
                _ => None,
            }
        };
        let Some((_, timer, owner)) = due else { return };
        let live = match owner {
            Some(call) => shared.calls.borrow().contains_key(&call),
            None => !shared.calls.borrow().is_empty(),
        };
        if !live {
            continue;
        }
        shared.current.set(owner);
        let entered = engine.enter(shared, "fire", |_, fire| {
            fire.call::<_, ()>((timer as f64,))
        });
        shared.current.set(None);
        if let Err(why) = entered {
            fail_entry(engine, shared, owner, why);
        }
        engine.run_jobs(shared);
    }
}

/// The driver itself failed (interrupted, or out of memory before the
/// plugin's code could catch anything): answer who it concerns.
fn fail_entry(engine: &Engine, shared: &Shared, call: Option<u64>, why: String) {
    if engine.interrupted.get() {
        engine.expire(shared);
        if let Some(id) = call {
            shared.answer(id, |_| {
                Err(CallError::Crashed(
                    "interrupted: it kept the plugin busy past another call's deadline".into(),
                ))
            });
        }
    } else if let Some(id) = call {
        shared.settled.borrow_mut().push((id, Settled::Broke(why)));
    }
}

/// Answer the calls that replied or failed. Returns whether one ran out of
/// memory (the engine must be rebuilt).
fn settle_calls(engine: &Engine, shared: &Shared) -> bool {
    let settled: Vec<_> = shared.settled.borrow_mut().drain(..).collect();
    let mut out_of_memory = false;
    for (id, outcome) in settled {
        let refused = !matches!(outcome, Settled::Replied(_)) && engine.take_refused();
        out_of_memory |= refused;
        shared.answer(id, |call| match outcome {
            _ if refused => Err(CallError::OutOfMemory(engine.memory_bytes)),
            Settled::Replied(json) => decode_json_reply(call, &json),
            Settled::Threw(message) => Err(CallError::Guest(message)),
            Settled::Unreadable(problem) => Err(CallError::BadReply(ReplyError {
                hook: call.hook(),
                problem,
            })),
            Settled::Broke(message) => Err(CallError::Crashed(message)),
        });
    }
    out_of_memory
}
