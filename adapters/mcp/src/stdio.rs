//! A sandboxed server process as an `rmcp` transport: one JSON-RPC message
//! a line over its standard input and output.
//!
//! Three threads serve the process: one writes what the client sends, one
//! reads what the server sends (a line that is not a JSON-RPC message is
//! logged and passed over; one over the reply limit ends the connection),
//! one keeps the last of its stderr for the message that says it exited.
//! The process is ended, with everything it started, when its [`Process`]
//! is dropped.

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStderr, ChildStdout, Command, Stdio as Piped};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
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

/// The most messages read from a server and waiting for the client.
const INBOX_MESSAGES: usize = 256;

/// A running server process: dropped, it is ended.
pub(crate) struct Process {
    shared: Arc<Shared>,
}

/// The client's side of the process's pipes.
pub(crate) struct Pipes {
    shared: Arc<Shared>,
    outbox: mpsc::SyncSender<Vec<u8>>,
    inbox: tokio::sync::mpsc::Receiver<ServerJsonRpcMessage>,
}

struct Shared {
    server: String,
    process: Mutex<PluginProcess>,
    gone: Mutex<Option<String>>,
    /// Cancelled when the server has gone.
    ended: CancellationToken,
    tail: Mutex<VecDeque<String>>,
    dispatch: tracing::Dispatch,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Start `command` in `sandbox` (also allowed to read `extra`).
pub(crate) fn start(
    server: &str,
    sandbox: &ProcessSandbox,
    mut command: Command,
    extra: &[std::path::PathBuf],
) -> std::io::Result<(Process, Pipes)> {
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
        gone: Mutex::default(),
        ended: CancellationToken::new(),
        tail: Mutex::default(),
        dispatch: tracing::dispatcher::get_default(|d| d.clone()),
    });
    let (outbox, to_write) = mpsc::sync_channel::<Vec<u8>>(OUTBOX_MESSAGES);
    let writer = Arc::clone(&shared);
    thread("mcp-in", move || {
        let mut stdin = stdin;
        while let Ok(message) = to_write.recv() {
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
    let (read, inbox) = tokio::sync::mpsc::channel(INBOX_MESSAGES);
    let reader = Arc::clone(&shared);
    thread("mcp-out", move || reader.read_all(stdout, read))?;
    let errors = Arc::clone(&shared);
    thread("mcp-err", move || errors.keep_stderr(stderr))?;
    let pipes = Pipes {
        shared: Arc::clone(&shared),
        outbox,
        inbox,
    };
    Ok((Process { shared }, pipes))
}

impl Process {
    /// Why the server has gone, if it has.
    pub(crate) fn gone(&self) -> Option<String> {
        lock(&self.shared.gone).clone()
    }

    /// The last of the server's stderr, read while it runs.
    pub(crate) fn tail(&self) -> Tail {
        Tail(Arc::clone(&self.shared))
    }
}

/// The last of a server's stderr (at most [`STDERR_TAIL_BYTES`]), which
/// outlives its [`Process`].
pub(crate) struct Tail(Arc<Shared>);

impl Tail {
    /// The lines kept, joined by ` | `; empty when it wrote nothing.
    pub(crate) fn text(&self) -> String {
        lock(&self.0.tail)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.shared.end("was stopped by the host");
        lock(&self.shared.process).end();
    }
}

impl Transport<RoleClient> for Pipes {
    type Error = std::io::Error;

    /// Queue the message for the server to read, without waiting: a full
    /// queue ends the server (a server that stops reading its input while
    /// it asks the client things would otherwise stall the client).
    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let broken = |Gone(why)| std::io::Error::new(std::io::ErrorKind::BrokenPipe, why);
        let sent = match serde_json::to_vec(&item) {
            Err(e) => Err(std::io::Error::other(e)),
            Ok(mut line) => {
                line.push(b'\n');
                match self.outbox.try_send(line) {
                    Ok(()) => Ok(()),
                    Err(mpsc::TrySendError::Full(_)) => Err(broken(self.shared.end(&format!(
                        "does not read its input: {OUTBOX_MESSAGES} messages wait for it"
                    )))),
                    Err(mpsc::TrySendError::Disconnected(_)) => {
                        Err(broken(self.shared.end("no longer reads its input")))
                    }
                }
            }
        };
        std::future::ready(sent)
    }

    /// The next message the server sent; `None` once it has gone.
    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        tokio::select! {
            biased;
            message = self.inbox.recv() => message,
            () = self.shared.ended.cancelled() => None,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inbox.close();
        Ok(())
    }
}

/// The reason a server has gone.
struct Gone(String);

impl Shared {
    /// Mark the server gone (the first reason stays) and end the client's
    /// connection to it. Returns the reason.
    fn end(&self, how: &str) -> Gone {
        let why = {
            let mut gone = lock(&self.gone);
            gone.get_or_insert_with(|| {
                let tail: Vec<String> = lock(&self.tail).iter().cloned().collect();
                with_stderr(
                    format!("the MCP server `{}` {how}", self.server),
                    &tail.join(" | "),
                )
            })
            .clone()
        };
        if !self.ended.is_cancelled() {
            // Called from the client's task too, which logs elsewhere.
            tracing::dispatcher::with_default(&self.dispatch, || {
                tracing::debug!(target: "yohost::plugin", plugin = %self.server, phase = "server", "{why}");
            });
        }
        self.ended.cancel();
        Gone(why)
    }

    fn read_all(&self, stdout: ChildStdout, read: tokio::sync::mpsc::Sender<ServerJsonRpcMessage>) {
        let _log = tracing::dispatcher::set_default(&self.dispatch);
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            let got = (&mut reader)
                .take(MAX_REPLY_BYTES as u64 + 1)
                .read_until(b'\n', &mut line);
            match got {
                Ok(0) | Err(_) => break,
                Ok(_) if line.len() > MAX_REPLY_BYTES => {
                    self.end(&format!(
                        "sent a message over the reply limit of {MAX_REPLY_BYTES} bytes"
                    ));
                    return;
                }
                Ok(_) => {
                    if let Some(message) = self.parse(&line) {
                        if read.blocking_send(message).is_err() {
                            return;
                        }
                    }
                }
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

    /// A line as a message, or `None` (logged) for a line that is not one.
    fn parse(&self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let parsed = serde_json::from_slice(line);
        if parsed.is_err() {
            tracing::warn!(target: "yohost::plugin", plugin = %self.server, phase = "server", "the MCP server wrote a line that is not JSON-RPC on its output; ignored");
        }
        parsed.ok()
    }

    /// Log the server's stderr as the host bounds a plugin process's
    /// ([`read_stderr`]: lines cut at the log limit, so many a second), and
    /// keep its last [`STDERR_TAIL_BYTES`] for the message that says it
    /// exited.
    fn keep_stderr(&self, stderr: ChildStderr) {
        let _log = tracing::dispatcher::set_default(&self.dispatch);
        read_stderr(stderr, Instant::now, |line| match line {
            Stderr::Line(line) => {
                tracing::debug!(target: "yohost::plugin", plugin = %self.server, phase = "server", "stderr: {line}");
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
                phase = "server",
                "stderr: {lines} lines dropped: over the limit of {STDERR_LINES_PER_SECOND} lines or {} KiB a second",
                STDERR_BYTES_PER_SECOND / 1024
            ),
        });
    }
}

/// `message`, followed by the last of a server's stderr when it wrote any.
pub(crate) fn with_stderr(mut message: String, tail: &str) -> String {
    if !tail.is_empty() {
        message.push_str("; the last of its stderr: ");
        message.push_str(tail);
    }
    message
}

fn thread(name: &str, body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(body)
        .map(drop)
}
