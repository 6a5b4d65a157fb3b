//! A remote MCP server that demands OAuth, then asks the user
//! (elicitation) and the model (sampling) in the middle of a call
//! (`tests/fixture/oauth_asker.mjs`, built with the MCP TypeScript SDK and
//! its authorization server), through a real `yoagent::Agent`:
//! - with an authorizer and a request handler registered on the adapter,
//!   the server is authorized (dynamic registration, the code with PKCE,
//!   the browser's return to yohost's loopback listener), and its call
//!   carries the user's and the model's answers, each asked naming the
//!   server;
//! - a handler that fails sends the server an error naming what failed,
//!   and the call fails, saying so;
//! - without a handler, the server is offered neither, so its call fails
//!   and the run goes on;
//! - a remote server is told no roots, even with folders granted: this
//!   machine's paths are not its to know;
//! - the tokens a person's approval gave are kept, where only this user
//!   reads them, so the next host is authorized with no one asked; a
//!   plugin whose grant would reach them is refused.

// Sampling is deprecated by the specification's next version (SEP-2577);
// the versions yohost speaks have it.
#![allow(deprecated)]

mod common;
#[path = "../../../host/tests/support/mod.rs"]
mod support;

use common::*;
use serde_json::json;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use support::*;
use yohost::PluginHost;
use yohost_adapter_mcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, SamplingMessage,
};
use yohost_adapter_mcp::{Answer, Authorizer, McpAdapter, ServerRequestHandler};

/// The fixture on a free port of 127.0.0.1.
fn asker() -> HttpServer {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/oauth_asker.mjs");
    let modules = npm_server("server-everything").join("node_modules");
    HttpServer::node(|node, port| {
        node.arg(&script).arg(&modules).arg(port.to_string());
    })
}

/// A GET of `url` (plain HTTP): the response's status line and its
/// `Location`, if any.
fn get(url: &str) -> (String, Option<String>) {
    let parsed = url::Url::parse(url).expect("a URL");
    let address = format!("{}:{}", parsed.host_str().unwrap(), parsed.port().unwrap());
    let mut stream = std::net::TcpStream::connect(address).expect("the server listens");
    let target = match parsed.query() {
        Some(query) => format!("{}?{query}", parsed.path()),
        None => parsed.path().to_string(),
    };
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        parsed.host_str().unwrap()
    )
    .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let status = reply.lines().next().unwrap_or_default().to_string();
    let location = reply
        .lines()
        .find_map(|l| {
            l.strip_prefix("Location: ")
                .or_else(|| l.strip_prefix("location: "))
        })
        .map(str::to_string);
    (status, location)
}

/// A browser that approves at once: it follows the authorization page's
/// redirect back to yohost's listener, as a person's browser would.
#[derive(Default)]
struct Browser(Mutex<Vec<String>>);

impl Authorizer for Browser {
    fn present(&self, server: &str, url: &str) {
        self.0.lock().unwrap().push(server.to_string());
        let url = url.to_string();
        // Off the caller's thread: yohost's listener answers the return.
        std::thread::spawn(move || {
            let (status, location) = get(&url);
            let back =
                location.unwrap_or_else(|| panic!("the authorization page redirects: {status}"));
            get(&back);
        });
    }
}

/// Answers as a user and a model would, or fails, recording who asked.
struct Answers {
    fail: bool,
    asked: Mutex<Vec<String>>,
}

impl ServerRequestHandler for Answers {
    fn elicit<'a>(
        &'a self,
        server: &'a str,
        request: ElicitRequestParams,
    ) -> Answer<'a, ElicitResult> {
        Box::pin(async move {
            let message = serde_json::to_value(&request).unwrap()["message"].clone();
            self.asked
                .lock()
                .unwrap()
                .push(format!("{server} asks the user {message}"));
            if self.fail {
                return Err("the user closed the dialog".into());
            }
            Ok(ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"colour": "green"})))
        })
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        _request: CreateMessageRequestParams,
    ) -> Answer<'a, CreateMessageResult> {
        Box::pin(async move {
            self.asked
                .lock()
                .unwrap()
                .push(format!("{server} asks the model"));
            Ok(CreateMessageResult::new(
                SamplingMessage::assistant_text("42"),
                "scripted".into(),
            ))
        })
    }
}

/// The host's private cache, where the tokens are kept: one folder for
/// this test binary, so that no test writes the user's own.
fn private_cache() -> &'static std::path::Path {
    static CACHE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(|| tempfile::tempdir().unwrap());
    std::env::set_var("YOHOST_CACHE_DIR", cache.path());
    cache.path()
}

/// A plugin directory whose one server is the fixture at `port`.
fn directory(port: u16) -> tempfile::TempDir {
    let dir = plugin_dir();
    folder(
        dir.path(),
        "asker",
        json!({"asker": {"url": format!("http://127.0.0.1:{port}/mcp")}}),
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\n",
    );
    dir
}

