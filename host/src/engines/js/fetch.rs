//! `fetch` for a plugin whose manifest grants `capabilities.network`: one
//! HTTP request through the host's HTTP client (`reqwest`), on a thread of
//! its own, never on the engine's.
//!
//! - Only `http` and `https` URLs whose host the grant allows are fetched
//!   ([`Network::allows`]); a redirect to a host it does not allow fails
//!   the request, and at most [`MAX_REDIRECTS`] are followed.
//! - The request ends at its bounds ([`ExecBounds`]: the deadline of the
//!   hook that made it, its run's cancellation, the plugin being dropped).
//! - A response body over [`MAX_FETCH_BYTES`] fails the request rather
//!   than reaching the plugin cut short.
//!
//! The reply is JSON text: `{"ok": {status, statusText, url, redirected,
//! headers, body}}` (headers as `[name, value]` pairs, the body in base64)
//! or `{"error": message}`.

use super::services::ExecBounds;
use crate::load::manifest::Network;
use base64::Engine as _;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The largest response body a plugin may receive.
pub const MAX_FETCH_BYTES: usize = 16 * 1024 * 1024;

/// The most redirects one request follows.
pub const MAX_REDIRECTS: usize = 10;

/// Why a request is not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchRefusal {
    /// Not a URL.
    #[error("fetch: {url:?} is not a valid URL")]
    BadUrl {
        /// The URL as given.
        url: String,
    },
    /// A scheme other than `http` and `https`.
    #[error("fetch: {url} uses `{scheme}:`; only http and https are fetched")]
    Scheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// A host the manifest does not list.
    #[error("fetch: {host} is not granted: add it to `capabilities.network` in the plugin's plugin.toml")]
    HostNotGranted {
        /// The host.
        host: String,
    },
    /// A method or header that HTTP does not accept.
    #[error("fetch: {0}")]
    BadRequest(String),
}

/// One request, as the plugin's `fetch` describes it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct FetchRequest {
    /// The URL.
    pub url: String,
    /// The method. Absent: GET.
    #[serde(default)]
    pub method: Option<String>,
    /// Header name and value pairs.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The body, base64. Absent: none.
    #[serde(default)]
    pub body: Option<String>,
}

/// Check `request` against `network` and build it; the URL and client are
/// ready to send.
fn prepare(
    request: &FetchRequest,
    network: &Network,
) -> Result<(reqwest::Client, reqwest::Request), FetchRefusal> {
    let url = reqwest::Url::parse(&request.url).map_err(|_| FetchRefusal::BadUrl {
        url: request.url.clone(),
    })?;
    allowed(&url, network)?;
    let policy_network = network.clone();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if let Err(refusal) = allowed(attempt.url(), &policy_network) {
            attempt.error(format!("a redirect was refused: {refusal}"))
        } else {
            attempt.follow()
        }
    });
    let client = reqwest::Client::builder()
        .redirect(policy)
        .build()
        .map_err(|e| FetchRefusal::BadRequest(e.to_string()))?;
    let method = request
        .method
        .as_deref()
        .unwrap_or("GET")
        .to_ascii_uppercase();
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| FetchRefusal::BadRequest(format!("{method:?} is not an HTTP method")))?;
    let mut builder = client.request(method, url);
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    if let Some(body) = &request.body {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(body)
            .map_err(|_| FetchRefusal::BadRequest("the body is not base64".into()))?;
        builder = builder.body(bytes);
    }
    let built = builder
        .build()
        .map_err(|e| FetchRefusal::BadRequest(e.to_string()))?;
    Ok((client, built))
}

/// Whether `url` may be fetched under `network`.
fn allowed(url: &reqwest::Url, network: &Network) -> Result<(), FetchRefusal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchRefusal::Scheme {
            url: url.to_string(),
            scheme: url.scheme().to_string(),
        });
    }
    let host = url.host_str().unwrap_or_default();
    if !network.allows(host) {
        return Err(FetchRefusal::HostNotGranted {
            host: host.to_string(),
        });
    }
    Ok(())
}

