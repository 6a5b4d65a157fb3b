//! One MCP session: one run of the plugins ([`ToolRun`]), named
//! `serve-<uuid>`, opened at the session's first `tools/list` or
//! `tools/call` and finished when the session ends. When the plugins change
//! the session's run is replaced by a new one of the same `run_id`, and the
//! client is told (`notifications/tools/list_changed`).

use crate::serve::client_logs::{Attached, ClientLogs};
use crate::serve::mapping;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use std::borrow::Cow;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use yohost::{PluginHost, ToolCallOutcome, ToolRun};

/// The newest protocol version yohost serves: the newest with sessions
/// (`initialize`), since a session is a run.
const PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// How long the directory must be quiet before a change is acted on: an
/// editor's save, or a package being copied, is many events.
const SETTLE: Duration = Duration::from_millis(300);

/// How many of a call's progress messages may wait to be sent to the
/// client; more are dropped (the MCP adapter bounds a call's messages too).
const PROGRESS_QUEUE: usize = 64;

/// What every session of one `yohost serve` shares.
pub struct Shared {
    host: PluginHost,
    /// Where each session's plugin log lines go to its client.
    logs: ClientLogs,
    /// The `finish` of runs whose session ended, awaited before the
    /// command exits.
    finishing: Mutex<tokio::task::JoinSet<()>>,
}

impl Shared {
    /// Sessions over `host`'s plugins, whose log lines `logs` sends to
    /// each session's client.
    pub fn new(host: PluginHost, logs: ClientLogs) -> Arc<Self> {
        Arc::new(Self {
            host,
            logs,
            finishing: Mutex::default(),
        })
    }

    /// Finish `run` in the background, once its calls under way end;
    /// not at all once the runtime is gone (the command is exiting).
    fn finish_later(&self, run: Arc<ToolRun>) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let mut finishing = self.finishing.lock().unwrap_or_else(|e| e.into_inner());
        while finishing.try_join_next().is_some() {}
        finishing.spawn(async move { run.finish().await });
    }

    /// Wait for the runs being finished (each `finish` is bounded).
    pub async fn finished(&self) {
        let mut finishing =
            std::mem::take(&mut *self.finishing.lock().unwrap_or_else(|e| e.into_inner()));
        while finishing.join_next().await.is_some() {}
    }
}

/// The run of a session: not opened yet, opened, or refused to start (a
/// required plugin was refused: the reason).
type Slot = Option<Result<Arc<ToolRun>, String>>;

/// A session's state, shared by its requests; its run is finished when the
/// last of them lets it go.
struct State {
    shared: Arc<Shared>,
    run_id: String,
    run: tokio::sync::Mutex<Slot>,
    /// While set, the run's plugin log lines go to the client.
    client_logs: Mutex<Option<Attached>>,
    /// Held while the session lives: what counts it among the sessions.
    _ticket: Option<Box<dyn Send + Sync>>,
}

impl State {
    /// The session's run, opened now if not yet.
    async fn run(&self) -> Result<Arc<ToolRun>, ErrorData> {
        let mut slot = self.run.lock().await;
        if slot.is_none() {
            *slot = Some(self.open().await);
        }
        let run = slot.clone().expect("just opened");
        run.map_err(|why| {
            ErrorData::internal_error(format!("the plugins' run cannot start: {why}"), None)
        })
    }

    async fn open(&self) -> Result<Arc<ToolRun>, String> {
        match ToolRun::open(&self.shared.host, self.run_id.clone()).await {
            Ok(run) => Ok(Arc::new(run)),
            Err(e) => {
                tracing::error!(run_id = %self.run_id, "the plugins' run cannot start: {e}");
                Err(e.to_string())
            }
        }
    }

    /// When the plugins differ from those of the session's run: a new run
    /// in its place (the old one finishes once its calls end). Whether the
    /// run was replaced.
    async fn refresh(&self) -> bool {
        let mut slot = self.run.lock().await;
        let Some(Ok(current)) = slot.clone() else {
            // Not opened yet (the next open sees the change), or refused
            // (opened again at the next request).
            let refused = slot.as_ref().is_some_and(|run| run.is_err());
            if refused {
                *slot = None;
            }
            return refused;
        };
        let changed = tokio::task::spawn_blocking(move || current.plugins_changed()).await;
        if !changed.unwrap_or(false) {
            return false;
        }
        if let Some(Ok(old)) = slot.replace(self.open().await) {
            self.shared.finish_later(old);
        }
        true
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if let Some(Ok(run)) = self.run.get_mut().take() {
            self.shared.finish_later(run);
        }
    }
}

