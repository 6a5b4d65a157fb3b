//! MCP servers dropped into a plugin directory, through a real
//! `yoagent::Agent` with `MockProvider`:
//! - the protocol's own test server (`@modelcontextprotocol/server-everything`):
//!   its tools listed by a check, a call, an image result, an error result,
//!   a TypeScript `before_tool` policy denying one of its calls, and the
//!   host's argument check;
//! - the filesystem server, inside its grant and outside it (where the
//!   server itself would allow the read, and the kernel denies it);
//! - a Python server from PyPI (`mcp-server-time`);
//! - the everything server over streamable HTTP, with a header read from a
//!   granted variable, its connection living across runs;
//! - a server that hangs past the call's deadline is told the call was
//!   cancelled and lives on; one that exits fails its calls naming it and
//!   is started again at the next run; `tools/list_changed` shows at the
//!   next run and not in the run that saw it; garbage on its output, a
//!   flood of notifications, an oversized result and a server that never
//!   answers `initialize` (the fixture `tests/fixture/hostile.mjs`);
//! - configurations refused with their reasons while the others load;
//! - a server's process ends when its host is dropped.
//!
//! The servers are installed by `.ci/run` under `<target>/tmp/mcp-servers`.

mod common;
#[path = "../../../host/tests/support/mod.rs"]
mod support;

use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use support::*;
use yohost::PluginHost;

/// The `everything` server in a folder, allowed to run.
fn everything(dir: &Path, manifest_extra: &str) {
    let package = npm_server("server-everything");
    folder(
        dir,
        "everything",
        json!({"everything": {"command": "node", "args": [package.join("dist/index.js"), "stdio"]}}),
        &format!(
            "[capabilities]\nexec = true\nread = [{:?}]\n{manifest_extra}",
            package.display().to_string()
        ),
    );
}

/// The hostile fixture in a folder, with `args` after its script.
fn hostile(dir: &Path, name: &str, args: &[&str], manifest_extra: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/hostile.mjs");
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::copy(&script, dir.join(name).join("hostile.mjs")).unwrap();
    let mut all = vec!["hostile.mjs".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    folder(
        dir,
        name,
        json!({ name: {"command": "node", "args": all} }),
        &format!("{manifest_extra}\n[capabilities]\nexec = true\n"),
    );
}

const DENY_FORBIDDEN: &str = r#"
import { definePlugin } from "yohost";
export default definePlugin({
  before_tool({ tool, args }) {
    if (JSON.stringify(args).includes("forbidden")) return { deny: `policy: ${tool} may not say that` };
    return null;
  },
});
"#;

#[tokio::test]
async fn the_everything_server_s_tools_run_under_the_policy_chain() {
    let dir = plugin_dir();
    everything(dir.path(), "");
    write(dir.path(), "policy.ts", DENY_FORBIDDEN);
    let host = host(dir.path());
    let report = host.report().await;
    let server = reported(&report, "everything");
    assert_eq!(server.engine.as_deref(), Some("mcp"), "{server:?}");
    assert_eq!(server.ecosystem.as_deref(), Some("mcp"));
    assert_eq!(server.processes, Some("kernel sandbox"));
    for tool in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(
            server.tools.iter().any(|t| t == tool),
            "{tool} in {:?}",
            server.tools
        );
    }

    let results = run_with(
        &host,
        vec![
            call("echo", json!({"message": "hello"})),
            call("get-sum", json!({"a": 2, "b": 3})),
            call("get-tiny-image", json!({})),
            call("echo", json!({"message": "forbidden words"})),
            call("get-sum", json!({"a": "two"})),
            call("get-annotated-message", json!({"messageType": "error"})),
            text("done"),
        ],
    )
    .await;
    assert_eq!(results[0], ("echo".into(), "Echo: hello".into(), false));
    assert!(
        results[1].1.contains('5') && !results[1].2,
        "{:?}",
        results[1]
    );
    assert!(
        !results[2].2,
        "the image passes the host's image check: {:?}",
        results[2]
    );
    let (_, denied, is_error) = &results[3];
    assert!(
        *is_error && denied.contains("policy: echo may not say that"),
        "{denied}"
    );
    let (_, checked, is_error) = &results[4];
    assert!(
        *is_error && checked.contains("\"two\""),
        "the host checks arguments: {checked}"
    );
    assert!(!results[5].2, "{:?}", results[5]);
}

