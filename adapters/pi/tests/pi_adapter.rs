//! The pi adapter: pi extensions run unchanged on the JavaScript engine.
//! Real extensions come from the published package
//! (`@earendil-works/pi-coding-agent`, fetched by `.ci/run`, or here on first
//! use, into the target dir). Pins:
//! - `yohost check` on the package's `examples/extensions` reports every
//!   entry as loaded or refused with a reason, and crashes on none;
//! - several examples get exactly their verdict: hooks, tools and warnings,
//!   or the refusal's reason naming the event, call or import;
//! - permission-gate.ts denies a dangerous bash command through a real
//!   agent and lets a harmless one run;
//! - protected-paths.ts denies `write_file` to `.env` and lets other writes
//!   happen;
//! - hello.ts's tool is offered with its typebox parameters as JSON Schema
//!   and is callable;
//! - a `before_agent_start` addition to the system prompt reaches the model
//!   as a note; replacing the prompt fails closed;
//! - a `tool_call` rewrite of pi's `edit` input reaches `edit_file` in
//!   yoagent's argument shape;
//! - a `tool_result` patch edits the result, and a throwing handler
//!   withholds it (failing the plugin closed for the rest of that run);
//! - observed events (`tool_execution_*`, `turn_end`) show yoagent's tools
//!   under pi's names, and `ctx.ui.notify` logs at its level with the run id;
//! - `input` answering `handled` or `transform` rejects the prompt;
//! - `session_start` runs at load and `session_shutdown` when the plugin
//!   is dropped; `node:fs` works inside the manifest's grants only;
//!   `pi.exec` runs only when `capabilities.exec` is granted;
//! - a call the host cannot honour (`pi.sendMessage`) fails its hook closed;
//! - the former `@mariozechner/*` names and `typebox` work, and tool
//!   parameters become plain JSON Schema;
//! - `context` handlers and `registerProvider` refuse the extension, naming
//!   them; shortcuts, flags and widgets set at load are reported as
//!   warnings; a `pi-tui` import refuses it, naming the import.

#[path = "../../../host/tests/support/mod.rs"]
mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::*;
use tokio_util::sync::CancellationToken;
use yohost::contract::{HookCall, HookReply, RunInfo};
use yohost::{CallLimits, PluginHost};

/// A host over `dir` with the pi adapter registered.
fn open(dir: &Path) -> Result<PluginHost, yohost::HostError> {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .open()
}

/// The pi package the tests load extensions from.
const PI_PACKAGE: &str = "@earendil-works/pi-coding-agent@0.74.2";

/// The unpacked package: `$YOHOST_PI_PACKAGE`, else
/// `<target>/tmp/pi-package/package`, fetched with `npm pack` if missing.
fn pi_package() -> &'static Path {
    static PACKAGE: OnceLock<PathBuf> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        if let Some(dir) = std::env::var_os("YOHOST_PI_PACKAGE") {
            return PathBuf::from(dir);
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-package");
        let package = dir.join("package");
        if !package.join("package.json").is_file() {
            std::fs::create_dir_all(&dir).unwrap();
            let fetched = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "npm pack --silent {PI_PACKAGE} >/dev/null && tar xzf ./*.tgz && rm ./*.tgz"
                ))
                .current_dir(&dir)
                .status()
                .expect("npm runs");
            assert!(
                fetched.success(),
                "fetching {PI_PACKAGE} failed: run .ci/run, or set YOHOST_PI_PACKAGE to an unpacked copy"
            );
        }
        package
    })
}

/// The package's example extensions.
fn examples() -> PathBuf {
    pi_package().join("examples/extensions")
}

