//! One `node` process serving one plugin: started, loaded, called, killed.
//!
//! Three threads serve it: one writes frames to its stdin, one reads frames
//! from its stdout (replies, log lines, source requests) and one turns its
//! stderr into host log lines. A call waits for its reply on a oneshot.
//!
//! Failures, as every engine maps them (R1): a throw is
//! [`CallError::Guest`]; a frame outside the protocol, or over
//! [`MAX_FRAME_BYTES`], kills the process; a process that ends fails every
//! call in flight as [`CallError::Crashed`] ([`CallError::OutOfMemory`]
//! when V8 aborted it, which is what it does when the heap is exhausted).
//!
//! A call the host stops waiting for at its deadline *retires* the process:
//! code that overran cannot be trusted with new calls, so none is sent to
//! it ([`Process::takes_calls`]), but the calls of other runs already in
//! flight keep their own deadlines and may still answer. It is killed when
//! the last of them is done, or at the latest of their deadlines.
//!
//! When its [`Process`] is dropped (the plugin is unloaded), its stdin is
//! closed: the bootstrap runs the flavor's `unload` for at most a second
//! and says so; the host then ends the process with everything it started
//! ([`PluginProcess::end`]), at the latest after [`UNLOAD_GRACE`].
//!
//! The process runs in the plugin's kernel sandbox
//! ([`ProcessSandbox`](crate::sandbox::ProcessSandbox)), in a process group of its own, and dies with the
//! host.

use super::framing::{read_frame, write_frame, FrameError, MAX_FRAME_BYTES};
use super::launch::{Launch, StartError};
use super::protocol::{FromNode, ToNode};
use super::sources::Sources;
use crate::call::codec::{decode_json_reply, encode_json_args};
use crate::call::error::CallError;
use crate::call::plugin::CallLimits;
use crate::call::progress::ProgressReporter;
use crate::call::ui::UserInterface;
use crate::call::ui_requests::ask;
use crate::call::unloads::Unload;
use crate::engines::js::glue::{log_line, Caller, Shaped};
use crate::model::sync::lock;
use crate::sandbox::stderr::{
    read_stderr, Stderr, STDERR_BYTES_PER_SECOND, STDERR_LINES_PER_SECOND,
};
use crate::sandbox::PluginProcess;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::BufReader;
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use yohost_contract::{Hook, HookCall, ReplyError};

/// How long a dropped process may take to run its `unload` and exit (the
/// bootstrap gives `unload` one second) before it is killed.
pub const UNLOAD_GRACE: Duration = Duration::from_millis(1500);

/// What the writer thread sends on the process's stdin.
enum Outgoing {
    /// One frame.
    Frame(Vec<u8>),
    /// Close stdin: the plugin is being dropped.
    Close,
}

/// A running process with the plugin loaded.
pub struct Process {
    shared: Arc<Shared>,
}

/// A call waiting for its reply.
struct Pending {
    hook: Hook,
    run_id: String,
    reply: oneshot::Sender<Result<Value, CallError>>,
    caller: Caller,
    /// When the host stops waiting for it.
    deadline: Instant,
    /// The app's user interface it may ask (`None`: headless).
    ui: Option<Arc<dyn UserInterface>>,
    /// Where its progress goes (`None`: no one listens).
    progress: Option<ProgressReporter>,
}

/// What the threads and the callers share.
struct Shared {
    name: Mutex<String>,
    child: Mutex<PluginProcess>,
    to_node: mpsc::Sender<Outgoing>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
    /// The process was killed or ended: no call reaches it.
    dead: AtomicBool,
    /// A call overran its deadline: no new call goes to the process, and
    /// it is killed once the calls in flight are done.
    retired: AtomicBool,
    /// Where the outcome of loading goes, until it came.
    loading: Mutex<Option<mpsc::SyncSender<Result<Shaped, StartError>>>>,
    /// Its TypeScript, as it asks for it.
    sources: Sources,
    memory_bytes: u64,
    /// The subscriber of whoever started the process: lines outside calls.
    dispatch: tracing::Dispatch,
}

