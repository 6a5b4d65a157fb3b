//! JSON-RPC over a sandboxed server process's standard input and output:
//! one JSON message a line, requests matched to answers by id, so calls
//! run side by side.
//!
//! Three threads serve the process: one writes what the calls send, one
//! reads (answers, the server's notifications and requests), one keeps the
//! last of its stderr for the message that says it exited. The process is
//! ended, with everything it started, when the link is dropped.

use crate::link::Failure;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStderr, ChildStdout, Command, Stdio as Piped};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use yohost::adapter::limits::MAX_REPLY_BYTES;
use yohost::adapter::sandbox::stderr::{
    read_stderr, Stderr, STDERR_BYTES_PER_SECOND, STDERR_LINES_PER_SECOND,
};
use yohost::adapter::sandbox::{PluginProcess, ProcessSandbox};

/// How much of the server's stderr the exit message quotes.
const STDERR_TAIL_BYTES: usize = 2048;

/// The most messages waiting for a server to read them: a server that
/// leaves more unread is ended as one that no longer reads its input.
const OUTBOX_MESSAGES: usize = 256;

/// The longest request `id` a server's request may have and be answered.
const MAX_ID_BYTES: usize = 256;

/// A running server process and its pending calls.
pub(crate) struct Stdio {
    shared: Arc<Shared>,
    outbox: mpsc::SyncSender<Vec<u8>>,
}

struct Shared {
    server: String,
    process: Mutex<PluginProcess>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, Failure>>>>,
    gone: Mutex<Option<String>>,
    list_changes: AtomicU64,
    next_id: AtomicU64,
    tail: Mutex<VecDeque<String>>,
    dispatch: tracing::Dispatch,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Stdio {
    /// Start `command` in `sandbox` (also allowed to read `extra`).
    pub(crate) fn start(
        server: &str,
        sandbox: &ProcessSandbox,
        mut command: Command,
        extra: &[std::path::PathBuf],
    ) -> std::io::Result<Stdio> {
        command
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::piped());
        let mut process = sandbox.spawn(sandbox.reserve()?, command, extra)?;
        let pipes = process.child();
        let (stdin, stdout, stderr) = (
            pipes.stdin.take().expect("piped"),
            pipes.stdout.take().expect("piped"),
            pipes.stderr.take().expect("piped"),
        );
        let shared = Arc::new(Shared {
            server: server.to_string(),
            process: Mutex::new(process),
            pending: Mutex::default(),
            gone: Mutex::default(),
            list_changes: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
            tail: Mutex::default(),
            dispatch: tracing::dispatcher::get_default(|d| d.clone()),
        });
        let (outbox, inbox) = mpsc::sync_channel::<Vec<u8>>(OUTBOX_MESSAGES);
        let writer = Arc::clone(&shared);
        thread("mcp-in", move || {
            let mut stdin = stdin;
            while let Ok(message) = inbox.recv() {
                if stdin
                    .write_all(&message)
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    writer.end("no longer reads its input");
                    break;
                }
            }
        })?;
        let (reader, replies) = (Arc::clone(&shared), outbox.clone());
        thread("mcp-out", move || reader.read_all(stdout, replies))?;
        let errors = Arc::clone(&shared);
        thread("mcp-err", move || errors.keep_stderr(stderr))?;
        Ok(Stdio { shared, outbox })
    }

    /// Send a request and wait for its answer. Dropping the future before
    /// the answer (the call's deadline, the run's cancel) tells the server
    /// with `notifications/cancelled`.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, Failure> {
        if let Some(why) = self.gone() {
            return Err(Failure::Gone(why));
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, tx);
        let mut waiting = Waiting {
            link: self,
            id,
            answered: false,
        };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = rx.await;
        waiting.answered = true;
        answer.unwrap_or_else(|_| {
            Err(Failure::Gone(
                self.gone().unwrap_or_else(|| "the server has gone".into()),
            ))
        })
    }

    /// Send a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send(&self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.shared.queue(&self.outbox, line);
    }

    /// Why the server has gone, if it has.
    pub(crate) fn gone(&self) -> Option<String> {
        lock(&self.shared.gone).clone()
    }

    /// How many `notifications/tools/list_changed` it has sent.
    pub(crate) fn list_changes(&self) -> u64 {
        self.shared.list_changes.load(Ordering::SeqCst)
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.shared.end("was stopped by the host");
        lock(&self.shared.process).end();
    }
}

/// A request waiting for its answer; dropped unanswered, it is cancelled.
struct Waiting<'a> {
    link: &'a Stdio,
    id: u64,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.answered || lock(&self.link.shared.pending).remove(&self.id).is_none() {
            return;
        }
        tracing::debug!(target: "yohost::mcp", server = %self.link.shared.server, request = self.id, "notifications/cancelled sent");
        self.link.notify(
            "notifications/cancelled",
            json!({"requestId": self.id, "reason": "the call's deadline passed, or its run was cancelled"}),
        );
    }
}