/// A plugin directory holding copies of these examples.
fn with_examples(names: &[&str]) -> tempfile::TempDir {
    let dir = plugin_dir();
    for name in names {
        std::fs::copy(examples().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// What `yohost check --json` prints for `dir` (the command prints this
/// report; it lives in the `yohost-cli` package).
fn yohost_check(dir: &Path) -> serde_json::Value {
    let host = open(dir).expect("the directory opens");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let report = runtime.block_on(host.report());
    json!({ "plugins": report })
}

#[test]
fn check_reports_every_example_as_loaded_or_refused_with_a_reason() {
    let entries = std::fs::read_dir(examples())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != "README.md")
        .count();
    let doc = yohost_check(&examples());
    let plugins = doc["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), entries, "{doc}");
    for p in plugins {
        assert_eq!(p["ecosystem"], "pi", "{p}");
        match p["status"].as_str() {
            Some("loaded") => assert!(p["reason"].is_null(), "{p}"),
            Some("refused") => assert!(!p["reason"].as_str().unwrap().is_empty(), "{p}"),
            other => panic!("{other:?}: {p}"),
        }
    }
    let loaded = plugins.iter().filter(|p| p["status"] == "loaded").count();
    assert!(loaded >= 20, "{loaded} of {entries} loaded: {doc}");
}

#[test]
fn examples_get_exactly_their_verdict() {
    let doc = yohost_check(&examples());
    let find = |name: &str| checked(&doc, name);
    let loaded = |name: &str,
                  hooks: serde_json::Value,
                  tools: serde_json::Value,
                  warnings: serde_json::Value| {
        let p = find(name);
        assert_eq!(p["status"], "loaded", "{p}");
        assert_eq!(p["hooks"], hooks, "{name}");
        assert_eq!(p["tools"], tools, "{name}");
        assert_eq!(p["warnings"], warnings, "{name}");
    };
    loaded(
        "permission-gate",
        json!(["before_tool"]),
        json!([]),
        json!([]),
    );
    loaded(
        "protected-paths",
        json!(["before_tool"]),
        json!([]),
        json!([]),
    );
    loaded(
        "hello",
        json!(["tools", "call_tool"]),
        json!(["hello"]),
        json!([]),
    );
    loaded("input-transform", json!(["on_input"]), json!([]), json!([]));
    loaded(
        "pirate",
        json!(["before_model", "finish"]),
        json!([]),
        json!(["registers the command `/pirate`, which belongs to an app: the host ignores it"]),
    );
    loaded(
        "model-status",
        json!([]),
        json!([]),
        json!([
            "listens for `model_select`, which the host never emits: the handler never runs",
            "it implements no hooks and offers no tools, so the host will never call it"
        ]),
    );
    loaded(
        "notify",
        json!(["on_event", "finish"]),
        json!([]),
        json!([]),
    );

    let refused = |name: &str, parts: &[&str]| {
        let p = find(name);
        assert_eq!(p["status"], "refused", "{p}");
        let reason = p["reason"].as_str().unwrap();
        for part in parts {
            assert!(reason.contains(part), "{name}: {reason}");
        }
    };
    refused(
        "confirm-destructive",
        &[
            "listens for `session_before_switch`",
            "listens for `session_before_fork`",
        ],
    );
    refused("git-checkpoint", &["listens for `session_before_fork`"]);
    refused("snake", &["imports \"@earendil-works/pi-tui\""]);
    refused("ssh", &["imports \"node:child_process\""]);
    refused("with-deps", &["imports \"ms\""]);
    refused(
        "bash-spawn-hook",
        &["imports `createBashTool` from \"@earendil-works/pi-coding-agent\""],
    );
    refused(
        "qna",
        &["imports `complete` from \"@earendil-works/pi-ai\""],
    );
    // `existsSync` is false for a folder outside its grants, as in node, so
    // the extension loads and finds no rules.
    loaded(
        "claude-rules",
        json!(["before_model", "finish"]),
        json!([]),
        json!([]),
    );
}

#[tokio::test]
async fn permission_gate_denies_a_dangerous_bash_command() {
    let dir = with_examples(&["permission-gate.ts"]);
    let host = open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![
        call("bash", json!({"command": "sudo rm -rf /"})),
        call("bash", json!({"command": "echo harmless"})),
        text("done"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(yoagent::tools::bash::BashTool::new())])
        .with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "clean up").await);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].2, "the dangerous call is denied: {results:?}");
    assert!(
        results[0]
            .1
            .contains("Dangerous command blocked (no UI for confirmation)"),
        "{results:?}"
    );
    assert!(
        !results[1].2 && results[1].1.contains("harmless"),
        "{results:?}"
    );
    assert!(format!("{:?}", requests.lock().unwrap()[1]).contains("Dangerous command blocked"));
}