impl Process {
    /// Start `node`, send it `init`, and wait until the plugin loaded.
    pub fn start(launch: &Launch) -> Result<(Process, Shaped), StartError> {
        // The process's private temporary folder is its own to write, for
        // Node's permission model as for the kernel's.
        let command_for = |scratch: &Path| {
            let mut command = launch.sandbox.command(&launch.node);
            let own_temp = ["--allow-fs-read=", "--allow-fs-write="].map(|flag| {
                let mut flag = OsString::from(flag);
                flag.push(scratch);
                flag
            });
            let (permission, rest) = launch.args.split_at(1.min(launch.args.len()));
            command
                .args(permission)
                .args(own_temp)
                .args(rest)
                .current_dir(&launch.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            command
        };
        let mut child = launch
            .sandbox
            .reserve()
            .and_then(|slot| {
                launch
                    .sandbox
                    .spawn_with(slot, command_for, &launch.runtime)
            })
            .map_err(|error| StartError::Spawn {
                node: launch.node.clone(),
                error,
            })?;
        let pipes = child.child();
        let (stdin, stdout, stderr) = (
            pipes.stdin.take().expect("piped"),
            pipes.stdout.take().expect("piped"),
            pipes.stderr.take().expect("piped"),
        );
        let (to_node, outbox) = mpsc::channel();
        let (loaded_tx, loaded) = mpsc::sync_channel(1);
        let shared = Arc::new(Shared {
            name: Mutex::new(launch.default_name.clone()),
            child: Mutex::new(child),
            to_node,
            pending: Mutex::default(),
            next_id: AtomicU64::new(1),
            dead: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            loading: Mutex::new(Some(loaded_tx)),
            sources: Sources::new(launch.entry.clone(), launch.own.clone()),
            memory_bytes: launch.memory_bytes,
            dispatch: tracing::dispatcher::get_default(|d| d.clone()),
        });
        let process = Process {
            shared: Arc::clone(&shared),
        };
        let spawned = spawn_thread("node-in", move || write_all(stdin, outbox))
            .and_then(|()| {
                let reader = Arc::clone(&shared);
                spawn_thread("node-out", move || reader.read_all(stdout))
            })
            .and_then(|()| {
                let errors = Arc::clone(&shared);
                spawn_thread("node-err", move || errors.log_stderr(stderr))
            });
        if let Err(error) = spawned {
            return Err(StartError::Spawn {
                node: launch.node.clone(),
                error,
            });
        }
        shared.send(launch.init.clone());
        match loaded.recv_timeout(launch.load_timeout) {
            Ok(Ok(ready)) => {
                let own = ready.name.as_ref().filter(|n| !n.is_empty());
                if let Some(own) = own.filter(|_| !launch.name_is_fixed) {
                    own.clone_into(&mut lock(&shared.name));
                }
                Ok((process, ready))
            }
            Ok(Err(e)) => Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(StartError::TooSlow(launch.load_timeout)),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(StartError::Ended("it stopped without a word".into()))
            }
        }
    }

    /// Whether the process was killed or ended.
    pub fn is_dead(&self) -> bool {
        self.shared.dead.load(Ordering::SeqCst)
    }

    /// Whether a call overran on the process, so that it takes no new
    /// calls (it may still be finishing others).
    pub fn is_retired(&self) -> bool {
        self.shared.retired.load(Ordering::SeqCst)
    }

    /// Whether new calls may go to the process: it is alive and no call
    /// overran on it. A new run needs a new process otherwise.
    pub fn takes_calls(&self) -> bool {
        !self.is_dead() && !self.is_retired()
    }

