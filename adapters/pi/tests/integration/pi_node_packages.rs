//! Published pi packages that need all of Node, through a host with both pi
//! entries (embedded and Node) registered, as the `yohost` command has:
//! `pi-subagents` goes to Node, which it needs, though its source has a
//! handler refused by design (`before_provider_request`, left out there when
//! the rest stands alone), and is refused until its manifest grants `exec`,
//! which it uses at start-up, the denial naming the grant;
//! `pi-prompt-template-model`, whose `session_before_compact` handler the
//! host reports (it never emits that event), loads on Node, which it needs;
//! `pi-web-access` is routed to
//! Node, loads with its tools, and a fetch that fails is an error result;
//! `pi-mcp-adapter` is routed to Node, loads with its `mcp` tool, and calls
//! a local MCP server (`fixtures/mcp-echo-server.mjs`, on the MCP SDK of
//! its own install) over stdio: the answer reaches the model; a server that
//! is missing, crashes or never answers, and a manifest that does not grant
//! `exec`, are error results, and the run goes on.
//!
//! The packages (with `pi-web-access` and `pi-mcp-adapter`) are installed
//! once under the target dir (as `.ci/run` does: pinned versions,
//! `devDependencies` dropped, their pi peers pinned to the pi the adapter
//! follows (1.6.0), `npm install --omit=dev --ignore-scripts`), or found at
//! `$YOHOST_PI_NODE_PACKAGES`. Every test is skipped, saying why, when
//! `node` is missing.

use crate::support;

use crate::package;

use package::{link_copy, npm_install, open_with_node, PiPeers};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::*;
use yohost::Status;

/// The packages, pinned.
const PACKAGES: [&str; 4] = [
    "pi-web-access@0.28.0",
    "pi-mcp-adapter@2.36.0",
    "pi-subagents@0.67.0",
    "pi-prompt-template-model@0.12.2",
];

/// Skip the test (printing why) when Node is missing.
macro_rules! needs_node {
    () => {
        if let Some(why) = node_missing() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// The folder holding one folder per package, with its dependencies:
/// `$YOHOST_PI_NODE_PACKAGES`, else `<target>/tmp/pi-node-packages`,
/// installed with npm if missing.
fn packages() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("YOHOST_PI_NODE_PACKAGES") {
            return PathBuf::from(dir);
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-node-packages");
        for spec in PACKAGES {
            let name = spec.split('@').next().unwrap();
            npm_install(
                &dir.join(name),
                spec,
                PiPeers::Pinned,
                "run .ci/run, or set YOHOST_PI_NODE_PACKAGES to a folder of installed copies",
            );
        }
        dir
    })
}

/// A package that needs Node goes there even when its source has a handler
/// refused by design (the shape there leaves it out when the rest stands
/// alone); pi-subagents then needs `exec` at start-up, and the denial names
/// the grant. A handler of an event the host never emits is reported, not
/// refused.
#[tokio::test]
async fn packages_that_need_node_go_there_and_say_what_they_need() {
    needs_node!();
    let dir = plugin_dir();
    for name in ["pi-subagents", "pi-prompt-template-model"] {
        std::os::unix::fs::symlink(packages().join(name), dir.path().join(name)).unwrap();
    }
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let templates = reported(&report, "pi-prompt-template-model");
    assert_eq!(templates.status, Status::Loaded, "{templates:?}");
    assert_eq!(templates.engine.as_deref(), Some("node"), "{templates:?}");
    assert!(
        templates.warnings.iter().any(|w| w
            .contains("listens for `session_before_compact`, which the host never emits")),
        "{templates:?}"
    );
    let subagents = reported(&report, "pi-subagents");
    assert_eq!(subagents.status, Status::Refused, "{subagents:?}");
    assert_eq!(subagents.engine.as_deref(), Some("node"), "{subagents:?}");
    let reason = subagents.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("starting a process (grant `exec = true`"),
        "{reason}"
    );
}