#[tokio::test]
async fn protected_paths_denies_writes_to_env_and_allows_others() {
    let dir = with_examples(&["protected-paths.ts"]);
    let work = plugin_dir();
    let secret = work.path().join(".env");
    let notes = work.path().join("notes.txt");
    let host = open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![
        call("write_file", json!({"path": secret, "content": "KEY=1"})),
        call("write_file", json!({"path": notes, "content": "hello"})),
        text("done"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(yoagent::tools::file::WriteFileTool::new())])
        .with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "write").await);
    assert!(results[0].2, "{results:?}");
    assert!(results[0].1.contains("is protected"), "{results:?}");
    assert!(!results[1].2, "{results:?}");
    assert!(!secret.exists());
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "hello");
}

#[tokio::test]
async fn hello_tool_is_offered_with_its_schema_and_callable() {
    let dir = with_examples(&["hello.ts"]);
    let host = open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![call("hello", json!({"name": "Ada"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "greet Ada").await;
    assert_eq!(
        tool_results(&events),
        [("hello".to_string(), "Hello, Ada!".to_string(), false)]
    );
    assert!(format!("{:?}", requests.lock().unwrap()[1]).contains("Hello, Ada!"));
    let HookReply::Tools(specs) = ask(&host, HookCall::Tools).await else {
        panic!("tools replies with tools");
    };
    assert_eq!(specs[0].name, "hello");
    assert_eq!(specs[0].label.as_deref(), Some("Hello"));
    assert_eq!(
        specs[0].parameters,
        json!({"type": "object", "properties": {"name": {"type": "string", "description": "Name to greet"}}, "required": ["name"]})
    );
}

/// What the host's only plugin answers to `call`, in a fresh run.
async fn ask(host: &PluginHost, call: impl FnOnce(RunInfo) -> HookCall) -> HookReply {
    let plugin = &host.plugins()[0];
    let run = RunInfo {
        run_id: "direct".into(),
        ..RunInfo::default()
    };
    let opened = plugin.plugin.open_run(&run).await.unwrap();
    let limits = CallLimits {
        deadline: Instant::now() + Duration::from_secs(5),
        cancel: CancellationToken::new(),
    };
    opened.call(call(run), limits).await.unwrap()
}

#[tokio::test]
async fn a_system_prompt_addition_reaches_the_model_as_a_note() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "rules.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("before_agent_start", async (event) => ({
    systemPrompt: event.systemPrompt + "\n\nAlways answer in haiku.",
  }));
}"#,
    );
    let host = open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![text("ok")]);
    let mut agent = agent.with_extension(host.extension());
    run(&mut agent, "hi").await;
    let first = requests.lock().unwrap()[0].clone();
    assert!(
        last_user_text(&first).contains("Always answer in haiku."),
        "{first:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn replacing_the_system_prompt_fails_closed_with_no_note() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "replace.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("before_agent_start", () => ({ systemPrompt: "You are a pirate." }));
}"#,
    );
    let host = open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![text("ok")]);
    let (logs, _guard) = capture_logs();
    let mut agent = agent.with_extension(host.extension());
    run(&mut agent, "hi").await;
    let first = requests.lock().unwrap()[0].clone();
    assert!(!format!("{first:?}").contains("pirate"), "{first:?}");
    let seen = format!("{:?}", logs.lines());
    assert!(seen.contains("replaces the system prompt"), "{seen}");
}