    /// Run one hook call. A call the host stops waiting for is aborted in
    /// the plugin (its `ctx.signal`); past its deadline, the process is
    /// retired as well.
    pub async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        let shared = &self.shared;
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        // An argument that cannot be encoded fails the call, as on every
        // engine: the plugin never receives `null` in its place.
        let args = RawValue::from_string(encode_json_args(&call)?)
            .map_err(|e| CallError::Encode(e.to_string()))?;
        let frame = ToNode::Call {
            id,
            hook: call.hook().as_str(),
            args: &args,
            run_id: &call.run().run_id,
            asks: limits.ui.is_some(),
        }
        .to_bytes();
        // The argument is held once, in the frame: the typed call goes now.
        let (hook, run_id) = (call.hook(), call.run().run_id.clone());
        drop(call);
        let (reply, answer) = oneshot::channel();
        lock(&shared.pending).insert(
            id,
            Pending {
                hook,
                run_id,
                reply,
                caller: Caller::current(),
                deadline: limits.deadline,
                ui: limits.ui.clone(),
                progress: limits.progress.clone().map(ProgressReporter::new),
            },
        );
        if self.is_dead() {
            lock(&shared.pending).remove(&id);
            return Err(CallError::Crashed("the node process has ended".into()));
        }
        shared.send(frame);
        let mut waiting = Waiting {
            shared,
            id,
            limits: &limits,
            answered: false,
        };
        let replied = crate::call::handoff::Wait::Spin.reply(answer).await;
        waiting.answered = true;
        replied.unwrap_or_else(|| {
            Err(CallError::Crashed(
                "the node process ended before it replied".into(),
            ))
        })
    }
}

impl Drop for Process {
    /// Let the plugin unload (bounded by [`UNLOAD_GRACE`]), off the
    /// caller's thread, then make sure the process is gone.
    fn drop(&mut self) {
        if self.shared.dead.load(Ordering::SeqCst) || self.shared.retired.load(Ordering::SeqCst) {
            self.shared.kill();
            return;
        }
        let _ = self.shared.to_node.send(Outgoing::Close);
        let shared = Arc::clone(&self.shared);
        // Dropping the host waits for this, so that a program that ends
        // leaves no process of a plugin behind.
        let (unload, ending) = Unload::start();
        crate::call::unloads::started(unload, Instant::now() + UNLOAD_GRACE * 2);
        let reaper = spawn_thread("node-unload", move || {
            let _ending = ending;
            let deadline = Instant::now() + UNLOAD_GRACE;
            while Instant::now() < deadline {
                let exited = lock(&shared.child).has_exited();
                if exited {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            shared.kill();
        });
        if reaper.is_err() {
            self.shared.kill();
        }
    }
}

/// A call in flight: when the host stops waiting for it, the plugin is told.
struct Waiting<'a> {
    shared: &'a Arc<Shared>,
    id: u64,
    limits: &'a CallLimits,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        lock(&self.shared.pending).remove(&self.id);
        let overran = Instant::now() >= self.limits.deadline;
        let (name, message) = if overran {
            ("TimeoutError", "the hook ran past its deadline")
        } else {
            ("AbortError", "the run was cancelled")
        };
        self.shared.send(
            ToNode::Abort {
                id: self.id,
                name,
                message,
            }
            .to_bytes(),
        );
        if overran {
            self.shared.retire();
        } else {
            self.shared.settle();
        }
    }
}

impl Shared {
    fn send(&self, frame: Vec<u8>) {
        let _ = self.to_node.send(Outgoing::Frame(frame));
    }

    /// Ask call `call`'s user interface `request` (request `id`, see
    /// [`ask`]): headless for a call without one, or that has ended.
    fn ask(&self, id: u64, call: u64, request: String) {
        let asking = lock(&self.pending)
            .get(&call)
            .map(|p| (p.ui.clone(), p.run_id.clone()));
        let (ui, run_id) = asking.unwrap_or_default();
        let to_node = self.to_node.clone();
        ask(
            ui,
            lock(&self.name).clone(),
            run_id,
            &request,
            move |reply| {
                if let Ok(reply) = RawValue::from_string(reply) {
                    let frame = ToNode::Answer { id, reply: &reply }.to_bytes();
                    let _ = to_node.send(Outgoing::Frame(frame));
                }
            },
        );
    }