#[tokio::test]
async fn an_image_result_reaches_the_model_as_an_image() {
    let dir = plugin_dir();
    everything(dir.path(), "");
    let host = host(dir.path());
    let (agent, requests) = scripted(vec![call("get-tiny-image", json!({})), text("done")]);
    let mut agent = agent
        .with_tools(Vec::new())
        .with_extension(host.extension());
    run(&mut agent, "go").await;
    let requests = requests.lock().unwrap().clone();
    let image = requests[1].iter().any(|m| {
        matches!(m, yoagent::Message::ToolResult { content, .. }
            if content.iter().any(|c| matches!(c, yoagent::Content::Image { mime_type, .. } if mime_type == "image/png")))
    });
    assert!(image, "{:?}", requests[1]);
}

#[tokio::test]
async fn the_filesystem_server_reads_inside_its_grant_and_is_denied_outside() {
    let dir = plugin_dir();
    let inside = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(inside.path(), "note.txt", "inside the grant");
    write(outside.path(), "secret.txt", "outside the grant");
    let package = npm_server("server-filesystem");
    // The server is told it may use both folders; only one is granted.
    folder(
        dir.path(),
        "files",
        json!({"files": {"command": "node", "args": [package.join("dist/index.js"), inside.path(), outside.path()]}}),
        &format!(
            "[capabilities]\nexec = true\nread = [{:?}, {:?}]\n",
            package.display().to_string(),
            inside.path().display().to_string()
        ),
    );
    write(dir.path(), "policy.ts", DENY_FORBIDDEN);
    let host = host(dir.path());
    let report = host.report().await;
    let files = reported(&report, "files");
    assert!(
        files.tools.iter().any(|t| t == "read_text_file"),
        "{files:?}"
    );
    let results = run_with(
        &host,
        vec![
            call(
                "read_text_file",
                json!({"path": inside.path().join("note.txt")}),
            ),
            call(
                "read_text_file",
                json!({"path": outside.path().join("secret.txt")}),
            ),
            call(
                "read_text_file",
                json!({"path": inside.path().join("forbidden.txt")}),
            ),
            text("done"),
        ],
    )
    .await;
    assert_eq!(results[0].1, "inside the grant", "{:?}", results[0]);
    let (_, outside_text, is_error) = &results[1];
    assert!(*is_error, "{outside_text}");
    assert!(
        !outside_text.contains("outside the grant"),
        "{outside_text}"
    );
    // The server's roots are the plugin's granted folders, so it refuses
    // the path itself; were it to try, the kernel would deny it.
    assert!(
        outside_text.contains("outside allowed directories")
            || outside_text.contains("EACCES")
            || outside_text.contains("permission denied"),
        "the server or the kernel denied it: {outside_text}"
    );
    assert!(
        results[2].2 && results[2].1.contains("policy:"),
        "{:?}",
        results[2]
    );
}

#[tokio::test]
async fn a_python_server_from_pypi_answers() {
    let dir = plugin_dir();
    let venv = servers().join("venv");
    let base = std::process::Command::new(venv.join("bin/python"))
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .expect("the venv's python");
    let base = String::from_utf8(base.stdout).unwrap().trim().to_string();
    folder(
        dir.path(),
        "time",
        json!({"time": {"command": venv.join("bin/mcp-server-time"), "args": ["--local-timezone", "UTC"]}}),
        &format!(
            "[capabilities]\nexec = true\nread = [{:?}, {base:?}]\n",
            venv.display().to_string()
        ),
    );
    write(dir.path(), "policy.ts", DENY_FORBIDDEN);
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call("get_current_time", json!({"timezone": "Europe/Paris"})),
            call("get_current_time", json!({"timezone": "forbidden"})),
            text("done"),
        ],
    )
    .await;
    assert!(
        !results[0].2 && results[0].1.contains("Europe/Paris"),
        "{:?}",
        results[0]
    );
    assert!(
        results[1].2 && results[1].1.contains("policy:"),
        "{:?}",
        results[1]
    );
}

