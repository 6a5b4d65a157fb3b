//! The protocol over either transport, by `rmcp`'s client: the
//! `initialize` handshake, `tools/list` and `tools/call`, and the answers
//! to what a server asks of its client. The results are read as JSON by
//! [`crate::convert`].

use crate::oauth::{self, Authorizer, OAuthSettings};
use crate::progress::{Progress, Routed};
use crate::requests::ServerRequestHandler;
use crate::stdio::{self, Process};
use crate::tokens::TokenFile;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, ListToolsRequest, PaginatedRequestParams, ProtocolVersion,
};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceError};
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tracing::instrument::WithSubscriber;
use yoagent::ProgressFn;
use yohost::adapter::limits::MAX_REPLY_BYTES;

/// The protocol version yohost asks for: the newest with an `initialize`
/// handshake.
const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// The most pages of tools one server may list.
const MAX_PAGES: usize = 64;

/// The most tools one server may list, over all its pages; their JSON may
/// hold at most the reply limit ([`MAX_REPLY_BYTES`]) in all.
const MAX_TOOLS: usize = 1000;

/// Why a request failed.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// The server has gone: it exited, closed its output, or broke the
    /// protocol beyond repair. The text names it.
    Gone(String),
    /// The server answered with a JSON-RPC error.
    Rpc { code: i64, message: String },
    /// The answer did not fit the protocol.
    Protocol(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Gone(why) => f.write_str(why),
            Failure::Rpc { code, message } => write!(f, "error {code}: {message}"),
            Failure::Protocol(problem) => write!(f, "broke the protocol: {problem}"),
        }
    }
}

/// A remote server: where it is, the headers it is sent, and how to
/// authorize with it when it asks.
#[derive(Debug)]
pub(crate) struct Remote {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) oauth: OAuthSettings,
    /// Where the tokens it gives are kept, if anywhere.
    pub(crate) tokens: Option<TokenFile>,
}

/// What the client answers a server's requests with.
#[derive(Clone, Default)]
pub(crate) struct Answers {
    /// The plugin's granted folders, as `file://` URIs.
    pub(crate) roots: Vec<String>,
    /// Who answers for the user and the model, if anyone does.
    pub(crate) handler: Option<Arc<dyn ServerRequestHandler>>,
}

/// The client's side of the protocol: what it tells a server it is, and
/// its answers to what a server asks and tells it.
struct Client {
    /// The server's name, for the log lines about what it asks.
    server: String,
    /// Where those lines go: the subscriber of the load that connected.
    dispatch: tracing::Dispatch,
    answers: Answers,
}

impl Client {
    /// Log, as the server's, that it asked for `what` and no one answers.
    fn unanswered(&self, what: &str) {
        tracing::dispatcher::with_default(&self.dispatch, || {
            tracing::warn!(target: "yohost::plugin", plugin = %self.server, phase = "server", "the MCP server `{}` asked {what}; there is no one to ask, so it was declined", self.server);
        });
    }
}

/// A handler's failure, as the error the server gets.
fn handler_error(server: &str, what: &str, why: String) -> rmcp::ErrorData {
    rmcp::ErrorData::internal_error(format!("{what} for `{server}` failed: {why}"), None)
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        // Roots are offered (deprecated by SEP-2577, in the specification's
        // next version; the versions yohost speaks have them), and the user
        // and the model when someone answers for them.
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(Default::default());
        if self.answers.handler.is_some() {
            capabilities.elicitation = Some(Default::default());
            capabilities.sampling = Some(Default::default());
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("yohost", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(PROTOCOL_VERSION)
    }

    // `ping` is answered by rmcp.

    /// Asked of the handler, or declined, naming the server.
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if let Some(handler) = &self.answers.handler {
            return handler
                .elicit(&self.server, request)
                .await
                .map_err(|why| handler_error(&self.server, "asking the user", why));
        }
        let asked = serde_json::to_value(&request)
            .ok()
            .and_then(|r| r.get("message").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        // The server's words, cut to a line's worth.
        let asked: String = asked.chars().take(200).collect();
        self.unanswered(&format!("the user for input ({asked:?})"));
        Ok(rmcp::model::ElicitResult::new(
            rmcp::model::ElicitationAction::Decline,
        ))
    }

    /// Asked of the handler, or refused, naming the server. (Sampling is
    /// deprecated by the specification's next version, SEP-2577.)
    #[allow(deprecated)]
    async fn create_message(
        &self,
        request: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        match &self.answers.handler {
            Some(handler) => handler
                .sample(&self.server, request)
                .await
                .map_err(|why| handler_error(&self.server, "asking the model", why)),
            None => {
                self.unanswered("the model for a message (sampling)");
                Err(rmcp::ErrorData::method_not_found::<
                    rmcp::model::CreateMessageRequestMethod,
                >())
            }
        }
    }

    /// The plugin's granted folders: what the server may work in.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .answers
            .roots
            .iter()
            .map(rmcp::model::Root::new)
            .collect();
        Ok(rmcp::model::ListRootsResult::new(roots))
    }
}

