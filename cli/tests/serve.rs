//! `yohost serve`, through rmcp's client, over stdio and over HTTP:
//! - the TypeScript tools are listed and called;
//! - a `before_tool` policy's deny reaches the client as an error result
//!   naming the policy, and an `after_tool` redaction as the result;
//! - a tool that never ends is cancelled by the client, and the next call
//!   works; a tool past its deadline fails as in a run;
//! - each session's `run_id` is on its plugins' log lines (standard error),
//!   different for two sessions, and its client gets those lines (before
//!   the call's result, over stdio) and no other session's;
//! - a cancelled call of an MCP server's tool is cancelled at that server; what a plugin prints goes to standard
//!   error, never into the protocol (stdio);
//! - a change to the directory tells the client its tools changed, and the
//!   new tool is listed (stdio);
//! - `--locked` serves only the plugins `yohost.lock` records, as it
//!   records them (stdio);
//! - a required plugin's failure fails the session's run (no call starts
//!   after it), and a required plugin refused at load fails its start,
//!   naming it;
//! - over HTTP a request without the bearer token, or with a wrong one,
//!   gets 401, a session over `--max-sessions` is refused, and SIGTERM
//!   finishes the runs of the sessions still open;
//! - a pi extension's tool (pi's published `hello.ts`), an MCP server's
//!   (`mcp-server-time`, from PyPI) and a DSH tool (the published
//!   `@deepseek-ai/dsh-tool-todo`) are served too, under the same policy,
//!   over stdio and HTTP;
//! - `--print-config` prints what each client needs.
//!
//! The pi package, the MCP server and the DSH package are where `.ci/run`
//! installs them (`<target>/tmp`; `$YOHOST_PI_PACKAGE` for another copy of
//! pi's, `$YOHOST_DSH_PACKAGES` of the DSH packages). `serve_soak.rs` holds
//! many sessions at once to their own runs and the server's memory.

mod common;
#[path = "../../adapters/dsh/tests/packages/mod.rs"]
mod dsh_packages;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::serve::{
    call, http_server, http_session, installed, stdio_session, stdio_session_with, text, Client,
    Session, Stderr,
};
use rmcp::model::{CallToolRequest, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use support::{plugin_dir, write};

/// The plugins served: tools (`echo`, `leak`, `hang`), a tool with a short
/// deadline (`stall`), a policy (`guard`) and a filter (`redactor`).
fn plugins() -> tempfile::TempDir {
    let dir = plugin_dir();
    write(
        dir.path(),
        "tools/index.ts",
        r#"import { definePlugin, defineTool } from "yohost";
const echo = defineTool<{ text: string }>({
  name: "echo", description: "Say it back.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  run(args, ctx) {
    ctx.log.info(`echo ${args.text}`);
    if (args.text === "report") ctx.progress("echoing");
    return { content: [{ type: "text", text: args.text }] };
  },
});
const leak = defineTool<Record<string, never>>({
  name: "leak", description: "Tell a secret.",
  parameters: { type: "object", properties: {} },
  run() { return { content: [{ type: "text", text: "the key is sk-abcdef1234567890" }] }; },
});
const hang = defineTool<Record<string, never>>({
  name: "hang", description: "Never end.",
  parameters: { type: "object", properties: {} },
  async run() { await new Promise(() => {}); return { content: [] }; },
});
export default definePlugin({ name: "tools", tools: [echo, leak, hang] });
"#,
    );
    // An MCP server served back: the protocol's conformance fixture.
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/plugins/conformance/fixture_mcp.mjs");
    write(
        dir.path(),
        "fx/fixture_mcp.mjs",
        &std::fs::read_to_string(fixture).unwrap(),
    );
    write(
        dir.path(),
        "fx/mcp.json",
        r#"{"mcpServers": {"fx": {"command": "node", "args": ["fixture_mcp.mjs"]}}}"#,
    );
    write(
        dir.path(),
        "fx/plugin.toml",
        "[capabilities]\nexec = true\n",
    );
    write(
        dir.path(),
        "slow/plugin.toml",
        "[timeouts]\ncall_tool = 500\n",
    );
    write(
        dir.path(),
        "slow/index.ts",
        r#"import { definePlugin, defineTool } from "yohost";
const stall = defineTool<Record<string, never>>({
  name: "stall", description: "Outlive the deadline.",
  parameters: { type: "object", properties: {} },
  async run() { await new Promise(() => {}); return { content: [] }; },
});
export default definePlugin({ name: "slow", tools: [stall] });
"#,
    );
    write(
        dir.path(),
        "guard/index.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  name: "guard",
  before_tool({ tool, args }) {
    if (JSON.stringify(args).includes("forbidden")) {
      return { deny: "forbidden words are not allowed" };
    }
    return null;
  },
  finish({ end }, ctx) { ctx.log.info(`finished: ${end}`); },
});
"#,
    );
    write(
        dir.path(),
        "redactor/index.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  name: "redactor",
  after_tool({ output }) {
    const content = output.content.map((b) =>
      b.type === "text" ? { type: "text", text: b.text.replace(/sk-[a-z0-9]+/g, "[REDACTED]") } : b);
    return { content };
  },
});
"#,
    );
    dir
}

