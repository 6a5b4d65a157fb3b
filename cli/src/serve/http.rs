//! MCP sessions over streamable HTTP: rmcp's server (one session per
//! `initialize`, `Mcp-Session-Id`), behind tower-http's bearer check and
//! body limit, on hyper. Each session is a run of the plugins; a session
//! over the limit is refused.

use crate::serve::session::{Session, Shared};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, AUTHORIZATION, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::validate_request::{ValidateRequest, ValidateRequestHeaderLayer};

/// How the HTTP server listens and whom it serves.
pub struct HttpOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The bearer token every request must carry; `None`: no check
    /// (loopback only).
    pub token: Option<String>,
    /// The most sessions at once.
    pub max_sessions: usize,
    /// The largest request body, in bytes.
    pub max_request_bytes: usize,
}

/// Counts a live session; dropped with it.
struct Ticket(Arc<AtomicUsize>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Lets through the requests whose `Authorization` is `Bearer TOKEN`,
/// compared in constant time; the others get 401.
#[derive(Clone)]
struct Bearer {
    expected: Vec<u8>,
}

impl<B> ValidateRequest<B> for Bearer {
    type ResponseBody = BoxBody<Bytes, Infallible>;

    fn validate(&mut self, request: &mut Request<B>) -> Result<(), Response<Self::ResponseBody>> {
        let given = request
            .headers()
            .get(AUTHORIZATION)
            .map_or(&[][..], |v| v.as_bytes());
        if bool::from(given.ct_eq(&self.expected)) {
            return Ok(());
        }
        Err(Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(WWW_AUTHENTICATE, "Bearer")
            .body(Full::new(Bytes::from_static(b"Unauthorized")).boxed())
            .expect("a valid response"))
    }
}

/// Why `token` cannot be a bearer token, if it cannot.
pub fn check_token(token: &str) -> Result<(), String> {
    if token.is_empty() {
        return Err("the bearer token is empty".into());
    }
    match HeaderValue::from_str(&format!("Bearer {token}")) {
        Ok(_) if token.chars().all(|c| c.is_ascii_graphic()) => Ok(()),
        _ => Err("the bearer token must be printable ASCII without spaces".into()),
    }
}

/// Serve sessions at `options.listen` until the process is interrupted
/// (Ctrl-C or SIGTERM), then finish every session's run.
pub async fn serve(shared: Arc<Shared>, options: HttpOptions) -> Result<(), String> {
    let stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_request_bytes)
        .with_cancellation_token(stop.child_token());
    if !options.listen.ip().is_loopback() {
        // The bearer token guards it; the `Host` check is for loopback
        // servers reached by DNS rebinding.
        config = config.disable_allowed_hosts();
    }
    let (live, max) = (Arc::new(AtomicUsize::new(0)), options.max_sessions);
    let (factory_shared, open) = (Arc::clone(&shared), Arc::clone(&live));
    let mcp = StreamableHttpService::new(
        move || {
            if live.fetch_add(1, Ordering::SeqCst) >= max {
                live.fetch_sub(1, Ordering::SeqCst);
                tracing::warn!(
                    "a new MCP session was refused: {max} sessions are open (--max-sessions)"
                );
                return Err(std::io::Error::other(format!(
                    "yohost serves at most {max} sessions at once (--max-sessions)"
                )));
            }
            let ticket: Box<dyn Send + Sync> = Box::new(Ticket(Arc::clone(&live)));
            Ok(Session::new(Arc::clone(&factory_shared), Some(ticket)))
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let bearer = options.token.map(|token| {
        ValidateRequestHeaderLayer::custom(Bearer {
            expected: format!("Bearer {token}").into_bytes(),
        })
    });
    let service = tower::ServiceBuilder::new()
        .layer(RequestBodyLimitLayer::new(options.max_request_bytes))
        .option_layer(bearer)
        .service(mcp);
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.listen))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot read the address listened on: {e}"))?;
    eprintln!("yohost: serving MCP at http://{bound}/mcp");
    let interrupted = interrupted();
    tokio::pin!(interrupted);
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut interrupted => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("cannot accept a connection: {e}");
                    continue;
                }
            },
        };
        let service = TowerToHyperService::new(service.clone());
        let stop = stop.clone();
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = stop.cancelled() => {}
                served = connection => if let Err(e) = served {
                    tracing::debug!("an HTTP connection ended: {e}");
                },
            }
        });
    }
    stop.cancel();
    // The sessions end with their workers, which the stop just cancelled:
    // wait for them (at most 5 s), then for their runs' `finish`.
    for _ in 0..100 {
        if open.load(Ordering::SeqCst) == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    shared.finished().await;
    Ok(())
}

/// Ctrl-C or SIGTERM.
async fn interrupted() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate => {}
    }
}