/// `pi-web-access` needs Node (`node:net`, `node:http`, …), so it is routed
/// there and loads with its tools. The tests never reach the internet: a
/// fetch of the loopback address is refused by the package's own guard,
/// whose answer (an `Error:` text it does not mark as an error, as in pi,
/// once it has kept the attempt with `pi.appendEntry`) reaches the model,
/// and the run goes on to its end.
#[tokio::test]
async fn pi_web_access_loads_on_node_and_a_blocked_fetch_is_the_package_s_own_answer() {
    needs_node!();
    let dir = plugin_dir();
    std::os::unix::fs::symlink(
        packages().join("pi-web-access"),
        dir.path().join("pi-web-access"),
    )
    .unwrap();
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let entry = reported(&report, "pi-web-access");
    assert_eq!(entry.status, Status::Loaded, "{report:?}");
    assert_eq!(entry.engine.as_deref(), Some("node"), "{entry:?}");
    assert!(entry.routed.is_some(), "{entry:?}");
    for tool in ["web_search", "fetch_content"] {
        assert!(entry.tools.iter().any(|t| t == tool), "{tool}: {entry:?}");
    }

    let (agent, _) = scripted(vec![
        call(
            "fetch_content",
            serde_json::json!({"url": "http://127.0.0.1:9/"}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "fetch it").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    let (name, text, _) = &results[0];
    assert_eq!(name, "fetch_content");
    assert!(
        text.contains("Blocked internal address for 127.0.0.1"),
        "{results:?}"
    );
    assert_eq!(
        final_assistant(&events),
        (yoagent::StopReason::Stop, None),
        "the run ends as the model answers"
    );
}

/// The folder pi-mcp-adapter takes as pi's agent folder in these tests:
/// `$PI_CODING_AGENT_DIR`, set once for this test binary. Its `mcp.json`
/// names the fixture server in each of its modes (`echo` answers, `crash`
/// exits when called, `silent` never answers) and a `missing` server whose
/// command does not exist.
fn mcp_agent_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-mcp-agent");
        std::fs::create_dir_all(&dir).unwrap();
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-echo-server.mjs");
        let modules = packages().join("pi-mcp-adapter/node_modules");
        // Each server starts in the agent folder, which the manifest grants
        // (the host's working directory is not granted).
        let server =
            |mode: &str| json!({"command": "node", "args": [fixture, modules, mode], "cwd": dir});
        let config = json!({"mcpServers": {
            "echo": server("answer"),
            "crash": server("crash"),
            "silent": server("silent"),
            "missing": {"command": dir.join("no-such-server"), "cwd": dir},
        }});
        std::fs::write(dir.join("mcp.json"), config.to_string()).unwrap();
        std::env::set_var("PI_CODING_AGENT_DIR", &dir);
        dir
    })
}

/// `pi-mcp-adapter` in a folder of `dir`, with `manifest` as its
/// `plugin.toml`: a copy of the installed package made of hard links (or
/// copies, across file systems), so the install is left as it was.
fn install_mcp_adapter(dir: &Path, manifest: &str) {
    let folder = dir.join("pi-mcp-adapter");
    link_copy(&packages().join("pi-mcp-adapter"), &folder).unwrap();
    std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
}

/// The manifest that lets pi-mcp-adapter use its agent folder (named by the
/// variable it is granted; written, since it keeps its metadata cache
/// there) and, with `exec`, start the servers `mcp.json` names, with
/// `extra` appended.
///
/// The servers run in the plugin's kernel sandbox, so the manifest also
/// lets them read the fixture server and the MCP SDK it imports.
fn mcp_manifest(exec: bool, extra: &str) -> String {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let modules = packages().join("pi-mcp-adapter/node_modules");
    format!(
        "[capabilities]\nexec = {exec}\nenv = [\"PI_CODING_AGENT_DIR\"]\nwrite = [{:?}]\nread = [{:?}, {:?}]\n{extra}",
        mcp_agent_dir(),
        fixtures,
        modules
    )
}

/// One `mcp` proxy call of the MCP tool `echo` on `server`.
fn mcp_echo(server: &str, text: &str) -> yoagent::provider::mock::MockResponse {
    call(
        "mcp",
        json!({"tool": "echo", "server": server, "args": {"text": text}}),
    )
}

