//! `fetch` in pi extensions, against a local HTTP server the test starts
//! (nothing reaches the internet):
//!
//! - with `capabilities.network` listing the server's host, the response
//!   (status, headers, body, a POST's body) reaches the extension;
//! - without the grant, `fetch` rejects naming the key, and a host not on
//!   the list is refused before any connection is made;
//! - a redirect to a host not on the list fails the request;
//! - a server that never answers fails the call at its deadline, and a
//!   response body over 16 MiB fails the request;
//! - a check makes no request: a `session_start` that POSTs is reported as
//!   a load warning, and the server sees no connection (a run makes it).

use crate::support;

use crate::loopback::serve;
use crate::package;

use package::open;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use support::*;
use yohost::PluginHost;

/// An extension whose tool `get` fetches `url` (POSTing `body` when given)
/// and answers `status|x-test header|body`, or the error's message.
const FETCHER: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "get",
    description: "fetch a URL",
    parameters: { type: "object", properties: { url: { type: "string" }, body: { type: "string" } } },
    async execute(_id, { url, body }) {
      try {
        const init = body === undefined ? {} : { method: "POST", body, headers: { "content-type": "text/plain" } };
        const res = await fetch(url, init);
        return { content: [{ type: "text", text: `${res.status}|${res.headers.get("X-Test")}|${await res.text()}` }] };
      } catch (e) {
        return { content: [{ type: "text", text: `error: ${e.message}` }] };
      }
    },
  });
}
"#;

const HELLO: &str =
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Test: yes\r\nConnection: close\r\n\r\nhello";

/// A plugin folder with the fetcher under `manifest`, and a host over it.
fn fetcher(manifest: &str) -> (tempfile::TempDir, PluginHost) {
    let dir = plugin_dir();
    write(dir.path(), "fetcher/index.ts", FETCHER);
    write(dir.path(), "fetcher/plugin.toml", manifest);
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    (dir, host)
}

/// The text of each `get` call's result, in one run.
async fn get(host: &PluginHost, calls: Vec<serde_json::Value>) -> Vec<String> {
    let mut script: Vec<_> = calls.into_iter().map(|args| call("get", args)).collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "fetch").await)
        .into_iter()
        .map(|(_, text, _)| text)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_listed_host_is_fetched_and_others_are_refused_before_connecting() {
    let server = serve(HELLO).await;
    let url = format!("http://127.0.0.1:{}/path", server.port);
    let (_dir, host) = fetcher("[capabilities]\nnetwork = [\"127.0.0.1\"]\n");
    let got = get(
        &host,
        vec![
            json!({ "url": url }),
            json!({ "url": url, "body": "posted text" }),
        ],
    )
    .await;
    assert_eq!(got, ["200|yes|hello", "200|yes|hello"]);
    let requests = server.requests.lock().unwrap().clone();
    assert!(
        requests[0].starts_with("GET /path HTTP/1.1"),
        "{requests:?}"
    );
    assert!(requests[1].starts_with("POST /path"), "{requests:?}");
    assert!(requests[1].ends_with("posted text"), "{requests:?}");
    let before = server.connections.load(Ordering::SeqCst);

    let (_dir, host) = fetcher("[capabilities]\nnetwork = [\"api.example.com\"]\n");
    let got = get(&host, vec![json!({ "url": url })]).await;
    assert!(
        got[0].starts_with("error: fetch: 127.0.0.1 is not granted")
            && got[0].contains("capabilities.network"),
        "{got:?}"
    );
    let (_dir, host) = fetcher("");
    let got = get(&host, vec![json!({ "url": url })]).await;
    assert!(
        got[0].starts_with("error: fetch(") && got[0].contains("`capabilities.network`"),
        "{got:?}"
    );
    let (_dir, host) = fetcher("[capabilities]\nnetwork = [\"127.0.0.1\"]\n");
    let got = get(&host, vec![json!({ "url": "file:///etc/passwd" })]).await;
    assert!(got[0].contains("only http and https"), "{got:?}");
    assert_eq!(server.connections.load(Ordering::SeqCst), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_a_host_not_listed_fails_the_request() {
    let target = serve(HELLO).await;
    let redirect: &'static str = Box::leak(
        format!(
            "HTTP/1.1 302 Found\r\nLocation: http://localhost:{}/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            target.port
        )
        .into_boxed_str(),
    );
    let server = serve(redirect).await;
    let (_dir, host) = fetcher("[capabilities]\nnetwork = [\"127.0.0.1\"]\n");
    let url = format!("http://127.0.0.1:{}/", server.port);
    let got = get(&host, vec![json!({ "url": url })]).await;
    assert!(
        got[0].starts_with("error: ") && got[0].contains("localhost is not granted"),
        "{got:?}"
    );
    assert_eq!(target.connections.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_fails_the_call_at_its_deadline() {
    let server = serve("").await;
    let (_dir, host) =
        fetcher("[timeouts]\ncall_tool = 500\n[capabilities]\nnetwork = [\"127.0.0.1\"]\n");
    let started = Instant::now();
    let url = format!("http://127.0.0.1:{}/", server.port);
    let got = get(&host, vec![json!({ "url": url })]).await;
    // The server never answers: the outcome (no reply, the call failed) and
    // a bound that a call left waiting would exceed, generous so a loaded
    // machine does not fail it.
    assert!(started.elapsed() < Duration::from_secs(60), "{got:?}");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(!got[0].starts_with("200"), "{got:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_over_the_limit_fails_rather_than_arriving_cut_short() {
    const LIMIT: usize = 16 * 1024 * 1024;
    let reply: &'static str = Box::leak(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
            LIMIT + 1,
            "x".repeat(LIMIT + 1)
        )
        .into_boxed_str(),
    );
    let server = serve(reply).await;
    let (_dir, host) = fetcher("[capabilities]\nnetwork = [\"127.0.0.1\"]\n");
    let url = format!("http://127.0.0.1:{}/", server.port);
    let got = get(&host, vec![json!({ "url": url })]).await;
    assert!(
        got[0].starts_with("error: ") && got[0].contains("over the limit of 16777216 bytes"),
        "{}",
        &got[0][..got[0].len().min(300)]
    );
}

/// An extension that POSTs to `url` when its session starts, at load.
const POSTS_AT_START: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("session_start", async () => {
    try {
      await fetch("URL", { method: "POST", body: "started" });
    } catch (_) {}
  });
}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_check_reports_a_request_and_makes_none() {
    let server = serve(HELLO).await;
    let url = format!("http://127.0.0.1:{}/hook", server.port);
    let dir = plugin_dir();
    write(
        dir.path(),
        "poster/index.ts",
        &POSTS_AT_START.replace("URL", &url),
    );
    write(
        dir.path(),
        "poster/plugin.toml",
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\n",
    );
    let checked = yohost::PluginHost::builder(dir.path())
        .adapter(yohost_adapter_pi::adapter())
        .dry_run(true)
        .open()
        .unwrap();
    let report = checked.report().await;
    let poster = reported(&report, "poster");
    assert!(
        poster
            .warnings
            .contains(&format!("in a check, not done: fetch POST {url}")),
        "{poster:?}"
    );
    drop(checked);
    assert_eq!(
        server.connections.load(Ordering::SeqCst),
        0,
        "a check connected"
    );

    let ran = open(dir.path()).unwrap();
    assert!(ran.refused().is_empty(), "{:?}", ran.refused());
    // Generous, so a loaded machine does not fail it; a request never
    // made still fails.
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.connections.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "loading for a run makes the request"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