async fn names(session: &Session) -> Vec<String> {
    let tools = session.list_all_tools().await.unwrap();
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// What every transport must do: list, call, deny, redact, cancel, time out.
async fn exercise(session: &Session, stderr: &Stderr) {
    let names = names(session).await;
    for tool in ["echo", "leak", "hang", "stall"] {
        assert!(names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }
    let echoed = session
        .call_tool(call("echo", json!({"text": "hello"})))
        .await
        .unwrap();
    assert_eq!(
        (text(&echoed).as_str(), echoed.is_error),
        ("hello", Some(false))
    );

    let denied = session
        .call_tool(call("echo", json!({"text": "forbidden"})))
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true), "{denied:?}");
    let said = text(&denied);
    assert!(
        said.contains("policy `guard`") && said.contains("forbidden words are not allowed"),
        "{said}"
    );

    let leaked = session.call_tool(call("leak", json!({}))).await.unwrap();
    assert_eq!(text(&leaked), "the key is [REDACTED]");

    // Dropping the call sends `notifications/cancelled`.
    let hung = tokio::time::timeout(
        Duration::from_secs(2),
        session.call_tool(call("hang", json!({}))),
    );
    assert!(hung.await.is_err(), "the hung call ended on its own");
    stderr.until_logged("the call was cancelled").await;
    // A cancelled call of an MCP server's tool is cancelled at that server.
    let hung = tokio::time::timeout(
        Duration::from_secs(2),
        session.call_tool(call("fx_echo", json!({"text": "hang"}))),
    );
    assert!(hung.await.is_err(), "the hung call ended on its own");
    stderr.until_logged("fx: cancelled request").await;
    let after = session
        .call_tool(call("echo", json!({"text": "again"})))
        .await
        .unwrap();
    assert_eq!(text(&after), "again");

    let stalled = session.call_tool(call("stall", json!({}))).await.unwrap();
    assert_eq!(stalled.is_error, Some(true));
    assert!(text(&stalled).contains("timed out"), "{}", text(&stalled));
}