/// A connection to one server.
pub(crate) struct Link {
    service: RunningService<RoleClient, Client>,
    list_changes: Arc<AtomicU64>,
    /// The listeners of the calls' progress.
    progress: Progress,
    /// The server's process, for a stdio server: ended with the link.
    process: Option<Process>,
    server: String,
    info: String,
    /// The authorization of an HTTP connection.
    session: Option<Arc<oauth::Session>>,
}

impl Link {
    /// Shake hands with a server process started by [`stdio::start`].
    pub(crate) async fn stdio(
        server: &str,
        process: Process,
        pipes: stdio::Pipes,
        answers: &Answers,
    ) -> Result<Link, Failure> {
        let (progress, list_changes) = (Progress::default(), Arc::default());
        let transport = Routed::new(pipes, &progress, &list_changes);
        let service = on_client_runtime(client(server, answers).serve(transport))
            .await
            .map_err(|e| init_failure(server, &e, process.gone()))?;
        Link::new(server, service, (list_changes, progress), Some(process))
    }

    /// Open a streamable HTTP connection to `remote` and shake hands; a
    /// server that asks for authorization is authorized as its `oauth`
    /// says (through `authorizer`, unless by client credentials) first.
    pub(crate) async fn http(
        server: &str,
        remote: &Remote,
        authorizer: Option<Arc<dyn Authorizer>>,
        answers: &Answers,
    ) -> Result<Link, Failure> {
        let mut custom = std::collections::HashMap::new();
        for (name, value) in &remote.headers {
            let header = |e: &dyn std::fmt::Display| {
                Failure::Protocol(format!("cannot send the header `{name}`: {e}"))
            };
            custom.insert(
                reqwest::header::HeaderName::try_from(name.as_str()).map_err(|e| header(&e))?,
                reqwest::header::HeaderValue::try_from(value.as_str()).map_err(|e| header(&e))?,
            );
        }
        let config = StreamableHttpClientTransportConfig::with_uri(remote.url.as_str())
            .custom_headers(custom);
        let (server, url, answers) = (server.to_string(), remote.url.clone(), answers.clone());
        let (oauth, tokens) = (remote.oauth.clone(), remote.tokens.clone());
        // The transport's worker, and the OAuth client's connections, start
        // where they are made: on the client's runtime, with the connection.
        on_client_runtime(async move {
            // Every request reads its token from the session, which has
            // none until the server asks.
            let manager = AuthorizationManager::new(url.as_str()).await.map_err(|e| {
                Failure::Gone(format!(
                    "the MCP server `{server}`'s `url` cannot be authorized for: {e}"
                ))
            })?;
            let http = AuthClient::new(reqwest::Client::default(), manager);
            let session = Arc::new(oauth::Session::new(
                &server,
                &url,
                authorizer,
                oauth,
                tokens,
                Arc::clone(&http.auth_manager),
            ));
            session.resume().await;
            let (progress, list_changes) = (Progress::default(), Arc::default());
            let transport = || {
                let transport =
                    StreamableHttpClientTransport::with_client(http.clone(), config.clone());
                Routed::new(transport, &progress, &list_changes)
            };
            let service = match client(&server, &answers).serve(transport()).await {
                Ok(service) => service,
                Err(error) => {
                    let Some(challenge) = challenge(&error) else {
                        return Err(init_failure(&server, &error, None));
                    };
                    session.authorize(&challenge, true).await?;
                    client(&server, &answers)
                        .serve(transport())
                        .await
                        .map_err(|e| init_failure(&server, &e, None))?
                }
            };
            let mut link = Link::new(&server, service, (list_changes, progress), None)?;
            link.session = Some(session);
            Ok(link)
        })
        .await
    }