#[tokio::test]
async fn a_call_past_its_deadline_is_cancelled_and_the_server_lives_on() {
    let dir = plugin_dir();
    hostile(dir.path(), "slow", &[], "[timeouts]\ncall_tool = 800\n");
    let host = host(dir.path());
    let results = run_with(&host, vec![call("hang", json!({})), text("done")]).await;
    let (_, hung, is_error) = &results[0];
    assert!(*is_error && hung.contains("timed out"), "{hung}");
    // A plugin that timed out sits out the rest of its run; the next run
    // finds the same server, which was told.
    let results = run_with(
        &host,
        vec![
            call("cancellations", json!({})),
            call("say", json!({"text": "still here"})),
            text("done"),
        ],
    )
    .await;
    assert!(
        !results[0].1.is_empty() && !results[0].2,
        "the server was told: {:?}",
        results[0]
    );
    assert_eq!(results[1].1, "say: still here");
}

#[tokio::test]
async fn a_server_that_exits_fails_its_calls_naming_it_and_starts_again_next_run() {
    let dir = plugin_dir();
    hostile(dir.path(), "fragile", &[], "");
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call("crash", json!({})),
            call("say", json!({"text": "a"})),
            text("done"),
        ],
    )
    .await;
    let (_, crashed, is_error) = &results[0];
    assert!(*is_error, "{crashed}");
    assert!(crashed.contains("fragile"), "names the server: {crashed}");
    assert!(
        results[1].2,
        "a later call in the run fails too: {:?}",
        results[1]
    );
    let results = run_with(
        &host,
        vec![call("say", json!({"text": "back"})), text("done")],
    )
    .await;
    assert_eq!(results[0], ("say".into(), "say: back".into(), false));
}

#[tokio::test]
async fn a_changed_tool_list_shows_at_the_next_run() {
    let dir = plugin_dir();
    hostile(dir.path(), "growing", &[], "");
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call("grow", json!({})),
            call("grown", json!({"text": "x"})),
            text("done"),
        ],
    )
    .await;
    assert_eq!(results[0].1, "grew");
    assert!(results[1].2, "the run keeps its snapshot: {:?}", results[1]);
    let results = run_with(
        &host,
        vec![call("grown", json!({"text": "x"})), text("done")],
    )
    .await;
    assert_eq!(results[0], ("grown".into(), "grown: x".into(), false));
}

#[tokio::test]
async fn garbage_floods_and_oversized_results_fail_closed_or_pass_over() {
    let dir = plugin_dir();
    hostile(dir.path(), "noisy", &[], "");
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call("garbage", json!({})),
            call("flood", json!({})),
            call("huge", json!({})),
            text("done"),
        ],
    )
    .await;
    assert_eq!(
        results[0],
        ("garbage".into(), "after garbage".into(), false)
    );
    assert_eq!(
        results[1],
        ("flood".into(), "after the flood".into(), false)
    );
    let (_, huge, is_error) = &results[2];
    assert!(
        *is_error && huge.len() < 4096,
        "{}",
        &huge[..huge.len().min(300)]
    );
}