/// Call `tool` with a progress token: its result's text, and its first
/// `count` progress notifications (`progress`, `message`).
async fn call_with_progress(
    session: &Session,
    client: &Client,
    tool: &str,
    args: serde_json::Value,
    count: usize,
) -> (String, Vec<(f64, String)>) {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(call(tool, args)));
    let options = PeerRequestOptions::no_options();
    let handle = session.peer().send_request_with_option(request, options);
    let handle = handle.await.unwrap();
    let token = handle.progress_token.clone();
    let ServerResult::CallToolResult(answered) = handle.await_response().await.unwrap() else {
        panic!("not a tool's result");
    };
    (text(&answered), client.progress_of(&token, count).await)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_s_progress_reaches_the_client_unless_an_output_filter_runs() {
    let dir = plugins();
    std::fs::remove_dir_all(dir.path().join("redactor")).unwrap();
    let client = Client::default();
    let (session, _stderr) = stdio_session(dir.path(), client.clone()).await;
    // An MCP server's progress for a call reaches the client: counted by
    // the server, each naming what that server sent.
    let (answered, progress) =
        call_with_progress(&session, &client, "fx_echo", json!({"text": "progress"}), 3).await;
    assert_eq!(answered, "progress");
    let steps = (1..=3).map(|n| (f64::from(n), format!("{n}/3: step {n}")));
    assert_eq!(progress, steps.collect::<Vec<_>>());
    // So does a TypeScript tool's (`ctx.progress`).
    let (answered, progress) =
        call_with_progress(&session, &client, "echo", json!({"text": "report"}), 1).await;
    assert_eq!(answered, "report");
    assert_eq!(progress, [(1.0, "echoing".to_string())]);
    session.cancel().await.unwrap();

    // With a redactor (`after_tool`), which sees only the final result, no
    // progress passes: a message could carry what it would withhold.
    let dir = plugins();
    let client = Client::default();
    let (session, _stderr) = stdio_session(dir.path(), client.clone()).await;
    for (tool, text) in [("fx_echo", "progress"), ("echo", "report")] {
        let (answered, _) =
            call_with_progress(&session, &client, tool, json!({"text": text}), 0).await;
        assert_eq!(answered, text);
    }
    let leaked = session.call_tool(call("leak", json!({}))).await.unwrap();
    assert_eq!(text(&leaked), "the key is [REDACTED]");
    assert_eq!(client.progress.lock().unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn serves_over_stdio() {
    let dir = plugins();
    // What a plugin prints goes to standard error, not into the protocol.
    write(
        dir.path(),
        "noisy.py",
        r#"from yohost import CallTool, Plugin, ToolReply, ToolResult

print("noise at import", flush=True)
plugin = Plugin("noisy")


@plugin.tool(name="noisy", description="Print, then answer.", parameters={"type": "object", "properties": {}})
def noisy(call: CallTool) -> ToolReply:
    print("noise in a call", flush=True)
    return ToolResult("quiet")
"#,
    );
    let client = Client::default();
    let (session, stderr) = stdio_session(dir.path(), client.clone()).await;
    exercise(&session, &stderr).await;
    // A call's plugin log lines reach the client, before its result.
    assert!(
        client.logged("tools").contains(&"echo hello".to_string()),
        "{:?}",
        client.logged("tools")
    );
    let ordered = json!({"text": "ordered"});
    session.call_tool(call("echo", ordered)).await.unwrap();
    assert!(client.logged("tools").contains(&"echo ordered".to_string()));
    let quiet = session.call_tool(call("noisy", json!({}))).await.unwrap();
    assert_eq!(text(&quiet), "quiet");
    stderr.until_logged("noise in a call").await;
    assert!(stderr.text().contains("noise at import"));

    let run_ids = stderr.run_ids("tools");
    assert!(
        !run_ids.is_empty()
            && run_ids
                .iter()
                .all(|id| id.starts_with("serve-") && *id == run_ids[0]),
        "{run_ids:?}\n{}",
        stderr.text()
    );

    write(
        dir.path(),
        "extra/index.ts",
        r#"import { definePlugin, defineTool } from "yohost";
const extra = defineTool<Record<string, never>>({
  name: "extra", description: "New.", parameters: { type: "object", properties: {} },
  run() { return { content: [{ type: "text", text: "new" }] }; },
});
export default definePlugin({ name: "extra", tools: [extra] });
"#,
    );
    tokio::time::timeout(Duration::from_secs(30), client.list_changed.notified())
        .await
        .expect("tools/list_changed");
    assert!(names(&session).await.iter().any(|n| n == "extra"));
    let extra = session.call_tool(call("extra", json!({}))).await.unwrap();
    assert_eq!(text(&extra), "new");
    session.cancel().await.unwrap();
    // The session's end finishes its run.
    stderr.until_logged("finished: completed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_required_plugins_failure_fails_the_session_as_it_fails_a_run() {
    // A filter that fails: its output is withheld, and no call starts after.
    let dir = plugins();
    write(dir.path(), "strict/plugin.toml", "mode = \"required\"\n");
    write(
        dir.path(),
        "strict/index.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  name: "strict",
  after_tool({ args }) {
    if (args.text === "boom") throw new Error("cannot filter this");
    return null;
  },
});
"#,
    );
    let (session, stderr) = stdio_session(dir.path(), Client::default()).await;
    let boom = session
        .call_tool(call("echo", json!({"text": "boom"})))
        .await
        .unwrap();
    assert_eq!(boom.is_error, Some(true), "{boom:?}");
    assert!(!text(&boom).contains("boom"), "{}", text(&boom));
    let later = session
        .call_tool(call("echo", json!({"text": "fine"})))
        .await
        .unwrap();
    assert_eq!(later.is_error, Some(true), "{later:?}\n{}", stderr.text());
    assert!(
        text(&later).starts_with("Tool call not started: the run failed"),
        "{}",
        text(&later)
    );
    session.cancel().await.unwrap();

    // A required plugin refused at load: the session's run cannot start.
    write(dir.path(), "strict/index.ts", "this is not TypeScript {");
    let (session, _) = stdio_session(dir.path(), Client::default()).await;
    let refused = session.list_all_tools().await.unwrap_err().to_string();
    assert!(refused.contains("strict"), "{refused}");
    session.cancel().await.unwrap();
}

/// A single-file TypeScript plugin named `name` offering the tool `name`.
fn named_tool(name: &str) -> String {
    format!(
        r#"import {{ definePlugin, defineTool }} from "yohost";
const tool = defineTool<Record<string, never>>({{
  name: "{name}", description: "Say its name.",
  parameters: {{ type: "object", properties: {{}} }},
  run() {{ return {{ content: [{{ type: "text", text: "{name}" }}] }}; }},
}});
export default definePlugin({{ name: "{name}", tools: [tool] }});
"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn locked_serves_only_what_the_lock_records_as_it_records_it() {
    let dir = plugins();
    write(dir.path(), "late.ts", &named_tool("late"));
    let path = dir.path().to_str().unwrap();
    let (code, _, err) = common::yohost(&["lock", path], dir.path());
    assert_eq!(code, Some(0), "{err}");
    // After the lock: a plugin added, and a locked one changed.
    write(dir.path(), "added.ts", &named_tool("added"));
    write(
        dir.path(),
        "late.ts",
        &format!("{}// changed\n", named_tool("late")),
    );
    let (session, _) = stdio_session_with(dir.path(), &["--locked"], Client::default()).await;
    let locked = names(&session).await;
    assert!(locked.contains(&"echo".to_string()), "{locked:?}");
    assert!(
        !locked.contains(&"added".to_string()) && !locked.contains(&"late".to_string()),
        "{locked:?}"
    );
    session.cancel().await.unwrap();
    // Without `--locked`, both are served.
    let (session, _) = stdio_session(dir.path(), Client::default()).await;
    let unlocked = names(&session).await;
    for name in ["added", "late"] {
        assert!(unlocked.contains(&name.to_string()), "{unlocked:?}");
    }
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn serves_over_http() {
    let dir = plugins();
    let mut server = http_server(dir.path(), &["--max-sessions", "2"]).await;
    let first = http_session(&server.url).await.unwrap();
    exercise(&first, &server.stderr).await;
    let second = http_session(&server.url).await.unwrap();
    let hi = second
        .call_tool(call("echo", json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&hi), "hi");

    // Each client gets the log lines of its own session's run only.
    for _ in 0..600 {
        if second
            .service()
            .logged("tools")
            .contains(&"echo hi".to_string())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (firsts, seconds) = (
        first.service().logged("tools"),
        second.service().logged("tools"),
    );
    assert_eq!(seconds, ["echo hi"], "{firsts:?}");
    assert!(
        firsts.contains(&"echo hello".to_string()) && !firsts.contains(&"echo hi".to_string()),
        "{firsts:?}"
    );

    let mut run_ids = server.stderr.run_ids("tools");
    run_ids.sort();
    run_ids.dedup();
    assert_eq!(run_ids.len(), 2, "{run_ids:?}\n{}", server.stderr.text());
    assert!(
        run_ids.iter().all(|id| id.starts_with("serve-")),
        "{run_ids:?}"
    );

    let third = http_session(&server.url).await;
    assert!(third.is_err(), "a third session over --max-sessions 2");

    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    for token in [None, Some("Bearer wrong"), Some("secret")] {
        let mut request = http
            .post(&server.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(initialize.to_string());
        if let Some(token) = token {
            request = request.header("authorization", token);
        }
        assert_eq!(request.send().await.unwrap().status(), 401, "{token:?}");
    }
    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
    // Each session's end finishes its run.
    let mut finished = server
        .stderr
        .until_run_ids_of("guard", "finished: completed", 2, Duration::from_secs(30))
        .await;
    finished.sort();
    assert_eq!(finished, run_ids, "{}", server.stderr.text());

    // Interrupted, the server finishes the run of a session still open.
    let last = http_session(&server.url).await.unwrap();
    let said = last
        .call_tool(call("echo", json!({"text": "last"})))
        .await
        .unwrap();
    assert_eq!(text(&said), "last");
    let pid = server.child.id().unwrap() as i32;
    // SAFETY: a signal to the server this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = tokio::time::timeout(Duration::from_secs(30), server.child.wait()).await;
    assert!(status.expect("the server exits").unwrap().success());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let finished = server.stderr.run_ids_of("guard", "finished: completed");
    assert_eq!(finished.len(), 3, "{}", server.stderr.text());
    drop(last);
}

#[tokio::test(flavor = "multi_thread")]
async fn serves_a_pi_extensions_an_mcp_servers_and_a_dsh_tool_over_stdio_and_http() {
    let dir = plugins();
    let pi = std::env::var_os("YOHOST_PI_PACKAGE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| installed("pi-package-1.6.0/package"));
    std::fs::copy(
        pi.join("examples/extensions/hello.ts"),
        dir.path().join("hello.ts"),
    )
    .unwrap();
    let venv = installed("mcp-servers/venv");
    let base = std::process::Command::new(venv.join("bin/python"))
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .expect("the venv's python");
    let base = String::from_utf8(base.stdout).unwrap().trim().to_string();
    let server = json!({"mcpServers": {"time": {
        "command": venv.join("bin/mcp-server-time"), "args": ["--local-timezone", "UTC"]}}});
    write(dir.path(), "time/mcp.json", &server.to_string());
    let grants = format!(
        "[capabilities]\nexec = true\nread = [{:?}, {base:?}]\n",
        venv.display().to_string()
    );
    write(dir.path(), "time/plugin.toml", &grants);
    let todo = dsh_packages::dsh_package("todo").expect("run .ci/run first");
    dsh_packages::copy_tree(&todo, &dir.path().join("dsh-tool-todo"));
    write(
        dir.path(),
        "dsh-tool-todo/plugin.toml",
        "[config]\nallowParallelInProgress = false\n",
    );

    let (session, stderr) = stdio_session(dir.path(), Client::default()).await;
    foreign_tools(&session, &stderr).await;
    session.cancel().await.unwrap();
    let server = http_server(dir.path(), &[]).await;
    let session = http_session(&server.url).await.unwrap();
    foreign_tools(&session, &server.stderr).await;
    session.cancel().await.unwrap();
}

/// pi's `hello`, the time server's `get_current_time` and DSH's
/// `todo_write` answer through `session`, and `guard` denies each.
async fn foreign_tools(session: &Session, stderr: &Stderr) {
    let names = names(session).await;
    assert!(
        ["hello", "get_current_time", "todo_write"]
            .iter()
            .all(|tool| names.iter().any(|n| n == tool)),
        "{names:?}\n{}",
        stderr.text()
    );

    let hello = session
        .call_tool(call("hello", json!({"name": "MCP"})))
        .await
        .unwrap();
    assert_eq!(text(&hello), "Hello, MCP!");
    let time = session
        .call_tool(call(
            "get_current_time",
            json!({"timezone": "Europe/Paris"}),
        ))
        .await
        .unwrap();
    assert!(
        time.is_error != Some(true) && text(&time).contains("Europe/Paris"),
        "{time:?}"
    );
    let denied = session
        .call_tool(call("get_current_time", json!({"timezone": "forbidden"})))
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true));
    assert!(
        text(&denied).contains("policy `guard`"),
        "{}",
        text(&denied)
    );

    let todos = json!({"todos": [
        {"content": "write the adapter", "status": "completed"},
        {"content": "test it", "status": "in_progress"},
        {"content": "ship it", "status": "pending"},
    ]});
    let planned = session.call_tool(call("todo_write", todos)).await.unwrap();
    assert_eq!(
        (text(&planned).as_str(), planned.is_error),
        (
            "Updated todo list: 1 pending, 1 in progress, 1 completed.",
            Some(false)
        ),
        "{}",
        stderr.text()
    );
    let forbidden = json!({"todos": [{"content": "forbidden", "status": "pending"}]});
    let denied = session
        .call_tool(call("todo_write", forbidden))
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true), "{denied:?}");
    assert!(
        text(&denied).contains("policy `guard`") && text(&denied).contains("forbidden words"),
        "{}",
        text(&denied)
    );
}

#[test]
fn http_refuses_to_start_without_a_token() {
    let dir = plugins();
    let dir = dir.path().to_str().unwrap();
    let (code, _, stderr) = common::yohost(&["serve", dir, "--http"], Path::new("."));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("needs a bearer token"), "{stderr}");
    let (code, _, stderr) = common::yohost(
        &["serve", dir, "--http", "--no-auth", "--listen", "0.0.0.0:0"],
        Path::new("."),
    );
    assert_eq!(code, Some(1));
    assert!(stderr.contains("loopback"), "{stderr}");
}

#[test]
fn print_config_names_this_command_and_the_directory() {
    let dir = plugin_dir();
    let dir_arg = dir.path().to_str().unwrap();
    for (client, list) in [
        ("claude", "mcpServers"),
        ("cursor", "mcpServers"),
        ("vscode", "servers"),
        ("zed", "context_servers"),
    ] {
        let (code, stdout, stderr) = common::yohost(
            &["serve", dir_arg, "--print-config", client],
            Path::new("."),
        );
        assert_eq!(code, Some(0), "{stderr}");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        let server = &doc[list]["yohost"];
        assert_eq!(server["command"], env!("CARGO_BIN_EXE_yohost"), "{stdout}");
        assert_eq!(server["args"], json!(["serve", dir_arg]), "{stdout}");
    }
}