/// The MCP server of one session: its tools are the plugins'.
#[derive(Clone)]
pub struct Session {
    state: Arc<State>,
}

impl Session {
    /// A new session over `shared`'s plugins, with a run id of its own;
    /// `ticket` is held while it lives.
    pub fn new(shared: Arc<Shared>, ticket: Option<Box<dyn Send + Sync>>) -> Self {
        let run_id = format!("serve-{}", uuid::Uuid::new_v4());
        tracing::info!(%run_id, "MCP session opened");
        Self {
            state: Arc::new(State {
                shared,
                run_id,
                run: tokio::sync::Mutex::new(None),
                client_logs: Mutex::default(),
                _ticket: ticket,
            }),
        }
    }

    /// Finish the session's run now, once its calls under way end (the
    /// session's end cancelled them).
    pub async fn finish(&self) {
        let run = self.state.run.lock().await.take();
        if let Some(Ok(run)) = run {
            run.finish().await;
        }
    }
}

/// Tell `peer` each time the plugins change, while the session lives.
async fn follow_changes(state: Weak<State>, peer: Peer<RoleServer>) {
    let Some(mut changes) = state.upgrade().map(|s| s.shared.host.changes()) else {
        return;
    };
    while changes.changed().await.is_ok() {
        // Until the directory is quiet.
        while tokio::time::timeout(SETTLE, changes.changed())
            .await
            .is_ok_and(|r| r.is_ok())
        {}
        let Some(state) = state.upgrade() else {
            return;
        };
        if state.refresh().await && peer.notify_tool_list_changed().await.is_err() {
            return;
        }
    }
}

impl ServerHandler for Session {
    #[allow(deprecated)] // MCP's logging: see `client_logs`.
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_protocol_version(PROTOCOL)
            .with_server_info(Implementation::new("yohost", env!("CARGO_PKG_VERSION")))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&PROTOCOL))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let state = &self.state;
        let attached = state
            .shared
            .logs
            .attach(&state.run_id, context.peer.clone());
        *state.client_logs.lock().unwrap_or_else(|e| e.into_inner()) = Some(attached);
        tokio::spawn(follow_changes(Arc::downgrade(&self.state), context.peer));
    }

    /// The least level of the plugin log lines the client gets.
    #[allow(deprecated)] // MCP's logging: see `client_logs`.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let state = &self.state;
        state.shared.logs.set_level(&state.run_id, request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let run = self.state.run().await?;
        let tools = run
            .tools()
            .iter()
            .map(|t| mapping::tool(t.as_ref()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let run = self.state.run().await?;
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let asked = request
            .meta
            .as_ref()
            .and_then(|meta| meta.get_progress_token());
        let token = context.meta.get_progress_token().or(asked);
        let outcome = match token {
            Some(token) => call_reporting(&run, &request.name, args, &context, token).await,
            None => run.call(&request.name, args, &context.ct).await,
        };
        // The client reads the call's log lines before its result.
        self.state.shared.logs.flush(&self.state.run_id).await;
        if let ToolCallOutcome::Cancelled = outcome {
            tracing::info!(run_id = %run.run_id(), tool = %request.name, "the call was cancelled");
        }
        mapping::outcome(&request.name, outcome).map(Into::into)
    }
}

/// `run`'s call of `name`, the messages its tool reports sent to the client
/// as `notifications/progress` for `token`, each before the call's result:
/// `progress` counts the messages so far, `message` is each.
async fn call_reporting(
    run: &ToolRun,
    name: &str,
    args: serde_json::Value,
    context: &RequestContext<RoleServer>,
    token: ProgressToken,
) -> ToolCallOutcome {
    let (queue, mut messages) = tokio::sync::mpsc::channel::<String>(PROGRESS_QUEUE);
    let sink: yoagent::ProgressFn = Arc::new(move |message| {
        let _ = queue.try_send(message);
    });
    let mut sent = 0u32;
    let send = |message: String, sent: u32| {
        let mut progress = ProgressNotificationParam::new(token.clone(), f64::from(sent));
        progress.message = Some(message);
        async {
            // A client that has gone gets nothing; the call ends as it ends.
            let _ = context.peer.notify_progress(progress).await;
        }
    };
    let call = run.call_reporting(name, args, &context.ct, Some(sink));
    tokio::pin!(call);
    loop {
        tokio::select! {
            outcome = &mut call => {
                while let Ok(message) = messages.try_recv() {
                    sent += 1;
                    send(message, sent).await;
                }
                return outcome;
            }
            Some(message) = messages.recv() => {
                sent += 1;
                send(message, sent).await;
            }
        }
    }
}
