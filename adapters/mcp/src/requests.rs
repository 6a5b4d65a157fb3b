//! What an MCP server asks of its client's user or model, answered by the
//! embedder: an elicitation (a question for the user) and sampling (a
//! completion from the model). An embedder that can ask its user or lend
//! its model registers a [`ServerRequestHandler`]
//! ([`McpAdapter::with_requests`](crate::McpAdapter::with_requests)), and
//! the client then offers both to servers. Without one, neither is
//! offered: an elicitation is declined and sampling refused, each logged
//! naming the server.

use std::future::Future;
use std::pin::Pin;

// Sampling is deprecated by the specification's next version (SEP-2577);
// the versions yohost speaks have it.
#[allow(deprecated)]
pub use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};

/// The answer to a server's request, in time: the result, or why there is
/// none (sent to the server as an error).
pub type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send + 'a>>;

/// Answers the requests an MCP server makes of its client's user and model.
/// Each request names the server (its key in `mcp.json`); a request waits
/// for its answer no longer than the call that made it.
pub trait ServerRequestHandler: Send + Sync {
    /// The server `server` asks the user `request` (a message, and the
    /// schema of what it asks for): accept with content, decline or
    /// cancel.
    fn elicit<'a>(
        &'a self,
        server: &'a str,
        request: ElicitRequestParams,
    ) -> Answer<'a, ElicitResult>;

    /// The server `server` asks the model for a message in answer to
    /// `request` (messages, a system prompt, a token budget).
    #[allow(deprecated)]
    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: CreateMessageRequestParams,
    ) -> Answer<'a, CreateMessageResult>;
}