#[tokio::test]
async fn configurations_that_cannot_run_are_refused_and_the_others_load() {
    let dir = plugin_dir();
    write(dir.path(), "broken.mcp.json", "{\"mcpServers\": {");
    write(
        dir.path(),
        "lone.mcp.json",
        r#"{"mcpServers": {"lone": {"command": "node"}}}"#,
    );
    folder(
        dir.path(),
        "several",
        json!({
            "nocommand": {"args": ["x"]},
            "missing": {"command": "no-such-program-anywhere"},
            "remote": {"url": "https://mcp.example.com/mcp"},
        }),
        "[capabilities]\nexec = true\n",
    );
    hostile(dir.path(), "mute", &["mute"], "[timeouts]\nload = 1000\n");
    hostile(dir.path(), "fine", &[], "");
    // `npx` as a README writes it, for a package not installed beside it:
    // a stand-in that would never answer, never started.
    hostile(
        dir.path(),
        "launched",
        &["mute"],
        "[timeouts]\nload = 1000\n",
    );
    write(
        dir.path(),
        "launched/mcp.json",
        &json!({"mcpServers": {"launched": {"command": "./npx", "args": ["-y", "@example/server"]}}}).to_string(),
    );
    write(
        dir.path(),
        "launched/npx",
        "#!/bin/sh\nexec node hostile.mjs mute\n",
    );
    use std::os::unix::fs::PermissionsExt;
    let npx = dir.path().join("launched/npx");
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    let host = host(dir.path());
    let report = host.report().await;
    let reason = |name: &str| {
        let r = reported(&report, name);
        assert!(r.reason.is_some(), "{name} is refused: {r:?}");
        r.reason.clone().unwrap()
    };
    assert!(
        reason("broken").contains("not valid JSON"),
        "{}",
        reason("broken")
    );
    assert!(reason("lone").contains("exec = true"), "{}", reason("lone"));
    assert!(
        reason("nocommand").contains("no `command`"),
        "{}",
        reason("nocommand")
    );
    assert!(
        reason("missing").contains("no-such-program-anywhere"),
        "{}",
        reason("missing")
    );
    assert!(
        reason("remote").contains("network = [\"mcp.example.com\"]"),
        "{}",
        reason("remote")
    );
    assert!(
        reason("mute").contains("initialize")
            && reason("mute").contains("the last of its stderr: mute: waiting for a registry"),
        "a server too late to answer is refused quoting its stderr: {}",
        reason("mute")
    );
    assert!(
        reason("launched").contains("`npx` would fetch @example/server as it starts")
            && reason("launched").contains("yohost add mcp:npm:@example/server --to DIR")
            && !reason("launched").contains("mute"),
        "a launcher is not run, and its refusal says what to do instead: {}",
        reason("launched")
    );
    assert!(reported(&report, "fine").reason.is_none());
    let results = run_with(
        &host,
        vec![call("say", json!({"text": "ok"})), text("done")],
    )
    .await;
    assert_eq!(results[0].1, "say: ok");
}