    /// No new call goes to the process; it is killed when the calls in
    /// flight are done, or at the latest of their deadlines.
    fn retire(self: &Arc<Shared>) {
        self.retired.store(true, Ordering::SeqCst);
        let latest = lock(&self.pending).values().map(|p| p.deadline).max();
        let Some(latest) = latest else {
            self.kill();
            return;
        };
        let me = Arc::clone(self);
        let timer = spawn_thread("node-retired", move || {
            while Instant::now() < latest && !me.dead.load(Ordering::SeqCst) {
                std::thread::sleep(
                    latest
                        .saturating_duration_since(Instant::now())
                        .min(Duration::from_millis(50)),
                );
            }
            me.kill();
        });
        if timer.is_err() {
            self.kill();
        }
    }

    /// A retired process with no call left in flight is killed.
    fn settle(&self) {
        if self.retired.load(Ordering::SeqCst) && lock(&self.pending).is_empty() {
            self.kill();
        }
    }

    /// Kill the process and everything it started; every call still
    /// waiting fails. Returns how it ended, the first time.
    fn kill(&self) -> Option<std::process::ExitStatus> {
        self.dead.store(true, Ordering::SeqCst);
        let mut child = lock(&self.child);
        child.end()
    }

    /// Serve frames from stdout until it ends or breaks the protocol, then
    /// fail whatever still waits.
    fn read_all(&self, stdout: ChildStdout) {
        let mut stdout = BufReader::with_capacity(64 * 1024, stdout);
        let why = loop {
            let body = match read_frame(&mut stdout, MAX_FRAME_BYTES) {
                Ok(body) => body,
                Err(FrameError::Ended) => break None,
                Err(e) => break Some(format!("it broke the protocol: {e}")),
            };
            match FromNode::parse(&body) {
                Ok(message) => self.handle(message),
                Err(e) => break Some(format!("it broke the protocol: {e}")),
            }
        };
        let killed = self.dead.swap(true, Ordering::SeqCst);
        if why.is_some() {
            self.kill();
        }
        let failure = self.ended(killed, why);
        if let Some(loading) = lock(&self.loading).take() {
            let _ = loading.send(Err(StartError::Ended(failure.to_string())));
        }
        let waiting: Vec<Pending> = lock(&self.pending).drain().map(|(_, p)| p).collect();
        for pending in waiting {
            let _ = pending.reply.send(Err(failure.clone()));
        }
    }