impl Shared {
    /// Mark the server gone (the first reason stays) and fail every
    /// pending call with it.
    fn end(&self, how: &str) {
        let why = {
            let mut gone = lock(&self.gone);
            gone.get_or_insert_with(|| {
                let tail: Vec<String> = lock(&self.tail).iter().cloned().collect();
                let mut why = format!("the MCP server `{}` {how}", self.server);
                if !tail.is_empty() {
                    why.push_str("; the last of its stderr: ");
                    why.push_str(&tail.join(" | "));
                }
                why
            })
            .clone()
        };
        for (_, waiting) in lock(&self.pending).drain() {
            let _ = waiting.send(Err(Failure::Gone(why.clone())));
        }
    }

    /// Queue `line` for the server to read, without waiting: a full queue
    /// ends the server, and a closed one means the writer found it gone
    /// (either way, calls then fail through their answer channels).
    fn queue(&self, outbox: &mpsc::SyncSender<Vec<u8>>, line: Vec<u8>) {
        if let Err(mpsc::TrySendError::Full(_)) = outbox.try_send(line) {
            self.end(&format!(
                "does not read its input: {OUTBOX_MESSAGES} messages wait for it"
            ));
        }
    }

    fn read_all(&self, stdout: ChildStdout, replies: mpsc::SyncSender<Vec<u8>>) {
        let _log = tracing::dispatcher::set_default(&self.dispatch);
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut reader)
                .take(MAX_REPLY_BYTES as u64 + 1)
                .read_until(b'\n', &mut line);
            match read {
                Ok(0) | Err(_) => break,
                Ok(_) if line.len() > MAX_REPLY_BYTES => {
                    return self.end(&format!(
                        "sent a message over the reply limit of {MAX_REPLY_BYTES} bytes"
                    ))
                }
                Ok(_) => self.receive(&line, &replies),
            }
        }
        // Give the process a moment to be seen exiting, and its stderr to
        // be read to the end.
        let since = Instant::now();
        while since.elapsed() < Duration::from_millis(500) && !lock(&self.process).has_exited() {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(20));
        if lock(&self.process).has_exited() {
            self.end("exited");
        } else {
            self.end("closed its output");
        }
    }

    fn receive(&self, line: &[u8], replies: &mpsc::SyncSender<Vec<u8>>) {
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            if !line.iter().all(u8::is_ascii_whitespace) {
                tracing::warn!(target: "yohost::plugin", plugin = %self.server, "the MCP server wrote a line that is not JSON-RPC on its output; ignored");
            }
            return;
        };
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (None, Some(id)) => {
                let Some(waiting) = id.as_u64().and_then(|id| lock(&self.pending).remove(&id))
                else {
                    return;
                };
                let answer = match (message.get("result"), message.get("error")) {
                    (_, Some(error)) => Err(Failure::Rpc {
                        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("an error without a message")
                            .to_string(),
                    }),
                    (Some(result), None) => Ok(result.clone()),
                    (None, None) => Err(Failure::Protocol(
                        "an answer with neither `result` nor `error`".into(),
                    )),
                };
                let _ = waiting.send(answer);
            }
            (Some(method), Some(id)) => {
                // A request whose id is too long to echo gets no answer.
                if id.to_string().len() > MAX_ID_BYTES {
                    return;
                }
                // The client offers none of the capabilities a server may
                // ask of it (sampling, roots, elicitation): only `ping`.
                let answer = if method == "ping" {
                    json!({"jsonrpc": "2.0", "id": id, "result": {}})
                } else {
                    let shown: String = method.chars().take(64).collect();
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("yohost does not serve `{shown}`")}})
                };
                let mut line = answer.to_string().into_bytes();
                line.push(b'\n');
                self.queue(replies, line);
            }
            (Some("notifications/tools/list_changed"), None) => {
                self.list_changes.fetch_add(1, Ordering::SeqCst);
            }
            (Some("notifications/message"), None) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                tracing::debug!(target: "yohost::plugin", plugin = %self.server, "{}", params.get("data").unwrap_or(&params));
            }
            _ => {}
        }
    }

    /// Log the server's stderr as the host bounds a plugin process's
    /// ([`read_stderr`]: lines cut at the log limit, so many a second), and
    /// keep its last [`STDERR_TAIL_BYTES`] for the message that says it
    /// exited.
    fn keep_stderr(&self, stderr: ChildStderr) {
        let _log = tracing::dispatcher::set_default(&self.dispatch);
        read_stderr(stderr, Instant::now, |line| match line {
            Stderr::Line(line) => {
                tracing::debug!(target: "yohost::plugin", plugin = %self.server, "stderr: {line}");
                let mut tail = lock(&self.tail);
                tail.push_back(line.to_string());
                while tail.iter().map(String::len).sum::<usize>() > STDERR_TAIL_BYTES
                    && tail.len() > 1
                {
                    tail.pop_front();
                }
            }
            Stderr::Dropped(lines) => tracing::debug!(
                target: "yohost::plugin",
                plugin = %self.server,
                "stderr: {lines} lines dropped: over the limit of {STDERR_LINES_PER_SECOND} lines or {} KiB a second",
                STDERR_BYTES_PER_SECOND / 1024
            ),
        });
    }
}

fn thread(name: &str, body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(body)
        .map(drop)
}