#[tokio::test]
async fn a_remote_server_over_streamable_http_answers_with_a_granted_header() {
    let server = HttpServer::start();
    std::env::set_var("YOHOST_MCP_TEST_BEARER", "not-a-real-token");
    let dir = plugin_dir();
    folder(
        dir.path(),
        "remote",
        json!({"remote": {
            "url": format!("http://127.0.0.1:{}/mcp", server.1),
            "headers": {"Authorization": "Bearer ${YOHOST_MCP_TEST_BEARER}"},
        }}),
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\nenv = [\"YOHOST_MCP_TEST_BEARER\"]\n",
    );
    write(dir.path(), "policy.ts", DENY_FORBIDDEN);
    let host = host(dir.path());
    let report = host.report().await;
    let remote = reported(&report, "remote");
    assert!(remote.tools.iter().any(|t| t == "echo"), "{remote:?}");
    assert!(remote.warnings.is_empty(), "{remote:?}");
    let results = run_with(
        &host,
        vec![
            call("echo", json!({"message": "over http"})),
            call("echo", json!({"message": "forbidden"})),
            text("done"),
        ],
    )
    .await;
    assert_eq!(results[0], ("echo".into(), "Echo: over http".into(), false));
    assert!(
        results[1].2 && results[1].1.contains("policy:"),
        "{:?}",
        results[1]
    );
    let results = run_with(
        &host,
        vec![call("get-sum", json!({"a": 1, "b": 2})), text("done")],
    )
    .await;
    assert!(
        results[0].1.contains('3') && !results[0].2,
        "the connection lives across runs: {:?}",
        results[0]
    );
}

/// The requests a recording HTTP server saw, as JSON lines.
fn recorded(record: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn over_http_one_session_serves_every_run_with_the_protocol_header_and_is_deleted_at_the_end()
{
    let scratch = tempfile::tempdir().unwrap();
    let record = scratch.path().join("requests.jsonl");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/http_recorder.mjs");
    let server = HttpServer::node(|node, port| {
        node.arg(fixture).arg(&record).arg(port.to_string());
    });

    let dir = plugin_dir();
    folder(
        dir.path(),
        "recorded",
        json!({"recorded": {"url": format!("http://127.0.0.1:{}/mcp", server.1)}}),
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\n",
    );
    let host = host(dir.path());
    for text_sent in ["one", "two"] {
        let results = run_with(
            &host,
            vec![call("echo", json!({"text": text_sent})), text("done")],
        )
        .await;
        assert_eq!(results[0].1, format!("echo: {text_sent}"));
    }
    drop(host);

    let requests = recorded(&record);
    let initializes = requests.iter().filter(|r| r["method"] == "initialize");
    assert_eq!(
        initializes.count(),
        1,
        "one session for the load and both runs: {requests:?}"
    );
    let after: Vec<_> = requests
        .iter()
        .filter(|r| r["method"] != "initialize")
        .collect();
    assert!(
        after
            .iter()
            .all(|r| r["version"].is_string() && r["session"] == "session-1"),
        "every request after `initialize` names the session and the protocol version: {requests:?}"
    );
    assert!(
        requests
            .iter()
            .any(|r| r["http"] == "DELETE" && r["session"] == "session-1"),
        "the session is deleted when the host drops the plugin: {requests:?}"
    );
}

#[tokio::test]
async fn a_relative_command_in_a_relative_plugin_directory_starts() {
    // The plugin directory is named relative to the tests' working folder,
    // and lies deeper than that name climbs (`..` stops at the root, which
    // would hide a path joined twice).
    let cwd = std::env::current_dir().unwrap();
    let temp = plugin_dir();
    let deep = temp.path().join("d/".repeat(cwd.components().count()));
    let dir = deep.as_path();
    hostile(dir, "relative", &[], "");
    write(
        dir,
        "relative/mcp.json",
        &json!({"mcpServers": {"relative": {"command": "./start.sh"}}}).to_string(),
    );
    write(
        dir,
        "relative/start.sh",
        "#!/bin/sh\nexec node hostile.mjs\n",
    );
    use std::os::unix::fs::PermissionsExt;
    let start = dir.join("relative/start.sh");
    std::fs::set_permissions(&start, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The same directory, named from the working folder of the tests.
    let common = cwd.ancestors().find(|a| dir.starts_with(a)).unwrap();
    let up = cwd.strip_prefix(common).unwrap().components().count();
    let relative = PathBuf::from("../".repeat(up)).join(dir.strip_prefix(common).unwrap());
    assert!(relative.is_relative() && relative.join("relative/start.sh").is_file());
    let host = host(&relative);
    let report = host.report().await;
    assert!(reported(&report, "relative").reason.is_none(), "{report:?}");
    let results = run_with(
        &host,
        vec![call("say", json!({"text": "from here"})), text("done")],
    )
    .await;
    assert_eq!(results[0], ("say".into(), "say: from here".into(), false));
}

#[tokio::test]
async fn a_check_opens_no_connection_to_an_http_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = plugin_dir();
    folder(
        dir.path(),
        "remote",
        json!({"remote": {"url": format!("http://127.0.0.1:{port}/mcp")}}),
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\n",
    );
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_mcp::adapter())
        .dry_run(true)
        .open()
        .expect("the directory opens");
    let report = host.report().await;
    let remote = reported(&report, "remote");
    assert!(remote.reason.is_none(), "{remote:?}");
    assert!(
        remote
            .warnings
            .iter()
            .any(|w| w.contains("opens no connection")),
        "{remote:?}"
    );
    drop(host);
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the check connected: {other:?}"),
    }
}

#[tokio::test]
async fn a_host_list_on_a_process_is_said_to_need_the_proxy_in_a_check_and_a_run() {
    let dir = plugin_dir();
    hostile(dir.path(), "listed", &[], "");
    let manifest = dir.path().join("listed/plugin.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{text}network = [\"example.com\"]\n")).unwrap();
    for dry_run in [true, false] {
        let host = PluginHost::builder(dir.path())
            .adapter(yohost_adapter_mcp::adapter())
            .dry_run(dry_run)
            .open()
            .expect("the directory opens");
        let report = host.report().await;
        let listed = reported(&report, "listed");
        assert!(
            listed
                .warnings
                .iter()
                .any(|w| w.contains("only through the host's proxy")),
            "dry run {dry_run}: {listed:?}"
        );
    }
}