    /// `send`'s answer; when the server asks for authorization (again) in
    /// the middle of the session, it is authorized as it asks and `send`
    /// tried once more.
    async fn authorized<T, F, Fut>(&self, send: F) -> Result<T, ServiceError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, ServiceError>>,
    {
        let first = send().await;
        let (Err(error), Some(session)) = (&first, &self.session) else {
            return first;
        };
        let Some(challenge) = error.auth_challenge().map(str::to_string) else {
            return first;
        };
        if let Err(why) = session.authorize(&challenge, false).await {
            tracing::warn!(target: "yohost::plugin", plugin = %self.server, "{why}");
            return first;
        }
        send().await
    }

    fn new(
        server: &str,
        service: RunningService<RoleClient, Client>,
        (list_changes, progress): (Arc<AtomicU64>, Progress),
        process: Option<Process>,
    ) -> Result<Link, Failure> {
        let peer = service.peer().peer_info();
        let version = peer
            .as_ref()
            .map(|p| p.protocol_version.clone())
            .unwrap_or_default();
        if !ProtocolVersion::KNOWN_VERSIONS.contains(&version) || !version.has_initialize() {
            return Err(Failure::Protocol(format!(
                "it speaks protocol version {version}; yohost speaks {} to {PROTOCOL_VERSION}",
                ProtocolVersion::KNOWN_VERSIONS[0]
            )));
        }
        let implementation = peer.as_ref().and_then(|p| p.server_info.as_ref());
        let field = |f: fn(&Implementation) -> &str| implementation.map_or("?", f).to_string();
        let info = format!(
            "{} {} (protocol {version})",
            field(|i| &i.name),
            field(|i| &i.version)
        );
        Ok(Link {
            service,
            list_changes,
            progress,
            process,
            server: server.to_string(),
            info,
            session: None,
        })
    }

    /// The server's name and version, and the protocol version it speaks.
    pub(crate) fn info(&self) -> &str {
        &self.info
    }

    /// Why the server has gone, if it has.
    pub(crate) fn gone(&self) -> Option<String> {
        match &self.process {
            Some(process) => process.gone(),
            None => self
                .service
                .is_transport_closed()
                .then(|| format!("the MCP server `{}` closed its connection", self.server)),
        }
    }

    /// How many times the server has said its tools changed.
    pub(crate) fn list_changes(&self) -> u64 {
        self.list_changes.load(Ordering::SeqCst)
    }

    /// Every tool the server lists, page after page, as JSON.
    pub(crate) async fn list_tools(&self) -> Result<Vec<Value>, Failure> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut listed_bytes = 0usize;
        for _ in 0..MAX_PAGES {
            let mut params = PaginatedRequestParams::default();
            params.cursor = cursor.take();
            // Sent as is, not through the typed listing: a tool that is
            // not a valid MCP tool is left out alone, not the whole page.
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let page = self
                .authorized(|| self.service.peer().send_request(request.clone()))
                .await
                .map_err(|e| self.failure(e))?;
            let page = serde_json::to_value(&page).unwrap_or(Value::Null);
            let listed = page
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| Failure::Protocol("`tools/list` gave no `tools` array".into()))?;
            for tool in listed {
                listed_bytes += serde_json::to_vec(tool).map_or(usize::MAX, |b| b.len());
                if tools.len() == MAX_TOOLS || listed_bytes > MAX_REPLY_BYTES {
                    return Err(Failure::Protocol(format!(
                        "`tools/list` lists more than {MAX_TOOLS} tools or {} MiB of them",
                        MAX_REPLY_BYTES >> 20
                    )));
                }
                tools.push(tool.clone());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_string()),
                None => return Ok(tools),
            }
        }
        Err(Failure::Protocol(format!(
            "`tools/list` went on for more than {MAX_PAGES} pages"
        )))
    }

    /// Call a tool; its result as JSON. Dropping the future before the
    /// answer (the call's deadline, the run's cancel) sends the server
    /// `notifications/cancelled` for it. With `progress`, the call carries a
    /// progress token, and the server's progress for it goes there until
    /// the call ends ([`crate::progress`]).
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        progress: Option<ProgressFn>,
    ) -> Result<Value, Failure> {
        if let Some(why) = self.gone() {
            return Err(Failure::Gone(why));
        }
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = match arguments {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            _ => return Err(Failure::Protocol("arguments that are not an object".into())),
        };
        let listening = progress.map(|sink| self.progress.listen(sink));
        if let Some(listening) = &listening {
            let meta = params.meta.get_or_insert_with(Default::default);
            meta.set_progress_token(listening.token());
        }
        // Only an HTTP connection may be asked to authorize again, and only
        // then are the arguments kept for a second try.
        let answer = match &self.session {
            None => self.service.peer().call_tool_once(params).await,
            Some(_) => {
                self.authorized(|| self.service.peer().call_tool_once(params.clone()))
                    .await
            }
        };
        match answer {
            Ok(CallToolResponse::Complete(result)) => {
                serde_json::to_value(&result).map_err(|e| Failure::Protocol(e.to_string()))
            }
            Ok(_) => Err(Failure::Protocol(
                "a request for input or a task, which yohost did not ask for".into(),
            )),
            Err(e) => Err(self.failure(e)),
        }
    }

    fn failure(&self, error: ServiceError) -> Failure {
        match error {
            ServiceError::McpError(error) => Failure::Rpc {
                code: error.code.0.into(),
                message: error.message.into_owned(),
            },
            ServiceError::UnexpectedResponse => {
                Failure::Protocol("an answer of the wrong shape".into())
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                Failure::Gone(self.gone().unwrap_or_else(|| {
                    format!("the MCP server `{}` has gone: {error}", self.server)
                }))
            }
            other => Failure::Gone(format!("the MCP server `{}`: {other}", self.server)),
        }
    }
}