/// Run `ask` once through a host of `dir` with `adapter`.
async fn ask(
    dir: &std::path::Path,
    adapter: McpAdapter,
) -> (Vec<(String, String, bool)>, PluginHost) {
    let host = PluginHost::builder(dir)
        .adapter(Arc::new(adapter))
        .open()
        .expect("the directory opens");
    let results = run_with(&host, vec![call("ask", json!({})), text("done")]).await;
    (results, host)
}

#[tokio::test]
async fn an_authorized_server_s_questions_reach_the_embedder_s_handler() {
    let server = asker();
    let dir = directory(server.1);
    let browser = Arc::new(Browser::default());
    let answers = Arc::new(Answers {
        fail: false,
        asked: Mutex::default(),
    });
    let adapter = McpAdapter::default()
        .with_authorizer(browser.clone())
        .with_requests(answers.clone());
    let (results, _host) = ask(dir.path(), adapter).await;
    assert_eq!(
        *browser.0.lock().unwrap(),
        ["asker"],
        "authorized once, naming the server"
    );
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        !results[0].2
            && results[0]
                .1
                .contains(r#"user: accept {"colour":"green"}; model: 42"#),
        "{:?}",
        results[0]
    );
    assert_eq!(
        *answers.asked.lock().unwrap(),
        [
            r#"asker asks the user "Which colour?""#,
            "asker asks the model"
        ]
    );
}

#[tokio::test]
async fn a_failing_handler_fails_the_call_saying_what_failed() {
    let server = asker();
    let dir = directory(server.1);
    let answers = Arc::new(Answers {
        fail: true,
        asked: Mutex::default(),
    });
    let adapter = McpAdapter::default()
        .with_authorizer(Arc::new(Browser::default()))
        .with_requests(answers.clone());
    let (results, _host) = ask(dir.path(), adapter).await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].2
            && results[0]
                .1
                .contains("asking the user for `asker` failed: the user closed the dialog"),
        "{:?}",
        results[0]
    );
    assert_eq!(
        answers.asked.lock().unwrap().len(),
        1,
        "the model was not asked"
    );
}

#[tokio::test]
async fn without_a_handler_the_server_is_offered_neither_and_the_run_goes_on() {
    let server = asker();
    let dir = directory(server.1);
    let adapter = McpAdapter::default().with_authorizer(Arc::new(Browser::default()));
    let (results, _host) = ask(dir.path(), adapter).await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].2 && results[0].1.to_lowercase().contains("elicitation"),
        "the SDK's server refuses to ask a client that offers no elicitation: {:?}",
        results[0]
    );
}

#[tokio::test]
async fn the_tokens_a_person_gave_serve_the_next_host_and_no_plugin_reaches_them() {
    let cache = private_cache();
    let server = asker();
    let dir = directory(server.1);
    let browser = Arc::new(Browser::default());
    let answers = Arc::new(Answers {
        fail: false,
        asked: Mutex::default(),
    });
    let adapter = || {
        McpAdapter::default()
            .with_authorizer(browser.clone())
            .with_requests(answers.clone())
    };
    let (results, host) = ask(dir.path(), adapter()).await;
    assert!(!results[0].2, "{results:?}");
    drop(host);
    let (results, _host) = ask(dir.path(), adapter()).await;
    assert!(!results[0].2, "{results:?}");
    assert_eq!(
        browser.0.lock().unwrap().len(),
        1,
        "the second host is authorized by the kept tokens"
    );
    // The other tests of this binary keep theirs beside them.
    let kept: Vec<_> = std::fs::read_dir(cache.join("oauth"))
        .unwrap()
        .flatten()
        .collect();
    assert!(!kept.is_empty(), "the tokens are kept");
    use std::os::unix::fs::PermissionsExt;
    for file in kept {
        let mode = file.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "read by this user alone: {file:?}");
    }
    // A plugin granted the folder that holds them is refused.
    folder(
        dir.path(),
        "snoop",
        json!({"snoop": {"url": "http://127.0.0.1:9/mcp"}}),
        &format!(
            "[capabilities]\nnetwork = [\"127.0.0.1\"]\nread = [{:?}]\n",
            cache.display().to_string()
        ),
    );
    let host = PluginHost::builder(dir.path())
        .adapter(Arc::new(adapter()))
        .open()
        .unwrap();
    let report = host.report().await;
    let snoop = reported(&report, "snoop");
    assert_eq!(snoop.status, yohost::Status::Refused, "{snoop:?}");
    assert!(
        snoop
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("where yohost keeps the OAuth tokens")),
        "{snoop:?}"
    );
}

#[tokio::test]
async fn a_remote_server_is_told_no_roots_though_folders_are_granted() {
    private_cache();
    let server = asker();
    let dir = directory(server.1);
    std::fs::create_dir_all(dir.path().join("asker/data")).unwrap();
    write(
        dir.path(),
        "asker/plugin.toml",
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\nread = [\"data\"]\n",
    );
    let host = PluginHost::builder(dir.path())
        .adapter(Arc::new(
            McpAdapter::default().with_authorizer(Arc::new(Browser::default())),
        ))
        .open()
        .unwrap();
    let results = run_with(&host, vec![call("roots", json!({})), text("done")]).await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        !results[0].2 && results[0].1.contains("roots: []"),
        "{:?}",
        results[0]
    );
}