#[tokio::test]
async fn a_server_that_demands_authorization_is_refused_saying_so() {
    let server = HttpServer::node(|node, port| {
        node.arg("-e").arg(format!(
            "require('http').createServer((q, r) => {{ r.writeHead(401, {{'www-authenticate': 'Bearer'}}); r.end(); }}).listen({port}, '127.0.0.1', () => console.error('listening'));"
        ));
    });
    let port = server.1;
    let dir = plugin_dir();
    folder(
        dir.path(),
        "locked",
        json!({"locked": {"url": format!("http://127.0.0.1:{port}/mcp")}}),
        "[capabilities]\nnetwork = [\"127.0.0.1\"]\n",
    );
    let host = host(dir.path());
    let report = host.report().await;
    let locked = reported(&report, "locked");
    assert_eq!(locked.status, yohost::Status::Refused, "{locked:?}");
    let reason = locked.reason.as_deref().unwrap_or_default();
    assert!(
        reason.contains("`locked` asks for authorization (HTTP 401"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_server_reads_the_system_files_and_its_own_proc_that_common_servers_need_and_no_secret() {
    let dir = plugin_dir();
    hostile(dir.path(), "reader", &[], "");
    let host = host(dir.path());
    let host_environ = format!("/proc/{}/environ", std::process::id());
    let files = [
        "/etc/mime.types",
        "/etc/localtime",
        "/etc/os-release",
        "/proc/self/status",
        "/proc/self/cgroup",
        "/etc/passwd",
        "/etc/shadow",
        "/proc/1/cmdline",
        &host_environ,
    ];
    let calls = files
        .iter()
        .map(|path| call("read", json!({ "path": path })))
        .chain([text("done")])
        .collect();
    let results = run_with(&host, calls).await;
    for (path, (_, answer, _)) in files.iter().zip(&results) {
        // Another process's /proc, and the secrets of /etc.
        let secret = path.ends_with("passwd")
            || path.ends_with("shadow")
            || (path.starts_with("/proc/") && !path.starts_with("/proc/self/"));
        if secret {
            assert_eq!(answer, "cannot read: EACCES", "{path}");
        } else if std::path::Path::new(path).exists() {
            assert!(answer.starts_with("read "), "{path}: {answer}");
        }
    }
}

#[tokio::test]
async fn other_clients_files_run_their_servers_through_a_run() {
    std::env::set_var("YOHOST_MCP_TEST_GREETING", "from the environment");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/hostile.mjs");
    let dir = plugin_dir();
    // VS Code's folder: its own key, a comment, `${env:VAR}`, `inputs`.
    write(
        dir.path(),
        ".vscode/mcp.json",
        "{\n  // the servers of this project\n  \"inputs\": [],\n  \"servers\": {\"code\": {\"type\": \"stdio\", \"command\": \"node\", \"args\": [\"hostile.mjs\"], \"env\": {\"GREETING\": \"${env:YOHOST_MCP_TEST_GREETING}\"}}}\n}",
    );
    write(
        dir.path(),
        ".vscode/plugin.toml",
        "[capabilities]\nexec = true\nenv = [\"YOHOST_MCP_TEST_GREETING\"]\n",
    );
    // Zed's list, its command an object; a disabled server beside it.
    write(
        dir.path(),
        "zed/mcp.json",
        &json!({"context_servers": {
            "zed": {"source": "custom", "command": {"path": "node", "args": ["hostile.mjs"]}},
            "off": {"command": "node", "disabled": true},
        }})
        .to_string(),
    );
    write(
        dir.path(),
        "zed/plugin.toml",
        "[capabilities]\nexec = true\n",
    );
    for folder in [".vscode", "zed"] {
        std::fs::copy(&script, dir.path().join(folder).join("hostile.mjs")).unwrap();
    }
    let host = host(dir.path());
    let report = host.report().await;
    let names: Vec<&str> = report.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["code", "zed"], "{report:?}");
    assert!(report.iter().all(|p| p.reason.is_none()), "{report:?}");
    let results = run_with(
        &host,
        vec![call("env", json!({"name": "GREETING"})), text("done")],
    )
    .await;
    assert_eq!(
        results[0],
        ("env".into(), "GREETING=from the environment".into(), false)
    );
}

#[tokio::test]
async fn a_server_that_asks_for_roots_is_given_the_plugin_s_granted_folders() {
    let dir = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    let data_path = data.path().canonicalize().unwrap();
    hostile(dir.path(), "rooted", &[], "");
    write(
        dir.path(),
        "rooted/plugin.toml",
        &format!(
            "[capabilities]\nexec = true\nread = [{:?}]\n",
            data_path.display().to_string()
        ),
    );
    let own = tempfile::tempdir().unwrap();
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_mcp::adapter())
        .data_dir(own.path())
        .open()
        .unwrap();
    let results = run_with(&host, vec![call("roots", json!({})), text("done")]).await;
    let (_, roots, is_error) = &results[0];
    assert!(!is_error, "{roots}");
    let expected = url::Url::from_directory_path(&data_path).unwrap();
    // Its grant, then its own data folder.
    let own = own.path().canonicalize().unwrap();
    let roots: Vec<&str> = roots.lines().collect();
    assert_eq!(roots.len(), 2, "{roots:?}");
    assert_eq!(roots[0], expected.as_str());
    let data = url::Url::parse(roots[1]).unwrap().to_file_path().unwrap();
    assert!(
        data.starts_with(&own) && data.ends_with("rooted"),
        "{roots:?}"
    );
}

#[tokio::test]
async fn a_server_is_told_its_own_data_folder() {
    let dir = plugin_dir();
    let own = tempfile::tempdir().unwrap();
    hostile(dir.path(), "keeper", &[], "");
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_mcp::adapter())
        .data_dir(own.path())
        .open()
        .unwrap();
    let results = run_with(
        &host,
        vec![
            call("env", json!({"name": "YOHOST_DATA_DIR"})),
            text("done"),
        ],
    )
    .await;
    let (_, told, is_error) = &results[0];
    assert!(!is_error, "{told}");
    let folder = PathBuf::from(told.strip_prefix("YOHOST_DATA_DIR=").unwrap());
    assert!(
        folder.starts_with(own.path().canonicalize().unwrap()),
        "{told}"
    );
    assert!(folder.ends_with("keeper") && folder.is_dir(), "{told}");
    assert!(!folder.starts_with(dir.path()), "{told}");
}