/// Shake hands on the runtime every connection lives on, whichever runtime
/// asks: a connection's task (its reader, its HTTP requests) outlives the
/// load that opened it and any one run, and requests reach it over
/// channels from any runtime. The runtime's log lines go where the asking
/// thread's go.
/// The handshake's task is aborted when its caller gives up (the load
/// timeout), so an OAuth flow no one finishes does not keep its callback
/// listener. (A request the transport already sent is `rmcp`'s to end: a
/// server that never answers `initialize` keeps that one connection.)
async fn on_client_runtime<T: Send + 'static>(
    handshake: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    /// Aborts the task when the caller stops waiting for it.
    struct Abort(tokio::task::AbortHandle);
    impl Drop for Abort {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let task = client_runtime().spawn(handshake.with_current_subscriber());
    let _abort = Abort(task.abort_handle());
    task.await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// The runtime every connection's task lives on.
fn client_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("mcp-client")
            .enable_all()
            .build()
            .expect("a runtime for MCP connections")
    })
}

/// A client handler for `server` answering with `answers`.
fn client(server: &str, answers: &Answers) -> Client {
    Client {
        server: server.to_string(),
        dispatch: tracing::dispatcher::get_default(|d| d.clone()),
        answers: answers.clone(),
    }
}

/// How long a remote server has to close its session when its link goes.
const CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

impl Drop for Link {
    /// A remote server's session is closed with `DELETE` before the link
    /// goes (within [`CLOSE_TIMEOUT`]), so a host that exits next leaves
    /// none open; a process ends with its [`Process`].
    fn drop(&mut self) {
        if self.process.is_some() {
            return;
        }
        let service = &mut self.service;
        // On a thread outside any runtime, which may block on the close.
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _ = client_runtime().block_on(service.close_with_timeout(CLOSE_TIMEOUT));
            });
        });
    }
}

/// Why a handshake failed, naming the server when it asks for
/// authorization.
fn init_failure(server: &str, error: &ClientInitializeError, gone: Option<String>) -> Failure {
    match (error, gone) {
        (_, Some(why)) => Failure::Gone(why),
        (ClientInitializeError::JsonRpcError(error), None) => Failure::Rpc {
            code: error.code.0.into(),
            message: error.message.to_string(),
        },
        (error, None) if challenge(error).is_some() => {
            Failure::Gone(format!(
            "the MCP server `{server}` asks for authorization (HTTP 401, OAuth), and no one is there to authorize it: register an authorizer (`McpAdapter::with_authorizer`), as the `yohost` command does"
        ))
        }
        (other, None) => Failure::Protocol(format!("`initialize` failed: {other}")),
    }
}

/// The `WWW-Authenticate` challenge of an HTTP server's demand for
/// authorization (401, or 403 for a scope), if that is why the handshake
/// failed.
fn challenge(error: &ClientInitializeError) -> Option<String> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let ClientInitializeError::TransportError { error, .. } = error else {
        return None;
    };
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(error) = next {
        match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::AuthRequired(e)) => {
                return Some(e.www_authenticate_header.clone())
            }
            Some(StreamableHttpError::InsufficientScope(e)) => {
                return Some(e.www_authenticate_header.clone())
            }
            _ => next = error.source(),
        }
    }
    None
}
