//! One MCP server as a yohost plugin with the `tools` and `call_tool`
//! hooks, and its life across runs.
//!
//! - The server is started when the plugin loads and lives across runs.
//! - Each run takes a snapshot of the tools when it opens; a server that
//!   said its tools changed (`notifications/tools/list_changed`) is asked
//!   for them again when the next run opens.
//! - A server that has gone fails its calls with a message that names it.
//!   The next run starts it again: at once the first time, then after 1 s,
//!   2 s, 4 s ... (at most a minute) while it keeps dying young.
//! - Dropping the plugin ends the server's process and what it started.

use crate::convert::{tool_reply, tool_spec};
use crate::link::{Answers, Failure, Link, Remote};
use crate::oauth::Authorizer;
use crate::stdio::{self, with_stderr, Tail};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use yohost::adapter::sandbox::ProcessSandbox;
use yohost::contract::{Hook, HookCall, HookReply, ReplyError, RunInfo, ToolSpec};
use yohost::{CallError, CallLimits, Plugin, PluginRun};

/// The longest a restarted server waits before it is started again.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// A server that lived this long before it went is started again at once.
const LIVED_LONG: Duration = Duration::from_secs(60);

/// How a server is started.
pub(crate) enum Start {
    /// A process in the plugin's sandbox.
    Stdio {
        sandbox: Box<ProcessSandbox>,
        program: PathBuf,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
        /// What the sandbox must let it read besides its grants: the
        /// program itself.
        extra: Vec<PathBuf>,
    },
    /// A remote server.
    Http(Remote),
}

/// A server: how to start it, and its connection.
pub(crate) struct Server {
    pub name: String,
    pub start: Start,
    /// Bounds starting it, its handshake and a listing of its tools.
    pub connect_timeout: Duration,
    /// Loaded for a check, which opens no connection to a remote server:
    /// its runs list no tools and connect to nothing.
    pub unconnected: bool,
    /// Shows a person where to authorize a remote server that asks.
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// What the server's requests are answered with: its roots (the
    /// plugin's granted folders), and the embedder's handler of its
    /// questions for the user and the model.
    pub answers: Answers,
    pub state: tokio::sync::Mutex<State>,
}

/// A server's connection and the tools it last listed.
#[derive(Default)]
pub(crate) struct State {
    pub link: Option<Arc<Link>>,
    pub tools: Arc<Vec<ToolSpec>>,
    /// The server's count of tool-list changes when its tools were listed.
    pub seen: u64,
    /// When it was last started, and how many times in a row it was
    /// started again after dying young.
    pub started: Option<Instant>,
    pub restarts: u32,
}

/// A connection being opened: a started process, or a remote server's
/// address.
enum Opening<'a> {
    Process(stdio::Process, stdio::Pipes),
    Http(&'a Remote),
}

/// What connecting gave.
pub(crate) struct Connected {
    pub link: Link,
    pub tools: Vec<ToolSpec>,
    pub seen: u64,
    pub info: String,
    pub warnings: Vec<String>,
}

