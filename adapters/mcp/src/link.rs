//! The protocol over either transport: the `initialize` handshake,
//! `tools/list` and `tools/call`, as raw JSON (the results keep what
//! yoagent's typed client drops: titles, annotations, resources,
//! structured content).

use crate::stdio::Stdio;
use serde_json::{json, Value};
use std::sync::Arc;
use yoagent::mcp::transport::McpTransport;
use yoagent::mcp::types::JsonRpcRequest;
use yoagent::mcp::{HttpTransport, ServerNotifications};
use yohost::adapter::limits::MAX_REPLY_BYTES;

/// The protocol version yohost asks for.
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";

/// The versions yohost speaks (a server may answer with an older one).
const SPOKEN: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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

/// A connection to one server.
pub(crate) enum Link {
    /// A process of its own.
    Stdio(Stdio),
    /// A remote server.
    Http(Http),
}

/// A remote server over yoagent's streamable HTTP transport.
pub(crate) struct Http {
    transport: Arc<HttpTransport>,
    notes: ServerNotifications,
}

impl Http {
    /// A transport to `url` with `headers`, not yet connected.
    pub(crate) fn new(url: &str, headers: &[(String, String)]) -> Result<Http, String> {
        let mut transport = HttpTransport::new(url).map_err(|e| e.to_string())?;
        for (name, value) in headers {
            transport = transport
                .with_header(name, value)
                .map_err(|e| format!("the header `{name}`: {e}"))?;
        }
        let notes = ServerNotifications::new();
        transport.report_notifications(notes.clone());
        Ok(Http {
            transport: Arc::new(transport),
            notes,
        })
    }
}

/// An HTTP request in flight; dropped unanswered, it is cancelled.
struct HttpWaiting {
    transport: Arc<HttpTransport>,
    id: u64,
    answered: bool,
}

impl Drop for HttpWaiting {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let (transport, id) = (Arc::clone(&self.transport), self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let cancelled = yoagent::mcp::types::JsonRpcNotification::new(
                    "notifications/cancelled",
                    Some(json!({"requestId": id, "reason": "the call's deadline passed, or its run was cancelled"})),
                );
                let _ = transport.notify(cancelled).await;
            });
        }
    }
}

impl Link {
    /// Send a request and wait for its result.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, Failure> {
        match self {
            Link::Stdio(stdio) => stdio.request(method, params).await,
            Link::Http(http) => {
                let request = JsonRpcRequest::new(method, Some(params));
                let mut waiting = HttpWaiting {
                    transport: Arc::clone(&http.transport),
                    id: request.id,
                    answered: false,
                };
                let response = http.transport.send(request).await;
                waiting.answered = true;
                let response = response.map_err(|e| Failure::Gone(e.to_string()))?;
                match (response.result, response.error) {
                    (_, Some(error)) => Err(Failure::Rpc {
                        code: error.code,
                        message: error.message,
                    }),
                    (Some(result), None) => Ok(result),
                    (None, None) => Err(Failure::Protocol(
                        "an answer with neither `result` nor `error`".into(),
                    )),
                }
            }
        }
    }

    /// Send a notification (best effort).
    async fn notify(&self, method: &str) -> Result<(), Failure> {
        match self {
            Link::Stdio(stdio) => {
                stdio.notify(method, json!({}));
                Ok(())
            }
            Link::Http(http) => http
                .transport
                .notify(yoagent::mcp::types::JsonRpcNotification::new(method, None))
                .await
                .map_err(|e| Failure::Gone(e.to_string())),
        }
    }

    /// Why the server has gone, if it has.
    pub(crate) fn gone(&self) -> Option<String> {
        match self {
            Link::Stdio(stdio) => stdio.gone(),
            Link::Http(_) => None,
        }
    }

    /// How many times the server has said its tools changed.
    pub(crate) fn list_changes(&self) -> u64 {
        match self {
            Link::Stdio(stdio) => stdio.list_changes(),
            Link::Http(http) => http.notes.tools_list_changed(),
        }
    }

    /// The `initialize` handshake. Returns the server's name and version.
    pub(crate) async fn initialize(&self) -> Result<String, Failure> {
        let result = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "yohost", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !SPOKEN.contains(&version) {
            return Err(Failure::Protocol(format!(
                "it speaks protocol version {version:?}; yohost speaks {}",
                SPOKEN.join(", ")
            )));
        }
        self.notify("notifications/initialized").await?;
        let info = result.get("serverInfo").cloned().unwrap_or(Value::Null);
        let field = |name: &str| {
            info.get(name)
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        };
        Ok(format!(
            "{} {} (protocol {version})",
            field("name"),
            field("version")
        ))
    }

    /// Every tool the server lists, page after page.
    pub(crate) async fn list_tools(&self) -> Result<Vec<Value>, Failure> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        let mut listed_bytes = 0usize;
        for _ in 0..MAX_PAGES {
            let params = match cursor.take() {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request("tools/list", params).await?;
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
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok(tools),
            }
        }
        Err(Failure::Protocol(format!(
            "`tools/list` went on for more than {MAX_PAGES} pages"
        )))
    }
}