#[tokio::test]
async fn a_tool_call_rewrite_of_edit_reaches_edit_file_in_yoagents_shape() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "fix.ts",
        r#"import { isToolCallEventType } from "@earendil-works/pi-coding-agent";
export default function (pi) {
  pi.on("tool_call", (event) => {
    if (isToolCallEventType("edit", event)) event.input.edits[0].newText = "goodbye";
  });
}"#,
    );
    let work = plugin_dir();
    let file = write(work.path(), "a.txt", "hello world");
    let host = open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![
        call(
            "edit_file",
            json!({"path": file, "old_text": "hello", "new_text": "hi"}),
        ),
        text("done"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(yoagent::tools::edit::EditFileTool::new())])
        .with_extension(host.extension());
    let events = run(&mut agent, "edit").await;
    assert!(!tool_results(&events)[0].2, "{:?}", tool_results(&events));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "goodbye world");
}

#[tokio::test]
async fn tool_result_patches_edit_and_a_throwing_handler_withholds() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "filter.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("tool_result", (event) => {
    const text = event.content.map((b) => b.text).join("");
    if (text.includes("boom")) throw new Error("cannot judge this output");
    if (text.includes("secret")) return { content: [{ type: "text", text: "[redacted]" }] };
  });
}"#,
    );
    let host = open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![
        call("echo", json!({"text": "the secret is 42"})),
        call("echo", json!({"text": "boom"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "echo").await);
    assert_eq!(results[0], ("echo".into(), "[redacted]".into(), false));
    assert!(results[1].2, "{results:?}");
    assert!(!results[1].1.contains("boom"), "{results:?}");
    assert!(
        results[1].1.contains("filter"),
        "names the plugin: {results:?}"
    );

    let (agent, _) = scripted(vec![call("echo", json!({"text": "plain"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "echo").await);
    assert_eq!(
        results[0],
        ("echo".into(), "plain".into(), false),
        "the next run works"
    );
}

#[tokio::test]
async fn input_handled_or_transformed_rejects_the_prompt() {
    let dir = with_examples(&["input-transform.ts"]);
    let host = open(dir.path()).unwrap();
    for (prompt, expect) in [("ping", "handled"), ("?quick what is rust", "transform")] {
        let (agent, _) = scripted(vec![text("ok")]);
        let mut agent = agent.with_extension(host.extension());
        let events = run(&mut agent, prompt).await;
        let reason = input_rejection(&events).unwrap_or_else(|| panic!("{prompt}: {events:?}"));
        assert!(reason.contains(expect), "{prompt}: {reason}");
    }
    let (agent, requests) = scripted(vec![text("ok")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "hello").await;
    assert!(input_rejection(&events).is_none());
    assert_eq!(requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn session_events_run_at_load_and_unload_and_fs_stays_in_its_grants() {
    let dir = plugin_dir();
    // Outside the plugin's folder: a change there would reload the plugin.
    let out = plugin_dir();
    let secret = write(dir.path(), "secret.txt", "do not read");
    let log = out.path().join("log.txt");
    write(
        dir.path(),
        "journal/plugin.toml",
        &format!("[capabilities]\nwrite = [{:?}]\n", out.path()),
    );
    write(
        dir.path(),
        "journal/index.ts",
        &format!(
            r#"import type {{ ExtensionAPI }} from "@earendil-works/pi-coding-agent";
import {{ appendFileSync, readFileSync }} from "node:fs";
const LOG = {log:?};
export default function (pi: ExtensionAPI) {{
  pi.on("session_start", () => appendFileSync(LOG, "start\n"));
  pi.on("session_shutdown", () => appendFileSync(LOG, "stop\n"));
  pi.registerTool({{
    name: "peek",
    description: "read a file",
    parameters: {{ type: "object", properties: {{ path: {{ type: "string" }} }} }},
    async execute(_id, params) {{
      return {{ content: [{{ type: "text", text: readFileSync(params.path) }}] }};
    }},
  }});
}}"#
        ),
    );
    let host = open(dir.path()).unwrap();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "start\n");
    let (agent, _) = scripted(vec![
        call("peek", json!({"path": log})),
        call("peek", json!({"path": secret})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "peek").await);
    assert_eq!(results[0], ("peek".into(), "start\n".into(), false));
    assert!(results[1].2, "{results:?}");
    assert!(
        results[1].1.contains("is not granted") && !results[1].1.contains("do not read"),
        "{results:?}"
    );
    drop(agent);
    drop(host);
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(&log).unwrap() != "start\nstop\n" {
        assert!(Instant::now() < deadline, "session_shutdown did not run");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

const EXEC_PLUGIN: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "say",
    description: "echo through a process",
    parameters: { type: "object", properties: {} },
    async execute() {
      const result = await pi.exec("echo", ["from", "a process"]);
      return { content: [{ type: "text", text: result.stdout.trim() }], details: { code: result.code } };
    },
  });
}"#;

#[tokio::test]
async fn pi_exec_runs_a_process_only_when_granted() {
    for (granted, expect, is_error) in [
        (true, "from a process", false),
        (false, "capabilities.exec", true),
    ] {
        let dir = plugin_dir();
        write(dir.path(), "say/index.ts", EXEC_PLUGIN);
        write(
            dir.path(),
            "say/plugin.toml",
            &format!("[capabilities]\nexec = {granted}\n"),
        );
        let host = open(dir.path()).unwrap();
        let (agent, _) = scripted(vec![call("say", json!({})), text("done")]);
        let mut agent = agent.with_extension(host.extension());
        let results = tool_results(&run(&mut agent, "say").await);
        assert_eq!(results[0].2, is_error, "{results:?}");
        assert!(results[0].1.contains(expect), "{results:?}");
    }
}

#[tokio::test]
async fn a_call_the_host_cannot_honour_fails_its_hook_closed() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "chatty.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("tool_call", () => {
    pi.sendMessage({ customType: "x", content: "hi", display: true });
  });
}"#,
    );
    let (logs, _guard) = capture_logs();
    let host = open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "echo").await);
    assert!(
        results[0].2 && results[0].1.contains("plugin 'chatty' returned an error"),
        "{results:?}"
    );
    assert!(
        lines_with(&logs, "plugin", "chatty")
            .iter()
            .any(|l| l["fields"]["message"]
                .as_str()
                .unwrap()
                .contains("pi.sendMessage is not available")),
        "the detail is logged: {:?}",
        logs.lines()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn observed_events_show_yoagents_tools_under_pis_names() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "watch.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("tool_execution_start", (e, ctx) => ctx.ui.notify(`start ${e.toolName} ${e.args.content}`, "info"));
  pi.on("tool_execution_end", (e, ctx) => ctx.ui.notify(`end ${e.toolName} error=${e.isError}`, "info"));
  pi.on("turn_end", (e, ctx) => ctx.ui.notify(`turn ${e.turnIndex}`, "warning"));
}"#,
    );
    let work = plugin_dir();
    let host = open(dir.path()).unwrap();
    let (logs, _guard) = capture_logs();
    let (agent, _) = scripted(vec![
        call(
            "write_file",
            json!({"path": work.path().join("a.txt"), "content": "hi"}),
        ),
        text("done"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(yoagent::tools::file::WriteFileTool::new())])
        .with_extension(host.extension());
    run(&mut agent, "write").await;
    let lines = logs.plugin_lines();
    let messages: Vec<(String, String)> = lines
        .iter()
        .map(|l| {
            (
                l["fields"]["message"].as_str().unwrap_or("").to_string(),
                l["fields"]["level"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected = [
        ("start write hi", "info"),
        ("end write error=false", "info"),
        ("turn 0", "warn"),
        ("turn 1", "warn"),
    ];
    for (message, level) in expected {
        assert!(
            messages.iter().any(|(m, l)| m == message && l == level),
            "{message} at {level} in {messages:?}"
        );
    }
    assert!(lines
        .iter()
        .all(|l| !l["fields"]["run_id"].as_str().unwrap_or("").is_empty()));
}

#[tokio::test]
async fn former_package_names_and_typebox_give_json_schema_tools() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "todo.ts",
        r#"import { Type } from "typebox";
import { StringEnum } from "@mariozechner/pi-ai";
import { defineTool, type ExtensionAPI } from "@mariozechner/pi-coding-agent";
const todo = defineTool({
  name: "todo",
  label: "Todo",
  description: "Keep a list",
  parameters: Type.Object({
    action: StringEnum(["list", "add"] as const),
    text: Type.Optional(Type.String({ description: "The item" })),
    tags: Type.Optional(Type.Array(Type.String())),
  }),
  async execute(_id, params) {
    return { content: [{ type: "text", text: `${params.action}:${params.text ?? ""}` }] };
  },
});
export default function (pi: ExtensionAPI) {
  pi.registerTool(todo);
}"#,
    );
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let HookReply::Tools(specs) = ask(&host, HookCall::Tools).await else {
        panic!("tools replies with tools");
    };
    assert_eq!(
        specs[0].parameters,
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "add"]},
                "text": {"type": "string", "description": "The item"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["action"],
        })
    );
    let (agent, _) = scripted(vec![
        call("todo", json!({"action": "add", "text": "milk"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "add milk").await);
    assert_eq!(results[0], ("todo".into(), "add:milk".into(), false));
}

#[test]
fn what_rewrites_the_request_is_refused_and_what_belongs_to_an_app_is_reported() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "rewriter.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("context", (event) => ({ messages: event.messages.slice(-2) }));
  pi.registerProvider("proxy", { baseUrl: "https://proxy.example" });
}"#,
    );
    write(
        dir.path(),
        "appish.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerShortcut("ctrl+x", { handler: () => {} });
  pi.registerFlag("plan", { type: "boolean", default: false });
  pi.on("session_start", (_event, ctx) => ctx.ui.setWidget("w", ["line"]));
  pi.on("tool_call", () => (pi.getFlag("plan") ? { block: true, reason: "planning" } : undefined));
}"#,
    );
    write(
        dir.path(),
        "tui.ts",
        r#"import { Text } from "@earendil-works/pi-tui";
export default function (pi) { pi.registerMessageRenderer("x", () => new Text("", 0, 0)); }"#,
    );
    let doc = yohost_check(dir.path());
    let find = |name: &str| checked(&doc, name);
    let rewriter = find("rewriter");
    assert_eq!(rewriter["status"], "refused");
    let reason = rewriter["reason"].as_str().unwrap();
    assert!(
        reason.contains("listens for `context`")
            && reason.contains("calls `pi.registerProvider(\"proxy\")`"),
        "{reason}"
    );
    let appish = find("appish");
    assert_eq!(appish["status"], "loaded", "{appish}");
    assert_eq!(appish["hooks"], json!(["before_tool"]));
    assert_eq!(
        appish["warnings"],
        json!([
            "registers the shortcut `ctrl+x`, which belongs to an app: the host ignores it",
            "registers the flag `--plan`, which belongs to an app: the host ignores it",
            "sets a UI widget, which belongs to an app: the host ignores it",
        ])
    );
    let tui = find("tui");
    assert_eq!(tui["status"], "refused");
    assert!(
        tui["reason"]
            .as_str()
            .unwrap()
            .contains("imports \"@earendil-works/pi-tui\""),
        "{tui}"
    );
}