/// `pi-mcp-adapter` imports Node's own modules, so it is routed to Node,
/// where it loads with its `mcp` proxy tool. Called through the agent, the
/// tool connects to the local MCP server (lazily, over stdio) and its
/// answer is the tool result the model reads in its next request.
#[tokio::test]
async fn pi_mcp_adapter_loads_on_node_and_calls_a_local_mcp_server() {
    needs_node!();
    let dir = plugin_dir();
    install_mcp_adapter(dir.path(), &mcp_manifest(true, ""));
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let entry = reported(&report, "pi-mcp-adapter");
    assert_eq!(entry.status, Status::Loaded, "{report:?}");
    assert_eq!(entry.engine.as_deref(), Some("node"), "{entry:?}");
    assert!(entry.routed.is_some(), "{entry:?}");
    assert!(entry.tools.iter().any(|t| t == "mcp"), "{entry:?}");

    let (agent, requests) = scripted(vec![mcp_echo("echo", "hello from yohost"), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "echo it").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    let (name, content, is_error) = &results[0];
    assert_eq!(name, "mcp");
    assert!(!is_error, "{results:?}");
    assert!(content.contains("echo: hello from yohost"), "{content}");
    let requests = requests.lock().unwrap();
    assert_eq!(requests.len(), 2, "the model is asked again after the tool");
    let seen = format!("{:?}", requests[1].last().unwrap());
    assert!(seen.contains("echo: hello from yohost"), "{seen}");
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));
}

/// A server whose command does not exist, and one that exits while it is
/// called, end their calls with pi-mcp-adapter's answer that the server
/// failed, not a crash or a hang; the plugin keeps serving, so a later call
/// of the same run reaches a server that answers.
#[tokio::test]
async fn an_mcp_server_that_is_missing_or_crashes_is_an_error_result() {
    needs_node!();
    let dir = plugin_dir();
    install_mcp_adapter(dir.path(), &mcp_manifest(true, ""));
    let host = open_with_node(dir.path());
    let (agent, _) = scripted(vec![
        mcp_echo("missing", "a"),
        mcp_echo("crash", "b"),
        mcp_echo("echo", "c"),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "echo it").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    // pi-mcp-adapter's own answers: a server it could not start is "not
    // available"; neither is taken for the server's answer.
    assert!(results[0].1.contains("not available"), "{results:?}");
    for result in &results[..2] {
        assert!(!result.1.contains("echo: "), "{result:?}");
    }
    assert_eq!(results[2].1, "echo: c", "{results:?}");
    assert!(!results[2].2, "{results:?}");
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));
}

/// A server that never answers holds the call only until the host's
/// deadline: the call fails closed with the host's fixed text, the run goes
/// on to its end, and the next run gets a new process whose calls answer.
#[tokio::test]
async fn an_mcp_server_that_never_answers_fails_closed_at_the_deadline() {
    needs_node!();
    let dir = plugin_dir();
    install_mcp_adapter(
        dir.path(),
        &mcp_manifest(true, "[timeouts]\ncall_tool = 4000\n"),
    );
    let host = open_with_node(dir.path());
    let (agent, _) = scripted(vec![mcp_echo("silent", "a"), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let started = Instant::now();
    let events = run(&mut agent, "echo it").await;
    // The server never answers: the outcome below (the call failed closed)
    // and a bound a call left waiting would exceed, generous (15x its
    // deadline) so a loaded machine does not fail it.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].2, "{results:?}");
    assert!(results[0].1.contains("[yohost]"), "{results:?}");
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));

    let (agent, _) = scripted(vec![mcp_echo("echo", "again"), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "echo it").await);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].1, "echo: again", "{results:?}");
}

/// Without `capabilities.exec`, Node's permission model does not let the
/// adapter start the server: the call is an error result that says so, and
/// no server runs.
#[tokio::test]
async fn without_exec_no_mcp_server_is_started_and_the_result_says_why() {
    needs_node!();
    let dir = plugin_dir();
    install_mcp_adapter(dir.path(), &mcp_manifest(false, ""));
    let host = open_with_node(dir.path());
    let report = host.report().await;
    assert_eq!(
        reported(&report, "pi-mcp-adapter").status,
        Status::Loaded,
        "{report:?}"
    );
    let (agent, _) = scripted(vec![mcp_echo("echo", "a"), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "echo it").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(!results[0].1.contains("echo: a"), "{results:?}");
    assert!(results[0].1.contains("restricted"), "{results:?}");
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));
}