impl Server {
    /// Start the server (or open its connection), shake hands and list its
    /// tools, within the connect timeout.
    pub(crate) async fn connect(&self) -> Result<Connected, String> {
        let timeout = self.connect_timeout;
        // A process is started first, so the last of its stderr can say
        // why it did not answer in time.
        let mut tail = None;
        let opening = match &self.start {
            Start::Stdio {
                sandbox,
                program,
                args,
                env,
                cwd,
                extra,
            } => {
                let mut command = sandbox.command(program);
                command
                    .args(args)
                    .envs(env.iter().cloned())
                    .current_dir(cwd);
                let started = stdio::start(&self.name, sandbox, command, extra)
                    .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
                tail = Some(started.0.tail());
                Opening::Process(started.0, started.1)
            }
            Start::Http(remote) => Opening::Http(remote),
        };
        let steps = async {
            let link = match opening {
                Opening::Process(process, pipes) => {
                    Link::stdio(&self.name, process, pipes, &self.answers).await?
                }
                Opening::Http(remote) => {
                    Link::http(&self.name, remote, self.authorizer.clone(), &self.answers).await?
                }
            };
            let seen = link.list_changes();
            let listed = link.list_tools().await?;
            Ok::<_, Failure>((link, seen, listed))
        };
        let (link, seen, listed) = tokio::time::timeout(timeout, steps)
            .await
            .map_err(|_| {
                let late = format!("the MCP server `{}` did not answer `initialize` and `tools/list` within {timeout:?}", self.name);
                with_stderr(late, &tail.as_ref().map(Tail::text).unwrap_or_default())
            })?
            .map_err(|e| match e {
                Failure::Gone(why) => why,
                other => format!("the MCP server `{}` {other}", self.name),
            })?;
        let info = link.info().to_string();
        let (tools, warnings) = specs(&listed);
        Ok(Connected {
            link,
            tools,
            seen,
            info,
            warnings,
        })
    }

    /// The connection and tools a new run gets: the server started again
    /// if it has gone, its tools listed again if they changed.
    async fn for_run(&self) -> Result<(Arc<Link>, Arc<Vec<ToolSpec>>), CallError> {
        let mut state = self.state.lock().await;
        let live = state.link.as_ref().filter(|l| l.gone().is_none()).cloned();
        let Some(link) = live else {
            return self.start_again(&mut state).await;
        };
        let changes = link.list_changes();
        if changes != state.seen {
            match tokio::time::timeout(self.connect_timeout, link.list_tools()).await {
                Ok(Ok(listed)) => {
                    let (tools, warnings) = specs(&listed);
                    for warning in warnings {
                        tracing::warn!(target: "yohost::plugin", plugin = %self.name, "{warning}");
                    }
                    state.tools = Arc::new(tools);
                    state.seen = changes;
                }
                Ok(Err(e)) => {
                    tracing::warn!(target: "yohost::plugin", plugin = %self.name, "its tools changed, and listing them again failed (this run keeps the last list): {e}")
                }
                Err(_) => {
                    tracing::warn!(target: "yohost::plugin", plugin = %self.name, "its tools changed, and listing them again took longer than {:?} (this run keeps the last list)", self.connect_timeout)
                }
            }
        }
        Ok((link, Arc::clone(&state.tools)))
    }

    async fn start_again(
        &self,
        state: &mut State,
    ) -> Result<(Arc<Link>, Arc<Vec<ToolSpec>>), CallError> {
        let why = state
            .link
            .as_ref()
            .and_then(|l| l.gone())
            .unwrap_or_else(|| format!("the MCP server `{}` is not connected", self.name));
        if let Some(started) = state.started {
            if started.elapsed() >= LIVED_LONG {
                state.restarts = 0;
            }
            let wait = backoff(state.restarts);
            if started.elapsed() < wait {
                return Err(CallError::Crashed(format!(
                    "{why}; it is started again {:?} after its last start",
                    wait
                )));
            }
        }
        if state.started.is_some() {
            state.restarts += 1;
        }
        state.started = Some(Instant::now());
        state.link = None;
        let connected = self
            .connect()
            .await
            .map_err(|e| CallError::Crashed(format!("{why}; starting it again failed: {e}")))?;
        tracing::info!(target: "yohost::plugin", plugin = %self.name, server = %connected.info, "MCP server connected");
        let link = Arc::new(connected.link);
        state.link = Some(Arc::clone(&link));
        state.tools = Arc::new(connected.tools);
        state.seen = connected.seen;
        Ok((link, Arc::clone(&state.tools)))
    }
}

/// How long after its last start a server that died young waits, the
/// `restarts`-th time in a row: none the first time, then 1 s, 2 s, 4 s ...
fn backoff(restarts: u32) -> Duration {
    match restarts {
        0 => Duration::ZERO,
        n => Duration::from_secs(1u64 << (n - 1).min(6)).min(MAX_BACKOFF),
    }
}