#[tokio::test]
async fn a_server_that_asks_the_user_is_declined_and_named() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    hostile(dir.path(), "curious", &[], "");
    let host = host(dir.path());
    let results = run_with(&host, vec![call("elicit", json!({})), text("done")]).await;
    assert_eq!(results[0], ("elicit".into(), "decline".into(), false));
    let lines: Vec<String> = logs.lines().iter().map(|l| l.to_string()).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("`curious` asked the user for input") && l.contains("your name?")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_server_s_process_ends_with_its_host() {
    let dir = plugin_dir();
    hostile(dir.path(), "mortal", &["marker-for-the-mortal-test"], "");
    let host = host(dir.path());
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    assert_eq!(running("marker-for-the-mortal-test").len(), 1);
    drop(host);
    // The server lives until killed: the bound is generous, so a loaded
    // machine does not fail a slow kill.
    assert_all_end(
        "marker-for-the-mortal-test",
        std::time::Duration::from_secs(30),
        "the server outlived its host",
    );
}

#[tokio::test]
async fn a_server_s_stderr_without_line_breaks_is_held_to_a_bound() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    hostile(dir.path(), "loud", &[], "");
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call("stderr_flood", json!({})),
            call("crash", json!({})),
            text("done"),
        ],
    )
    .await;
    assert_eq!(
        results[0],
        (
            "stderr_flood".into(),
            "after the stderr flood".into(),
            false
        )
    );
    assert!(results[1].2, "{:?}", results[1]);
    // The server wrote 64 MiB as one line: each log line of it is cut, and
    // the exit message quotes a bounded tail of it.
    let lines: Vec<String> = logs.lines().iter().map(|l| l.to_string()).collect();
    let longest = lines.iter().map(String::len).max().unwrap_or(0);
    assert!(longest < 64 << 10, "a log line of {longest} bytes");
    assert!(
        lines.iter().any(|l| l.contains("stderr: eeee")),
        "the cut line is logged"
    );
    assert!(
        lines.iter().any(|l| l.contains("crashing on purpose")),
        "the exit is logged with the last of its stderr"
    );
}

