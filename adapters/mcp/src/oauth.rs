//! OAuth for a remote server that asks for authorization (HTTP 401, or 403
//! for a scope), by `rmcp`'s OAuth client: discovery from the server's
//! challenge, registration (dynamic, or a client id document), and the
//! authorization code with PKCE. The person who authorizes is reached
//! through an [`Authorizer`] the embedder registers: it is shown the
//! authorization page's URL, and their browser comes back to a listener
//! on the loopback address, which finishes the flow. Without an
//! authorizer the server is refused, saying so.
//!
//! Tokens are held in memory, by the connection that asked for them.

use crate::link::Failure;
use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationRequest, OAuthState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Shows a person where to authorize yohost to reach an MCP server. The
/// `yohost` command prints the URL and opens it with `$BROWSER` when set;
/// an embedding app shows it as it shows things to its user.
pub trait Authorizer: Send + Sync {
    /// `url` is the authorization server's page for the server `server`.
    /// Once the person approves, their browser comes back to yohost on its
    /// own: nothing is returned here.
    fn present(&self, server: &str, url: &str);
}

/// The longest a callback request line may be.
const MAX_CALLBACK_BYTES: usize = 16 << 10;

/// Authorize yohost for the server at `url`, which answered with the
/// `WWW-Authenticate` header `challenge`: the manager that holds the
/// tokens, for the connection to use.
pub(crate) async fn authorize(
    server: &str,
    url: &str,
    challenge: &str,
    authorizer: &dyn Authorizer,
) -> Result<AuthorizationManager, Failure> {
    let failed = |e: &dyn std::fmt::Display| {
        Failure::Gone(format!(
            "the MCP server `{server}` asks for authorization, and authorizing failed: {e}"
        ))
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| failed(&e))?;
    let port = listener.local_addr().map_err(|e| failed(&e))?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut state = OAuthState::new(url, None)
        .await
        .map_err(|e: AuthError| failed(&e))?;
    let request = AuthorizationRequest::new(&redirect)
        .with_client_name("yohost")
        .with_challenge(challenge);
    state
        .start_authorization(request)
        .await
        .map_err(|e| failed(&e))?;
    let page = state
        .get_authorization_url()
        .await
        .map_err(|e| failed(&e))?;
    authorizer.present(server, &page);
    let callback = callback(&listener, port).await.map_err(|e| failed(&e))?;
    state
        .handle_callback_url(&callback)
        .await
        .map_err(|e| failed(&e))?;
    state
        .into_authorization_manager()
        .ok_or_else(|| failed(&"the authorization did not complete"))
}

/// Wait for the browser's request to the callback, answer it, and give the
/// URL it asked for (with the code and state the flow reads). Requests for
/// other paths (a browser's favicon) are answered 404 and passed over.
async fn callback(listener: &tokio::net::TcpListener, port: u16) -> std::io::Result<String> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        let mut head = Vec::new();
        let mut buffer = [0u8; 1024];
        while !head.windows(2).any(|w| w == b"\r\n") && head.len() < MAX_CALLBACK_BYTES {
            let read = stream.read(&mut buffer).await?;
            if read == 0 {
                break;
            }
            head.extend_from_slice(&buffer[..read]);
        }
        let line = String::from_utf8_lossy(&head);
        let target = line
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default()
            .to_string();
        if target.starts_with("/callback?") {
            let body = "yohost is authorized: you may close this page.";
            let reply = format!("HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
            stream.write_all(reply.as_bytes()).await?;
            return Ok(format!("http://127.0.0.1:{port}{target}"));
        }
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
    }
}