/// Check `request` against `network` and start it on a thread of its own;
/// `done` gets the reply when the response has arrived, failed, or met its
/// bounds. A request refused before it starts returns the refusal.
pub fn spawn(
    request: FetchRequest,
    network: &Network,
    bounds: ExecBounds,
    done: impl FnOnce(String) + Send + 'static,
) -> Result<(), String> {
    let (client, request) = prepare(&request, network).map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("yohost-fetch".into())
        .spawn(move || {
            let reply = match send(client, request, &bounds) {
                Ok(response) => json!({ "ok": response }),
                Err(why) => json!({ "error": why }),
            };
            done(reply.to_string());
        })
        .map(|_| ())
        .map_err(|e| format!("fetch: cannot start a thread: {e}"))
}

/// Send `request` and read its response, within `bounds`.
fn send(
    client: reqwest::Client,
    request: reqwest::Request,
    bounds: &ExecBounds,
) -> Result<Value, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("fetch: {e}"))?;
    let asked = request.url().clone();
    let url = asked.to_string();
    runtime.block_on(async move {
        let exchange = async {
            let mut response = client
                .execute(request)
                .await
                .map_err(|e| format!("fetch {url} failed: {}", without_url(&e)))?;
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| format!("fetch {url} failed: {}", without_url(&e)))?
            {
                if body.len() + chunk.len() > MAX_FETCH_BYTES {
                    return Err(format!(
                        "fetch {url}: the response is over the limit of {MAX_FETCH_BYTES} bytes"
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            let headers: Vec<(String, String)> = response
                .headers()
                .iter()
                .map(|(name, value)| {
                    (
                        name.to_string(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let status = response.status();
            Ok(json!({
                "status": status.as_u16(),
                "statusText": status.canonical_reason().unwrap_or(""),
                "url": response.url().to_string(),
                "redirected": response.url() != &asked,
                "headers": headers,
                "body": base64::engine::general_purpose::STANDARD.encode(&body),
            }))
        };
        let watch = async {
            let mut pause = Duration::from_millis(1);
            while !bounds.expired() {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(20));
            }
        };
        tokio::select! {
            reply = exchange => reply,
            () = watch => Err(if Instant::now() >= bounds.deadline {
                format!("fetch {url}: no response before the hook's deadline")
            } else {
                format!("fetch {url}: cancelled")
            }),
        }
    })
}

/// `error`'s message and causes, without the URL reqwest adds.
fn without_url(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> FetchRequest {
        FetchRequest {
            url: url.into(),
            method: None,
            headers: vec![],
            body: None,
        }
    }

    #[test]
    fn only_granted_hosts_over_http_are_prepared() {
        let hosts = Network::Hosts(vec!["api.example.com".into(), "*.example.org".into()]);
        assert!(prepare(&request("https://API.example.com/x"), &hosts).is_ok());
        assert!(prepare(&request("http://a.b.example.org:8080/"), &hosts).is_ok());
        for (url, refusal) in [
            (
                "https://example.org/",
                FetchRefusal::HostNotGranted {
                    host: "example.org".into(),
                },
            ),
            (
                "https://api.example.com.evil.net/",
                FetchRefusal::HostNotGranted {
                    host: "api.example.com.evil.net".into(),
                },
            ),
            (
                "file:///etc/passwd",
                FetchRefusal::Scheme {
                    url: "file:///etc/passwd".into(),
                    scheme: "file".into(),
                },
            ),
            (
                "not a url",
                FetchRefusal::BadUrl {
                    url: "not a url".into(),
                },
            ),
        ] {
            assert_eq!(prepare(&request(url), &hosts).err(), Some(refusal), "{url}");
        }
        let none = Network::default();
        assert!(prepare(&request("https://api.example.com/"), &none).is_err());
        let bad_method = FetchRequest {
            method: Some("GE T".into()),
            ..request("https://api.example.com/")
        };
        assert!(matches!(
            prepare(&bad_method, &hosts),
            Err(FetchRefusal::BadRequest(_))
        ));
    }
}