#[tokio::test]
async fn a_server_that_asks_without_reading_the_answers_is_ended_not_queued_for() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    hostile(dir.path(), "deaf", &[], "");
    let host = host(dir.path());
    // The server asks 5000 things and stops reading: its call may be
    // answered first (the client answers on its own task), but the answers
    // waiting for it are bounded, and past the bound it is ended.
    let results = run_with(&host, vec![call("unread", json!({})), text("done")]).await;
    let (_, answer, is_error) = &results[0];
    assert!(
        !*is_error || answer.contains("deaf"),
        "a failure names the server: {answer}"
    );
    let ended = || {
        logs.lines().iter().any(|l| {
            let l = l.to_string();
            l.contains("deaf")
                && (l.contains("does not read its input")
                    || l.contains("no longer reads its input"))
        })
    };
    let since = std::time::Instant::now();
    while !ended() && since.elapsed() < std::time::Duration::from_secs(30) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(ended(), "{:?}", logs.lines());
}

#[tokio::test]
async fn tool_lists_are_bounded_in_number_and_in_the_size_of_each_tool() {
    let dir = plugin_dir();
    hostile(dir.path(), "many", &["many"], "");
    hostile(dir.path(), "oversized", &["oversized"], "");
    let host = host(dir.path());
    let report = host.report().await;
    let many = reported(&report, "many");
    let reason = many.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("more than 1000 tools"), "{many:?}");
    let oversized = reported(&report, "oversized");
    assert!(oversized.reason.is_none(), "{oversized:?}");
    assert!(
        oversized
            .warnings
            .iter()
            .any(|w| w.contains("over 128 bytes")),
        "{:?}",
        oversized.warnings
    );
    assert!(oversized.tools.contains(&"long_description".to_string()));
    assert!(!oversized.tools.iter().any(|t| t.starts_with("nnnn")));
}

#[tokio::test]
async fn a_signing_key_outside_the_plugin_s_own_files_is_refused() {
    let dir = plugin_dir();
    let outside = tempfile::NamedTempFile::new().unwrap();
    for (name, file) in [
        ("outside", outside.path().display().to_string()),
        ("climbs", "../secret.pem".to_string()),
    ] {
        folder(
            dir.path(),
            name,
            json!({ name: {"url": "http://127.0.0.1:9/mcp", "oauth": {"grant": "client_credentials", "clientId": "me", "privateKeyFile": file}} }),
            "[capabilities]\nnetwork = [\"127.0.0.1\"]\n",
        );
    }
    write(dir.path(), "secret.pem", "not the plugin's");
    let host = host(dir.path());
    let report = host.report().await;
    for name in ["outside", "climbs"] {
        let plugin = reported(&report, name);
        assert_eq!(plugin.status, yohost::Status::Refused, "{plugin:?}");
        let reason = plugin.reason.as_deref().unwrap_or_default();
        assert!(
            reason.contains("`oauth.privateKeyFile`")
                && reason.contains("is not a file of the plugin's own folder"),
            "{name}: {reason}"
        );
    }
}

#[tokio::test]
async fn a_server_granted_one_file_reads_it_and_not_its_neighbours() {
    let dir = plugin_dir();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("granted.txt"), "granted").unwrap();
    std::fs::write(outside.path().join("neighbour.txt"), "secret").unwrap();
    let granted = outside.path().join("granted.txt");
    hostile(dir.path(), "reader", &[], "");
    write(
        dir.path(),
        "reader/plugin.toml",
        &format!(
            "[capabilities]\nexec = true\nread = [{:?}]\n",
            granted.display().to_string()
        ),
    );
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call("read", json!({ "path": granted })),
            call(
                "read",
                json!({ "path": outside.path().join("neighbour.txt") }),
            ),
            call("roots", json!({})),
            text("done"),
        ],
    )
    .await;
    assert!(results[0].1.starts_with("read "), "{:?}", results[0]);
    assert_eq!(results[1].1, "cannot read: EACCES", "the kernel denies it");
    assert!(
        !results[2].1.contains("granted.txt"),
        "a granted file is no root: {:?}",
        results[2]
    );
}
