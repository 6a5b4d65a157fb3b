//! `fetch` in yohost's own TypeScript plugins on the embedded engine,
//! through a real `yoagent::Agent`, against a local HTTP server the test
//! starts on 127.0.0.1 (nothing reaches the internet):
//!
//! - with `capabilities.network` listing the server's host, a tool's
//!   `fetch` (a GET, and a POST of a `Request` with `Headers`) gets the
//!   response, and `engine = "auto"` keeps the plugin on the embedded
//!   engine (a global `fetch()` needs no Node);
//! - without the grant, `fetch` is there and fails naming the key to add
//!   (not "fetch is not defined"), and a host not on the list is refused;
//!   neither connects;
//! - a check makes no request: a fetch at load is reported as a warning,
//!   and the server sees no connection.

use crate::loopback::serve;
use crate::support;

use serde_json::json;
use std::sync::atomic::Ordering;
use support::*;
use yohost::{PluginHost, Status};

/// A tool `get` that fetches `url` (POSTing `body` as a `Request` when
/// given) and answers `status|x-test header|body`; a failure is thrown, so
/// the model reads it as the tool's error.
const FETCHER: &str = r#"import { defineTool, definePlugin } from "yohost";

const get = defineTool<{ url: string; body?: string }>({
  name: "get",
  description: "fetch a URL",
  parameters: { type: "object", properties: { url: { type: "string" }, body: { type: "string" } }, required: ["url"] },
  async run({ url, body }) {
    const res =
      body === undefined
        ? await fetch(url)
        : await fetch(new Request(url, { method: "POST", body, headers: new Headers({ "Content-Type": "text/plain" }) }));
    const ok = res instanceof Response ? "" : " (not a Response)";
    return `${res.status}|${res.headers.get("X-Test")}|${await res.text()}${ok}`;
  },
});

export default definePlugin({ name: "fetcher", tools: [get] });
"#;

const HELLO: &str =
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Test: yes\r\nConnection: close\r\n\r\nhello";

/// A plugin folder with the fetcher under `manifest`, and a host over it.
fn fetcher(manifest: &str) -> (tempfile::TempDir, PluginHost) {
    let dir = plugin_dir();
    write(dir.path(), "fetcher/index.ts", FETCHER);
    write(dir.path(), "fetcher/plugin.toml", manifest);
    let host = PluginHost::open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    (dir, host)
}

/// Each `get` call's result (its text, and whether it is an error), in one
/// run.
async fn get(host: &PluginHost, calls: Vec<serde_json::Value>) -> Vec<(String, bool)> {
    let mut script: Vec<_> = calls.into_iter().map(|args| call("get", args)).collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "fetch").await)
        .into_iter()
        .map(|(_, text, is_error)| (text, is_error))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_typescript_tool_fetches_from_a_granted_host() {
    let server = serve(HELLO).await;
    let url = format!("http://127.0.0.1:{}/path", server.port);
    let (_dir, host) = fetcher("engine = \"auto\"\n[capabilities]\nnetwork = [\"127.0.0.1\"]\n");
    let report = host.report().await;
    assert_eq!(report[0].status, Status::Loaded, "{report:?}");
    assert_eq!(report[0].engine.as_deref(), Some("js"), "{report:?}");
    assert_eq!(report[0].routed, None, "a global fetch() needs no Node");
    assert!(
        !report[0].warnings.iter().any(|w| w.contains("network")),
        "the grant is usable: {report:?}"
    );
    let got = get(
        &host,
        vec![
            json!({ "url": url }),
            json!({ "url": url, "body": "posted text" }),
        ],
    )
    .await;
    assert_eq!(
        got,
        [
            ("200|yes|hello".to_string(), false),
            ("200|yes|hello".to_string(), false)
        ]
    );
    let requests = server.requests.lock().unwrap().clone();
    assert!(
        requests[0].starts_with("GET /path HTTP/1.1"),
        "{requests:?}"
    );
    assert!(requests[1].starts_with("POST /path"), "{requests:?}");
    assert!(
        requests[1]
            .to_ascii_lowercase()
            .contains("content-type: text/plain"),
        "{requests:?}"
    );
    assert!(requests[1].ends_with("posted text"), "{requests:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_grant_fetch_fails_naming_it() {
    let server = serve(HELLO).await;
    let url = format!("http://127.0.0.1:{}/", server.port);

    let (_dir, host) = fetcher("");
    let got = get(&host, vec![json!({ "url": url })]).await;
    let (message, is_error) = &got[0];
    assert!(*is_error, "{got:?}");
    assert!(
        message.contains(&format!("fetch(\"{url}\") is not available"))
            && message.contains("`capabilities.network`")
            && message.contains("network = [\"127.0.0.1\"]")
            && !message.contains("not defined"),
        "{got:?}"
    );

    let (_dir, host) = fetcher("[capabilities]\nnetwork = [\"api.example.com\"]\n");
    let got = get(&host, vec![json!({ "url": url })]).await;
    let (message, is_error) = &got[0];
    assert!(*is_error, "{got:?}");
    assert!(
        message.contains("fetch: 127.0.0.1 is not granted")
            && message.contains("capabilities.network"),
        "{got:?}"
    );
    assert_eq!(server.connections.load(Ordering::SeqCst), 0);
}

/// A plugin that POSTs to `URL` while it loads, whatever the answer.
const POSTS_AT_LOAD: &str = r#"import { definePlugin } from "yohost";
try {
  await fetch("URL", { method: "POST", body: "loaded" });
} catch (_) {}
export default definePlugin({ name: "poster", tools: [] });
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_check_reports_a_fetch_and_makes_none() {
    let server = serve(HELLO).await;
    let url = format!("http://127.0.0.1:{}/load", server.port);
    let dir = plugin_dir();
    write(
        dir.path(),
        "poster/index.ts",
        &POSTS_AT_LOAD.replace("URL", &url),
    );
    write(
        dir.path(),
        "poster/plugin.toml",
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\n",
    );
    let checked = PluginHost::builder(dir.path())
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

    let ran = PluginHost::open(dir.path()).unwrap();
    assert!(ran.refused().is_empty(), "{:?}", ran.refused());
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);
    assert!(
        server.requests.lock().unwrap()[0].starts_with("POST /load"),
        "loading for a run makes the request"
    );
}