/// The listed tools as yohost tools; a tool that cannot be one is left
/// out, with a warning.
fn specs(listed: &[serde_json::Value]) -> (Vec<ToolSpec>, Vec<String>) {
    let mut tools: Vec<ToolSpec> = Vec::new();
    let mut warnings = Vec::new();
    for tool in listed {
        match tool_spec(tool) {
            Ok(spec) if tools.iter().any(|t| t.name == spec.name) => warnings.push(format!(
                "it lists the tool `{}` twice; the first is kept",
                spec.name
            )),
            Ok(spec) => tools.push(spec),
            Err(e) => warnings.push(format!("{e}: left out")),
        }
    }
    (tools, warnings)
}

/// The plugin: one server, shared by every run.
pub(crate) struct McpPlugin(pub Arc<Server>);

#[async_trait::async_trait]
impl Plugin for McpPlugin {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        if self.0.unconnected {
            return Ok(Arc::new(Unconnected(self.0.name.clone())));
        }
        let (link, tools) = self.0.for_run().await?;
        Ok(Arc::new(McpRun {
            server: self.0.name.clone(),
            link,
            tools,
        }))
    }
}

/// A run of a remote server loaded for a check: no tools, no connection.
struct Unconnected(String);

#[async_trait::async_trait]
impl PluginRun for Unconnected {
    async fn call(&self, call: HookCall, _limits: CallLimits) -> Result<Value, CallError> {
        match call {
            HookCall::Tools(_) => Ok(HookReply::Tools(Vec::new()).to_json()),
            _ => Err(CallError::Guest(format!(
                "the MCP server `{}` was loaded for a check, which opens no connection",
                self.0
            ))),
        }
    }
}

/// One run's view: the connection and the tools as the run opened.
struct McpRun {
    server: String,
    link: Arc<Link>,
    tools: Arc<Vec<ToolSpec>>,
}

#[async_trait::async_trait]
impl PluginRun for McpRun {
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        match call {
            HookCall::Tools(_) => Ok(HookReply::Tools(self.tools.as_ref().clone()).to_json()),
            HookCall::CallTool(args) => {
                if !self.tools.iter().any(|t| t.name == args.tool) {
                    return Err(CallError::Guest(format!(
                        "the MCP server `{}` listed no tool `{}` when this run began",
                        self.server, args.tool
                    )));
                }
                match self
                    .link
                    .call_tool(&args.tool, args.args, limits.progress)
                    .await
                {
                    Ok(result) => tool_reply(&result)
                        .map(|reply| reply.to_json())
                        .map_err(|problem| bad_reply(&self.server, &problem)),
                    Err(Failure::Gone(why)) => Err(CallError::Crashed(why)),
                    // The server failed the call: its own words may hold
                    // anything, so they go to the log, and the model reads
                    // the host's fixed text (an `isError` result, by
                    // contrast, is the tool's own answer for the model).
                    Err(Failure::Rpc { code, message }) => Err(CallError::Guest(format!(
                        "the MCP server `{}` answered `tools/call` with error {code}: {message}",
                        self.server
                    ))),
                    Err(Failure::Protocol(problem)) => Err(bad_reply(&self.server, &problem)),
                }
            }
            other => Err(CallError::Guest(format!(
                "an MCP server has no `{}` hook",
                other.hook()
            ))),
        }
    }
}

fn bad_reply(server: &str, problem: &str) -> CallError {
    CallError::BadReply(ReplyError {
        hook: Hook::CallTool,
        problem: format!("the MCP server `{server}` answered `tools/call` with {problem}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_keeps_dying_young_waits_longer_each_time() {
        let waits: Vec<u64> = (0..9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4, 8, 16, 32, 60, 60]);
    }
}