    /// What the end of the process means for the calls still waiting.
    fn ended(&self, killed: bool, why: Option<String>) -> CallError {
        if let Some(why) = why {
            return CallError::Crashed(why);
        }
        if killed {
            return CallError::Crashed("the node process was killed".into());
        }
        // stdout closed: the process is ending; give it a moment, then make
        // sure (a plugin could close its stdout and go on).
        let deadline = Instant::now() + Duration::from_millis(500);
        let exited = loop {
            let exited = lock(&self.child).has_exited();
            if exited || Instant::now() >= deadline {
                break exited;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let status = self.kill().filter(|_| exited);
        match status {
            Some(status) if aborted(&status) => CallError::OutOfMemory(self.memory_bytes),
            Some(status) => CallError::Crashed(format!("the node process ended: {status}")),
            None => CallError::Crashed("the node process closed its stdout".into()),
        }
    }

    fn handle(&self, message: FromNode) {
        let answer = |id: u64, outcome: &dyn Fn(Hook) -> Result<Value, CallError>| {
            let pending = lock(&self.pending).remove(&id);
            if let Some(p) = pending {
                let _ = p.reply.send(outcome(p.hook));
            }
            self.settle();
        };
        match message {
            FromNode::Ask { id, call, request } => self.ask(id, call, request),
            FromNode::Progress { id, message } => {
                let pending = lock(&self.pending);
                if let Some(reporter) = pending.get(&id).and_then(|p| p.progress.as_ref()) {
                    reporter.report(&message);
                }
            }
            FromNode::Source { id, path } => {
                let (code, error) = match self.sources.strip(&path) {
                    Ok(code) => (Some(code), None),
                    Err(why) => (None, Some(why)),
                };
                self.send(
                    ToNode::Source {
                        id,
                        code: code.as_deref(),
                        error: error.as_deref(),
                    }
                    .to_bytes(),
                );
            }
            FromNode::Ready(shaped) => self.loaded(Ok(shaped)),
            FromNode::Refused { message } => {
                self.loaded(Err(StartError::Refused(self.sources.in_source(&message))))
            }
            // Ended now, while what it started is still below it.
            FromNode::Unloaded => drop(self.kill()),
            FromNode::Done { id, reply } => {
                answer(id, &|hook| decode_json_reply(hook, reply.get()))
            }
            FromNode::Fail { id, message } => {
                let message = self.sources.in_source(&message);
                answer(id, &|_| Err(CallError::Guest(message.clone())))
            }
            FromNode::BadReply { id, message } => answer(id, &|hook| {
                Err(CallError::BadReply(ReplyError {
                    hook,
                    problem: message.clone(),
                }))
            }),
            FromNode::TooLarge { id, bytes } => {
                answer(id, &|_| Err(CallError::ReplyTooLarge(bytes)))
            }
            FromNode::Log {
                id,
                run_id,
                level,
                message,
            } => self.log(id, run_id, &level, &message),
        }
    }

    fn loaded(&self, outcome: Result<Shaped, StartError>) {
        if let Some(loading) = lock(&self.loading).take() {
            let _ = loading.send(outcome);
        }
    }

    /// A line of the plugin: in its call's span and subscriber, with the
    /// call's run id, when the call is still waiting.
    fn log(&self, id: Option<u64>, run_id: Option<String>, level: &str, message: &str) {
        let name = lock(&self.name).clone();
        let pending = lock(&self.pending);
        let owner = id
            .and_then(|id| pending.get(&id))
            .map(|owner| (&owner.caller, owner.run_id.as_str()));
        log_line(owner, Some(&self.dispatch), run_id, &name, level, message);
    }

    /// Node's own messages (warnings, fatal errors) go to the host's log,
    /// bounded as [`read_stderr`] bounds them.
    fn log_stderr(&self, stderr: std::process::ChildStderr) {
        read_stderr(stderr, Instant::now, |line| {
            let name = lock(&self.name).clone();
            tracing::dispatcher::with_default(&self.dispatch, || match line {
                Stderr::Line(line) => tracing::warn!(plugin = %name, "node: {line}"),
                Stderr::Dropped(lines) => tracing::warn!(
                    plugin = %name,
                    "node: {lines} lines of its standard error dropped: over the limit of {STDERR_LINES_PER_SECOND} lines or {} KiB a second",
                    STDERR_BYTES_PER_SECOND / 1024
                ),
            });
        });
    }
}

/// Write frames to stdin until the process or every sender is gone, or
/// the plugin is dropped (stdin is closed then).
fn write_all(stdin: ChildStdin, outbox: mpsc::Receiver<Outgoing>) {
    let mut stdin = std::io::BufWriter::new(stdin);
    while let Ok(Outgoing::Frame(frame)) = outbox.recv() {
        if write_frame(&mut stdin, &frame).is_err() {
            break;
        }
    }
}

fn spawn_thread(role: &str, run: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("yohost-{role}"))
        .spawn(run)
        .map(drop)
}

/// Whether the process was ended by SIGABRT: V8's answer to an exhausted
/// heap.
#[cfg(unix)]
fn aborted(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(6)
}

#[cfg(not(unix))]
fn aborted(_status: &std::process::ExitStatus) -> bool {
    false
}
