//! The pi adapter: pi extensions run unchanged on the JavaScript engine.
//! Real extensions come from the published package
//! (`@earendil-works/pi-coding-agent@1.6.0`, fetched by `.ci/run`, or here
//! on first use, into the target dir). Pins:
//! - `yohost check` gives every one of the package's 78 examples exactly
//!   its verdict (the table `VERDICTS`): loaded with its hooks and tools,
//!   or refused with its reason; the 4 refused by design name the event or
//!   method, even when an import is also missing;
//! - permission-gate.ts, protected-paths.ts, hello.ts, input-transform.ts,
//!   todo.ts, structured-output.ts, prompt-customizer.ts and
//!   system-prompt-header.ts work through a real agent;
//! - Node's globals and modules (`process` within the granted environment,
//!   `Buffer`, `setInterval`, `TextEncoder`, `URL`, `node:os`,
//!   `node:crypto`, `import.meta.url`) and pi's constants and helpers work,
//!   and yohost's own plugins get none of Node's globals;
//! - pi 1.x's methods are mapped, refused by design naming the method, or
//!   fail naming the method, never with a bare `TypeError`;
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
//!   is dropped, to completion even when the program ends right after
//!   (auto-commit-on-exit commits in a git repository); `node:fs` works
//!   inside the manifest's grants only; `pi.exec` runs only when
//!   `capabilities.exec` is granted;
//! - `terminate: true` (structured-output) ends the run without the
//!   model's follow-up request;
//! - `prepareArguments` runs before the schema check; a `spawnHook`'s `env`
//!   reaches the process, and the hook is shown only granted variables;
//! - a call the host cannot honour (`pi.sendMessage` that triggers a turn)
//!   fails its hook closed;
//! - a name pi no longer exports is `undefined` where it is imported, as
//!   pi's loader has it, on the embedded engine and on Node: the extension
//!   loads, says so in a warning, and a call of it fails that call;
//! - a package of several extensions loads those that stand alone when one
//!   is refused, each left out named in a warning with its reason; one
//!   whose every extension is refused is refused;
//! - `require` in an ES module works on the embedded engine, as pi's
//!   loader allows it, for a built-in and a file of the extension; one whose
//!   specifier is known only at run time fails by name;
//! - `Intl` and `process.stdout`'s listeners are there on the embedded
//!   engine, as an extension finds them on Node;
//! - `pi.appendEntry` keeps its entries in the session, in order, read back
//!   through `ctx.sessionManager` in the same run and the next, and never
//!   shown to the model;
//! - the former `@mariozechner/*` names and `typebox` work, and tool
//!   parameters become plain JSON Schema;
//! - `context` handlers and `registerProvider` refuse the extension, naming
//!   them; shortcuts and widgets set at load are reported as warnings,
//!   commands and flags are offered (`check` lists them); pi-tui
//!   components load and render nothing.

use crate::support;

use crate::package;

use package::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;
use yohost::contract::{HookCall, HookReply};
use yohost::PluginHost;

/// What `yohost check --json` prints for `dir` (the command prints this
/// report; it lives in the `yohost-cli` package).
fn yohost_check(dir: &Path) -> serde_json::Value {
    let host = PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .adapter(yohost_adapter_pi::node_adapter())
        .dry_run(true)
        .open()
        .expect("the directory opens");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let report = runtime.block_on(host.report());
    json!({ "plugins": report })
}

/// What `yohost check` says of one example.
#[derive(Debug)]
enum Verdict {
    /// Loaded, with exactly these hooks and tools.
    Loaded(&'static [&'static str], &'static [&'static str]),
    /// Refused, with a reason that contains this text.
    Refused(&'static str),
}
use Verdict::{Loaded, Refused};

/// The verdict on every entry of the pinned package's
/// `examples/extensions`. A change in any verdict fails
/// `every_example_gets_exactly_its_verdict`; update this table (and the
/// figures in README.md) on purpose.
const VERDICTS: &[(&str, Verdict)] = &[
    ("auto-commit-on-exit", Loaded(&[], &[])),
    ("bash-spawn-hook", Loaded(&["tools", "call_tool"], &["bash"])),
    ("bookmark", Loaded(&["command"], &[])),
    ("border-status-editor", Loaded(&["on_event", "finish"], &[])),
    ("built-in-tool-renderer", Loaded(&["tools", "call_tool"], &["read", "bash", "edit", "write"])),
    ("claude-rules", Loaded(&["before_model", "finish"], &[])),
    ("commands", Loaded(&["command"], &[])),
    ("confirm-destructive", Loaded(&[], &[])),
    ("custom-compaction", Loaded(&[], &[])),
    ("custom-footer", Loaded(&["command"], &[])),
    ("custom-header", Loaded(&["command"], &[])),
    ("custom-provider-anthropic", Refused("calls `pi.registerProvider")),
    ("custom-provider-gitlab-duo", Refused("calls `pi.registerProvider")),
    // Its `message_end` handler is left out: its command and observers
    // stand alone.
    ("debug-provider", Loaded(&["on_event", "finish", "command"], &[])),
    ("dirty-repo-guard", Loaded(&[], &[])),
    // It needs `node:zlib`, so it runs on Node, where it registers its
    // command.
    ("doom-overlay", Loaded(&["command"], &[])),
    ("dynamic-resources", Loaded(&[], &[])),
    ("dynamic-tools", Loaded(&["tools", "call_tool", "command"], &["echo_session"])),
    ("entry-renderer", Loaded(&["command"], &[])),
    ("event-bus", Loaded(&["command"], &[])),
    ("file-trigger", Refused("EACCES: permission denied, watch '/tmp/agent-trigger.txt' (node:fs: reading /tmp/agent-trigger.txt is not granted")),
    ("git-checkpoint", Loaded(&["after_tool", "on_event", "finish"], &[])),
    ("git-merge-and-resolve", Loaded(&["on_event", "finish"], &[])),
    ("github-issue-autocomplete", Refused("exec: `git remote -v` would be denied: the plugin's plugin.toml does not grant `capabilities.exec = true`")),
    ("gondolin", Refused("the package `@earendil-works/gondolin` is not installed")),
    ("handoff", Loaded(&["command"], &[])),
    ("hello", Loaded(&["tools", "call_tool"], &["hello"])),
    ("hidden-thinking-label", Loaded(&["command"], &[])),
    ("inline-bash", Loaded(&["on_input"], &[])),
    ("input-transform", Loaded(&["on_input"], &[])),
    ("input-transform-streaming", Loaded(&["on_input"], &[])),
    ("interactive-shell", Loaded(&[], &[])),
    ("jev-router", Refused("calls `pi.registerVirtualModel")),
    ("mac-system-theme", Loaded(&[], &[])),
    ("message-renderer", Loaded(&["command"], &[])),
    ("minimal-mode", Loaded(&["tools", "call_tool"], &["read", "bash", "write", "edit", "find", "grep", "ls"])),
    ("modal-editor", Loaded(&[], &[])),
    ("model-status", Loaded(&[], &[])),
    ("notify", Loaded(&[], &[])),
    ("overlay-qa-tests", Loaded(&["command"], &[])),
    ("overlay-test", Loaded(&["command"], &[])),
    ("permission-gate", Loaded(&["before_tool"], &[])),
    ("pirate", Loaded(&["before_model", "finish", "command"], &[])),
    // Its `context` handler is left out: its gate, note and commands
    // stand alone.
    ("plan-mode", Loaded(&["before_tool", "before_model", "on_event", "finish", "command"], &[])),
    ("preset", Loaded(&["before_model", "on_event", "finish", "command"], &[])),
    ("project-trust", Loaded(&[], &[])),
    ("prompt-customizer", Loaded(&["before_model", "finish"], &[])),
    ("protected-paths", Loaded(&["before_tool"], &[])),
    ("provider-payload", Refused("listens for `before_provider_request`")),
    ("qna", Loaded(&["command"], &[])),
    ("question", Loaded(&["tools", "call_tool"], &["question"])),
    ("questionnaire", Loaded(&["tools", "call_tool"], &["questionnaire"])),
    ("rainbow-editor", Loaded(&[], &[])),
    ("reload-runtime", Loaded(&["tools", "call_tool", "command"], &["reload_runtime"])),
    ("rpc-demo", Loaded(&["before_tool", "on_event", "finish", "command"], &[])),
    ("send-user-message", Loaded(&["command"], &[])),
    ("session-name", Loaded(&["command"], &[])),
    ("shutdown-command", Loaded(&["tools", "call_tool", "command"], &["finish_and_exit", "deploy_and_exit"])),
    ("snake", Loaded(&["command"], &[])),
    ("space-invaders", Loaded(&["command"], &[])),
    ("ssh", Loaded(&["tools", "call_tool", "before_model", "finish"], &["read", "write", "edit", "bash"])),
    ("status-line", Loaded(&["on_event", "finish"], &[])),
    ("structured-output", Loaded(&["tools", "call_tool"], &["structured_output"])),
    ("subagent", Loaded(&["tools", "call_tool", "after_tool"], &["subagent"])),
    ("summarize", Loaded(&["command"], &[])),
    ("system-prompt-header", Loaded(&["on_event", "finish"], &[])),
    ("tic-tac-toe", Loaded(&["tools", "call_tool", "before_model", "finish", "command"], &["tic_tac_toe", "tic_tac_toe_see_board"])),
    ("timed-confirm", Loaded(&["command"], &[])),
    ("titlebar-spinner", Loaded(&["on_event", "finish"], &[])),
    ("todo", Loaded(&["tools", "call_tool", "command"], &["todo"])),
    ("tool-override", Loaded(&["tools", "call_tool", "command"], &["read"])),
    ("tools", Loaded(&["command"], &[])),
    ("trigger-compact", Loaded(&["on_event", "finish", "command"], &[])),
    ("truncated-tool", Loaded(&["tools", "call_tool"], &["rg"])),
    ("widget-placement", Loaded(&[], &[])),
    ("with-deps", Loaded(&["tools", "call_tool"], &["parse_duration"])),
    ("working-indicator", Loaded(&["command"], &[])),
    ("working-message-test", Loaded(&[], &[])),
];

/// The examples refused by design: they would rewrite history or the
/// request, and their reason names the event or method.
const BY_DESIGN: usize = 4;

#[test]
fn every_example_gets_exactly_its_verdict() {
    let entries: std::collections::BTreeSet<String> = std::fs::read_dir(examples())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".ts")
                .to_string()
        })
        .filter(|name| name != "README.md")
        .collect();
    let pinned: std::collections::BTreeSet<String> =
        VERDICTS.iter().map(|(name, _)| name.to_string()).collect();
    assert_eq!(entries, pinned, "the table names every example");
    let doc = yohost_check(&examples());
    assert_eq!(doc["plugins"].as_array().unwrap().len(), VERDICTS.len());
    let mut wrong = Vec::new();
    for (name, verdict) in VERDICTS {
        let p = checked(&doc, name);
        assert_eq!(p["ecosystem"], "pi", "{p}");
        let matches = match verdict {
            Loaded(hooks, tools) => {
                p["status"] == "loaded" && p["hooks"] == json!(hooks) && p["tools"] == json!(tools)
            }
            Refused(part) => {
                p["status"] == "refused" && p["reason"].as_str().is_some_and(|r| r.contains(part))
            }
        };
        if !matches {
            wrong.push(format!("{name}: pinned {verdict:?}, got {p}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let loaded = VERDICTS
        .iter()
        .filter(|(_, v)| matches!(v, Loaded(..)))
        .count();
    assert!(loaded >= 60, "{loaded} of {} load", VERDICTS.len());
    let by_design = VERDICTS
        .iter()
        .filter(|(_, v)| matches!(v, Refused(r) if r.starts_with("listens for `") || r.starts_with("calls `pi.")))
        .count();
    assert_eq!(by_design, BY_DESIGN);
}

#[test]
fn examples_get_their_warnings() {
    let doc = yohost_check(&examples());
    let warnings = |name: &str| checked(&doc, name)["warnings"].clone();
    assert_eq!(warnings("permission-gate"), json!([]));
    assert_eq!(warnings("hello"), json!([]));
    assert_eq!(warnings("pirate"), json!([]));
    assert_eq!(
        checked(&doc, "pirate")["commands"],
        json!([{"name": "pirate", "description": "Toggle pirate mode (agent speaks like a pirate)"}])
    );
    let never_called =
        json!("it implements no hooks and offers no tools, so the host will never call it");
    assert_eq!(
        warnings("model-status"),
        json!([
            "listens for `model_select`, which the host never emits: the handler never runs",
            never_called
        ])
    );
    // Only `session_shutdown`: no hooks, but the host calls it when the
    // extension is unloaded.
    let at_exit = warnings("auto-commit-on-exit");
    assert!(
        !at_exit.as_array().unwrap().contains(&never_called),
        "{at_exit}"
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
async fn an_input_handler_that_sends_a_message_lets_the_prompt_run() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "diagram.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("input", async (event) => {
    if (event.text.includes("```mermaid")) {
      pi.sendMessage({ customType: "diagram", content: [{ type: "text", text: "a diagram of A and B" }], display: true });
    }
    if (event.text.includes("again")) pi.sendMessage({ customType: "note", content: "again" }, { triggerTurn: true });
    return { action: "continue" };
  });
}"#,
    );
    let (logs, _guard) = capture_logs();
    let host = open(dir.path()).unwrap();
    for prompt in ["draw ```mermaid\ngraph TD; A-->B\n```", "say it again"] {
        let (agent, requests) = scripted(vec![text("ok")]);
        let mut agent = agent.with_extension(host.extension());
        let events = run(&mut agent, prompt).await;
        assert_eq!(input_rejection(&events), None, "{prompt}");
        assert_eq!(
            requests.lock().unwrap().len(),
            1,
            "{prompt}: the run goes on"
        );
    }
    let messages: Vec<String> = lines_with(&logs, "plugin", "diagram")
        .iter()
        .map(|l| {
            l["fields"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m == "[diagram] a diagram of A and B"),
        "the display-only message is a log line: {messages:?}"
    );
    assert!(
        messages.iter().any(|m| m
            .contains("pi.sendMessage with `triggerTurn` is not supported by yohost")
            && m.contains("the input goes on")),
        "a message meant for the model fails by name, and is reported: {messages:?}"
    );
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
      return {{ content: [{{ type: "text", text: readFileSync(params.path, "utf8") }}] }};
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
    // Generous, so a loaded machine does not fail it; a hook never run
    // still fails.
    let deadline = Instant::now() + Duration::from_secs(30);
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
    pi.sendMessage({ customType: "note", content: "hi", display: true }, { triggerTurn: true });
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
                .contains("pi.sendMessage with `triggerTurn` is not supported by yohost")),
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
  pi.on("agent_start", (_e, ctx) => ctx.ui.notify("run starts", "info"));
  pi.on("agent_end", (e, ctx) => ctx.ui.notify(`run ends with ${e.messages.length > 0 ? "its" : "no"} messages`, "info"));
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
        ("run starts", "info"),
        ("run ends with its messages", "info"),
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
    // Named once: the shape's refusal is not repeated from the source.
    assert_eq!(
        reason.matches("listens for `context`").count(),
        1,
        "{reason}"
    );
    assert!(!reason.contains("; and "), "{reason}");
    let appish = find("appish");
    assert_eq!(appish["status"], "loaded", "{appish}");
    assert_eq!(appish["hooks"], json!(["before_tool"]));
    assert_eq!(
        appish["warnings"],
        json!([
            "registers the shortcut `ctrl+x`, which belongs to an app: the host ignores it",
            "sets a UI widget, which belongs to an app: the host ignores it",
        ])
    );
    assert_eq!(appish["flags"][0]["name"], "plan", "{appish}");
    // pi-tui's components construct and render nothing.
    let tui = find("tui");
    assert_eq!(tui["status"], "loaded", "{tui}");
    assert_eq!(
        tui["warnings"][0],
        "registers a renderer for `x` messages, which belongs to an app: the host ignores it"
    );
}

#[tokio::test]
async fn todo_keeps_its_list_across_calls_through_an_agent() {
    let dir = with_examples(&["todo.ts"]);
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, requests) = scripted(vec![
        call("todo", json!({"action": "add", "text": "buy milk"})),
        call("todo", json!({"action": "add", "text": "call Ada"})),
        call("todo", json!({"action": "toggle", "id": 1})),
        call("todo", json!({"action": "list"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "plan my day").await);
    assert_eq!(
        results,
        [
            ("todo".into(), "Added todo #1: buy milk".into(), false),
            ("todo".into(), "Added todo #2: call Ada".into(), false),
            ("todo".into(), "Todo #1 completed".into(), false),
            (
                "todo".into(),
                "[x] #1: buy milk\n[ ] #2: call Ada".into(),
                false
            ),
        ]
    );
    assert!(format!("{:?}", requests.lock().unwrap()[4]).contains("[ ] #2: call Ada"));
}

#[tokio::test]
async fn structured_output_returns_its_details_through_an_agent() {
    let dir = with_examples(&["structured-output.ts"]);
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let args =
        json!({"headline": "Ship it", "summary": "All green.", "actionItems": ["tag", "announce"]});
    let (agent, requests) = scripted(vec![call("structured_output", args.clone()), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "summarize").await;
    // `terminate: true`: the run ends on the tool's result, and the model's
    // follow-up turn is never requested.
    assert_eq!(requests.lock().unwrap().len(), 1);
    assert_eq!(
        tool_results(&events),
        [(
            "structured_output".into(),
            "Saved structured output: Ship it".into(),
            false
        )]
    );
    let details = events.iter().find_map(|e| match e {
        yoagent::AgentEvent::ToolExecutionEnd { result, .. } => Some(result.details.clone()),
        _ => None,
    });
    assert_eq!(details, Some(args));
}

/// A pi extension that reports what Node's globals and modules give it.
const NODE_PROBE: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import * as os from "node:os";
import { fileURLToPath } from "node:url";
import { CONFIG_DIR_NAME, VERSION, getAgentDir, parseFrontmatter, formatReadLineRange } from "@earendil-works/pi-coding-agent";
import { uuidv7 } from "@earendil-works/pi-ai";
const here = fileURLToPath(import.meta.url);
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "probe",
    description: "what the globals give",
    parameters: { type: "object", properties: {} },
    async execute() {
      let exit = "";
      try { process.exit(3); } catch (e) { exit = e.message; }
      const ticks = await new Promise((resolve) => {
        let n = 0;
        const id = setInterval(() => { n += 1; if (n === 3) { clearInterval(id); resolve(n); } }, 1);
      });
      const url = new URL("../b?x=1#h", "https://example.com/a/c");
      const report = {
        granted: process.env.PROBE_GRANTED ?? null,
        hidden: process.env.PROBE_HIDDEN ?? null,
        cwd: process.cwd(),
        platform: process.platform === os.platform(),
        exit,
        ticks,
        base64: Buffer.from("héllo").toString("base64"),
        utf8: new TextDecoder().decode(new TextEncoder().encode("✓ ok")),
        url: [url.href, url.searchParams.get("x")],
        sha256: createHash("sha256").update("abc").digest("hex"),
        random: randomBytes(8).length,
        uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(randomUUID()),
        uuidv7: /^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(uuidv7()),
        here: here.endsWith("/probe/index.ts"),
        home: os.homedir() === (process.env.HOME ?? os.homedir()),
        agentDir: getAgentDir().endsWith("yohost/pi-agent"),
        constants: [CONFIG_DIR_NAME, VERSION],
        frontmatter: parseFrontmatter("---\nname: scout\ntools: read, grep\n---\nBody"),
        range: formatReadLineRange(10, 5),
      };
      return { content: [{ type: "text", text: JSON.stringify(report) }] };
    },
  });
}"#;

#[tokio::test]
async fn node_globals_and_modules_work_within_the_grants() {
    std::env::set_var("PROBE_GRANTED", "yes");
    std::env::set_var("PROBE_HIDDEN", "secret");
    let dir = plugin_dir();
    write(dir.path(), "probe/index.ts", NODE_PROBE);
    write(
        dir.path(),
        "probe/plugin.toml",
        "[capabilities]\nenv = [\"PROBE_GRANTED\"]\n",
    );
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![call("probe", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "probe").await);
    assert!(!results[0].2, "{results:?}");
    let report: serde_json::Value = serde_json::from_str(&results[0].1).unwrap();
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(
        report,
        json!({
            "granted": "yes",
            "hidden": null,
            "cwd": cwd,
            "platform": true,
            "exit": "process.exit(3) is not available in yohost: a plugin cannot end the host",
            "ticks": 3,
            "base64": "aMOpbGxv",
            "utf8": "✓ ok",
            "url": ["https://example.com/b?x=1#h", "1"],
            "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "random": 8,
            "uuid": true,
            "uuidv7": true,
            "here": true,
            "home": true,
            "agentDir": true,
            "constants": [".pi", yohost_adapter_pi::PI_VERSION],
            "frontmatter": {"frontmatter": {"name": "scout", "tools": "read, grep"}, "body": "Body"},
            "range": ":10-14",
        })
    );
}

#[tokio::test]
async fn yohosts_own_plugins_get_no_node_globals() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "plain.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  tools: [
    {
      name: "globals",
      description: "which Node globals exist",
      parameters: { type: "object", properties: {} },
      execute: () => ["process", "Buffer", "setInterval", "TextEncoder", "URL"].filter((n) => n in globalThis).join(",") || "none",
    },
  ],
});"#,
    );
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![call("globals", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "globals").await);
    assert_eq!(results[0], ("globals".into(), "none".into(), false));
}

#[test]
fn a_by_design_refusal_is_named_even_when_an_import_is_missing() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "compactor.ts",
        r#"import { somethingPiNeverHad } from "@earendil-works/pi-coding-agent";
export default function (pi) {
  pi.on("context", () => somethingPiNeverHad());
}"#,
    );
    write(
        dir.path(),
        "provider/index.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import Anthropic from "@anthropic-ai/sdk";
import { setup } from "./setup.ts";
export default function (pi) { setup(pi, new Anthropic()); }"#,
    );
    write(
        dir.path(),
        "provider/setup.ts",
        r#"export function setup(pi, client) { pi.registerProvider("proxy", { client }); }"#,
    );
    let doc = yohost_check(dir.path());
    let reason = |name: &str| checked(&doc, name)["reason"].as_str().unwrap().to_string();
    // The name pi never had is `undefined`, as in pi: what refuses the
    // extension is its handler of `context`.
    let compactor = reason("compactor");
    assert!(compactor.contains("listens for `context`"), "{compactor}");
    let provider = reason("provider");
    assert!(
        provider.contains("calls `pi.registerProvider`") && provider.contains("@anthropic-ai/sdk"),
        "{provider}"
    );
}

#[test]
fn pi_1_methods_are_mapped_refused_or_named_never_a_type_error() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "virtual.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) { pi.registerVirtualModel({ provider: "p", id: "fast" }); }"#,
    );
    write(
        dir.path(),
        "mcp.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) { pi.registerMcpServer("files", { command: "srv" }); }"#,
    );
    write(
        dir.path(),
        "renderers.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerEntryRenderer("note", () => undefined);
  pi.registerToolRenderer(() => undefined);
  pi.registerMarkdownTransformer((md) => md);
  const settings = pi.getSettings();
  if (typeof settings !== "object" || pi.getMcpServers().length !== 0) throw new Error("unexpected");
  pi.on("tool_call", () => undefined);
}"#,
    );
    let doc = yohost_check(dir.path());
    let virtual_model = checked(&doc, "virtual");
    assert_eq!(virtual_model["status"], "refused");
    assert!(
        virtual_model["reason"].as_str().unwrap().contains(
            "calls `pi.registerVirtualModel(\"fast\")`, which would change the model provider"
        ),
        "{virtual_model}"
    );
    let mcp = checked(&doc, "mcp");
    let reason = mcp["reason"].as_str().unwrap();
    assert!(
        reason.contains("pi.registerMcpServer is not supported by yohost")
            && !reason.contains("TypeError"),
        "{reason}"
    );
    let renderers = checked(&doc, "renderers");
    assert_eq!(renderers["status"], "loaded", "{renderers}");
    assert_eq!(
        renderers["warnings"],
        json!([
            "registers a renderer for `note` entries, which belongs to an app: the host ignores it",
            "registers a tool renderer, which belongs to an app: the host ignores it",
            "registers a Markdown transformer, which belongs to an app: the host ignores it",
        ])
    );
}

#[tokio::test]
async fn prompt_sections_become_a_note_and_get_system_prompt_does_not_fail() {
    let dir = with_examples(&["prompt-customizer.ts", "system-prompt-header.ts"]);
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (logs, _guard) = capture_logs();
    let (agent, requests) = scripted(vec![text("ok")]);
    let mut agent = agent
        .with_tools(vec![Box::new(yoagent::tools::bash::BashTool::new())])
        .with_extension(host.extension());
    run(&mut agent, "hi").await;
    let first = last_user_text(&requests.lock().unwrap()[0]);
    assert!(first.contains("<tool_guidance>"), "{first}");
    let failed = logs
        .lines()
        .into_iter()
        .filter(|l| l["fields"]["error_kind"].is_string())
        .collect::<Vec<_>>();
    assert!(failed.is_empty(), "no hook fails: {failed:?}");
}

#[tokio::test]
async fn create_bash_tool_runs_through_the_exec_service_only_when_granted() {
    let source = std::fs::read_to_string(examples().join("bash-spawn-hook.ts")).unwrap();
    // The example's spawn hook adds `PI_SPAWN_HOOK=1` to the environment.
    for (granted, expect, is_error) in [
        (true, "from bash 1", false),
        (false, "capabilities.exec", true),
    ] {
        let dir = plugin_dir();
        write(dir.path(), "spawn/index.ts", &source);
        write(
            dir.path(),
            "spawn/plugin.toml",
            &format!("[capabilities]\nexec = {granted}\n"),
        );
        let host = open(dir.path()).unwrap();
        assert!(host.refused().is_empty(), "{:?}", host.refused());
        let (agent, _) = scripted(vec![
            call("bash", json!({"command": "echo from bash $PI_SPAWN_HOOK"})),
            text("done"),
        ]);
        let mut agent = agent.with_extension(host.extension());
        let results = tool_results(&run(&mut agent, "run").await);
        assert_eq!(results[0].2, is_error, "{results:?}");
        assert!(results[0].1.contains(expect), "{results:?}");
    }
}

/// A bash tool whose spawn hook shows which variables it was given, sets
/// one, and removes `PATH` (which the manifest does not grant, so it is
/// not the hook's to remove).
const SPAWN_ENV_PLUGIN: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { createBashTool } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool(createBashTool(process.cwd(), {
    spawnHook: ({ command, cwd, env }) => {
      const { PATH, ...rest } = env;
      return { command: `echo seen=${Object.keys(env).join(",")}; ${command}`, cwd, env: { ...rest, ADDED: "by the hook" } };
    },
  }));
}"#;

#[tokio::test]
async fn a_spawn_hooks_env_reaches_the_process_within_the_grants() {
    let dir = plugin_dir();
    write(dir.path(), "spawn/index.ts", SPAWN_ENV_PLUGIN);
    write(
        dir.path(),
        "spawn/plugin.toml",
        "[capabilities]\nexec = true\n",
    );
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![
        call(
            "bash",
            json!({"command": "echo \"added=$ADDED\"; command -v env >/dev/null && echo path-kept"}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "run").await);
    assert!(!results[0].2, "{results:?}");
    // The hook saw no variable the manifest does not grant (only the one
    // naming the plugin's data folder, which every plugin is given); what
    // it set reached the process; a variable it was never shown stays.
    assert_eq!(
        results[0].1.trim(),
        "seen=YOHOST_DATA_DIR\nadded=by the hook\npath-kept",
        "{results:?}"
    );
}

const CHILD_PROCESS_PLUGIN: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { exec, spawn } from "node:child_process";
import { promisify } from "node:util";
const run = promisify(exec);
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "processes",
    description: "runs processes the node way",
    parameters: { type: "object", properties: {} },
    async execute() {
      const { stdout } = await run("echo shell; echo err >&2");
      const spawned = await new Promise((resolve, reject) => {
        const child = spawn("printf", ["%s", "spawned"]);
        let out = "";
        child.stdout.on("data", (chunk) => (out += chunk.toString()));
        child.on("error", reject);
        child.on("close", (code) => resolve(`${out}:${code}`));
      });
      return { content: [{ type: "text", text: JSON.stringify([stdout, spawned]) }] };
    },
  });
}"#;

#[tokio::test]
async fn node_child_process_runs_off_the_thread_only_when_granted() {
    for granted in [true, false] {
        let dir = plugin_dir();
        write(dir.path(), "procs/index.ts", CHILD_PROCESS_PLUGIN);
        write(
            dir.path(),
            "procs/plugin.toml",
            &format!("[capabilities]\nexec = {granted}\n"),
        );
        let host = open(dir.path()).unwrap();
        let (agent, _) = scripted(vec![call("processes", json!({})), text("done")]);
        let mut agent = agent.with_extension(host.extension());
        let results = tool_results(&run(&mut agent, "run").await);
        if granted {
            let seen: serde_json::Value = serde_json::from_str(&results[0].1).unwrap();
            assert_eq!(seen[0], "shell\n");
            assert_eq!(seen[1], "spawned:0");
        } else {
            assert!(results[0].2, "{results:?}");
            assert!(
                results[0].1.contains("`capabilities.exec = true`"),
                "{results:?}"
            );
        }
    }
}

#[tokio::test]
async fn hello_without_its_name_fails_validation_as_in_pi() {
    let dir = with_examples(&["hello.ts"]);
    let host = open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![call("hello", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "greet").await);
    assert!(results[0].2, "{results:?}");
    assert!(
        results[0]
            .1
            .starts_with("Validation failed for tool \"hello\":")
            && results[0].1.contains("\"name\"")
            && !results[0].1.contains("Hello, undefined!"),
        "{results:?}"
    );
}

/// Set in the child process of
/// `auto_commit_on_exit_commits_when_the_program_ends`: the plugin
/// directory to load, from a git repository as the working directory.
const AUTO_COMMIT_CHILD: &str = "YOHOST_TEST_AUTO_COMMIT_PLUGINS";

/// `git` in `repo`, which must succeed; its standard output.
fn git(repo: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(repo)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn auto_commit_on_exit_commits_when_the_program_ends() {
    if let Ok(plugins) = std::env::var(AUTO_COMMIT_CHILD) {
        // The child: load, drop the host (pi's `session_shutdown`), and end
        // the process right after, as `yohost run` does.
        let host = open(Path::new(&plugins)).unwrap();
        assert!(host.refused().is_empty(), "{:?}", host.refused());
        drop(host);
        return;
    }
    let plugins = plugin_dir();
    let name = "auto-commit-on-exit";
    std::fs::create_dir(plugins.path().join(name)).unwrap();
    std::fs::copy(
        examples().join(format!("{name}.ts")),
        plugins.path().join(name).join("index.ts"),
    )
    .unwrap();
    let repo = plugin_dir();
    // Its `git` runs in the kernel's sandbox: the repository must be granted.
    write(
        plugins.path(),
        &format!("{name}/plugin.toml"),
        &format!(
            "[capabilities]\nexec = true\nwrite = [{:?}]\n",
            repo.path().display().to_string()
        ),
    );
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["config", "user.email", "test@example.com"]);
    git(repo.path(), &["config", "user.name", "test"]);
    write(repo.path(), "work.txt", "unsaved work\n");
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            // The test's full name has its module path, which depends on
            // the binary it is built into: its own name is unique.
            "auto_commit_on_exit_commits_when_the_program_ends",
            "--test-threads=1",
        ])
        .current_dir(repo.path())
        .env(AUTO_COMMIT_CHILD, plugins.path())
        .output()
        .expect("the test runs itself");
    assert!(child.status.success(), "{child:?}");
    assert_eq!(
        git(repo.path(), &["log", "--format=%s"]).trim(),
        "[pi] Work in progress"
    );
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), "");
}

/// A tool whose `prepareArguments` maps a legacy argument (`who`) to the
/// one its schema requires (`name`), as pi lets a tool do before the
/// arguments are checked.
const PREPARING_TOOL: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "greet",
    description: "greets someone",
    parameters: Type.Object({ name: Type.String() }, { additionalProperties: false }),
    prepareArguments(args: any) {
      if (args?.crash) throw new Error("cannot prepare these");
      if (args && typeof args.who === "string") return { name: args.who };
      return args;
    },
    async execute(_id: string, params: { name: string }) {
      return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: {} };
    },
  });
}"#;

#[tokio::test]
async fn prepare_arguments_runs_before_the_schema_check_as_in_pi() {
    let dir = plugin_dir();
    write(dir.path(), "greet.ts", PREPARING_TOOL);
    let host = open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![
        call("greet", json!({"who": "Ada"})),
        call("greet", json!({"name": "Bob"})),
        call("greet", json!({"nobody": true})),
        call("greet", json!({"crash": true})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "greet").await);
    // Legacy arguments the tool prepares pass the check.
    assert_eq!(results[0], ("greet".into(), "Hello, Ada!".into(), false));
    assert_eq!(results[1], ("greet".into(), "Hello, Bob!".into(), false));
    // What preparing cannot fix still fails the check, in the host's words,
    // and `execute` does not run.
    assert!(results[2].2, "{results:?}");
    assert!(
        results[2]
            .1
            .starts_with("Validation failed for tool \"greet\":")
            && results[2].1.contains("nobody")
            && !results[2].1.contains("Hello"),
        "{results:?}"
    );
    // A throwing `prepareArguments` is an error result.
    assert!(
        results[3].2 && results[3].1.contains("cannot prepare these"),
        "{results:?}"
    );
}

/// An extension that keeps notes as session entries and reads them back.
const MEMO: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  let restored = -1;
  pi.on("session_start", async (_event, ctx) => {
    restored = ctx.sessionManager.getEntries().length;
  });
  pi.registerTool({
    name: "remember",
    description: "keeps a note",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async execute(_id, params) {
      pi.appendEntry("memo", { text: params.text });
      return { content: [{ type: "text", text: "kept" }] };
    },
  });
  pi.registerTool({
    name: "recall",
    description: "reads the notes",
    parameters: { type: "object", properties: {} },
    async execute(_id, _params, _signal, _onUpdate, ctx) {
      const entries = ctx.sessionManager.getEntries();
      const notes = entries.filter((e) => e.type === "custom" && e.customType === "memo").map((e) => e.data.text);
      const chained = entries.every((e, i) => e.parentId === (i === 0 ? null : entries[i - 1].id));
      const leaf = ctx.sessionManager.getLeafEntry()?.data?.text;
      return { content: [{ type: "text", text: `${notes.join(",")} chained=${chained} leaf=${leaf} restored=${restored}` }] };
    },
  });
}
"#;

#[tokio::test]
async fn append_entry_keeps_entries_in_the_session_across_calls_and_runs() {
    let dir = plugin_dir();
    write(dir.path(), "memo/index.ts", MEMO);
    let host = open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![
        call("remember", json!({"text": "first"})),
        call("remember", json!({"text": "second"})),
        call("recall", json!({})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "keep notes").await);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results.iter().all(|r| !r.2), "{results:?}");
    assert_eq!(
        results[2].1,
        "first,second chained=true leaf=second restored=0"
    );
    let seen = format!("{:?}", requests.lock().unwrap());
    assert!(!seen.contains("\"memo\""), "the model never sees an entry");
    let (agent, _) = scripted(vec![call("recall", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "read notes").await);
    assert!(
        results[0].1.starts_with("first,second"),
        "the session outlives the run: {results:?}"
    );
}

/// An extension whose tool streams partial results through `onUpdate`:
/// two with text, one with only an image.
const STREAMING: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "stream",
    description: "streams partial results",
    parameters: { type: "object", properties: {} },
    async execute(_id, _params, _signal, onUpdate) {
      onUpdate?.({ content: [{ type: "text", text: "half" }, { type: "text", text: "way" }], details: {} });
      onUpdate?.({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], details: {} });
      onUpdate?.({ content: [{ type: "text", text: "all" }], details: {} });
      return { content: [{ type: "text", text: "streamed" }] };
    },
  });
}
"#;

#[tokio::test]
async fn a_tool_s_partial_results_reach_the_run_as_its_progress() {
    let dir = plugin_dir();
    write(dir.path(), "streaming/index.ts", STREAMING);
    let host = open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![call("stream", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "stream").await;
    assert_eq!(tool_results(&events)[0].1, "streamed");
    let progress: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            yoagent::AgentEvent::ProgressMessage { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(progress, ["half\nway", "all"]);
}

/// An extension that formats with `Intl` and listens on `process.stdout`.
const FORMATS: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  const onResize = () => {};
  process.stdout.on("resize", onResize).off("resize", onResize);
  process.stdout.removeListener("resize", onResize);
  pi.registerTool({
    name: "formats",
    description: "formats a number, a list and a time zone",
    parameters: { type: "object", properties: {} },
    async execute() {
      const number = new Intl.NumberFormat("en-US").format(1234567.5);
      const list = new Intl.ListFormat("en").format(["a", "b", "c"]);
      const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      const graphemes = [...new Intl.Segmenter().segment("héé")].length;
      return { content: [{ type: "text", text: `${number} | ${list} | ${zone} | ${graphemes}` }] };
    },
  });
}
"#;

#[tokio::test]
async fn intl_and_stdout_listeners_are_there_on_the_embedded_engine() {
    let dir = plugin_dir();
    write(dir.path(), "formats/index.ts", FORMATS);
    let host = open(dir.path()).unwrap();
    let report = host.report().await;
    let plugin = reported(&report, "formats");
    assert_eq!(plugin.status, yohost::Status::Loaded, "{plugin:?}");
    assert_eq!(plugin.engine.as_deref(), Some("js"), "{plugin:?}");
    let (agent, _) = scripted(vec![call("formats", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "format").await);
    assert_eq!(
        results[0].1, "1,234,567.5 | a, b, and c | UTC | 3",
        "{results:?}"
    );
}

/// An extension that imports a name pi-tui no longer exports.
const OLD_NAME: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { getEditorKeybindings, Text } from "@earendil-works/pi-tui";
export default function (pi: ExtensionAPI) {
  const seen = typeof getEditorKeybindings;
  pi.registerTool({
    name: "keys",
    description: "asks for the editor's key bindings",
    parameters: { type: "object", properties: {} },
    async execute() {
      if (seen !== "undefined" || typeof Text !== "function") throw new Error(`seen ${seen}`);
      return { content: [{ type: "text", text: String(getEditorKeybindings()) }] };
    },
  });
  pi.registerTool({
    name: "fine",
    description: "needs nothing gone",
    parameters: { type: "object", properties: {} },
    async execute() {
      return { content: [{ type: "text", text: `fine: ${seen}` }] };
    },
  });
}
"#;

/// The old-name extension in `host` loads on `engine`, warned of the name
/// it imports, which is `undefined` there and fails the call that uses it.
async fn old_name_is_undefined(host: &PluginHost, engine: &str) {
    let report = host.report().await;
    let plugin = reported(&report, "old-name");
    assert_eq!(plugin.status, yohost::Status::Loaded, "{plugin:?}");
    assert_eq!(plugin.engine.as_deref(), Some(engine), "{plugin:?}");
    assert!(
        plugin.warnings.iter().any(|w| w.contains(
            "imports `getEditorKeybindings` from \"@earendil-works/pi-tui\", which it does not export"
        )),
        "{plugin:?}"
    );
    let (agent, _) = scripted(vec![
        call("fine", json!({})),
        call("keys", json!({})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "keys").await);
    assert_eq!(results[0].1, "fine: undefined", "{results:?}");
    assert!(results[1].2, "calling it fails the call: {results:?}");
}

#[tokio::test]
async fn a_name_pi_no_longer_exports_is_undefined_and_fails_where_it_is_called() {
    let dir = plugin_dir();
    write(dir.path(), "old-name/index.ts", OLD_NAME);
    old_name_is_undefined(&open(dir.path()).unwrap(), "js").await;
}

/// An ES module extension that calls `require`, as jiti lets it.
const REQUIRES: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
const path = require("node:path");
const { greet } = require("./helper.cjs");
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "requires",
    description: "uses what it required",
    parameters: { type: "object", properties: { name: { type: "string" } } },
    async execute(_id, params) {
      if (params.name) require(params.name);
      return { content: [{ type: "text", text: `${path.join("a", "b")} ${greet("pi")}` }] };
    },
  });
}
"#;

#[tokio::test]
async fn require_in_an_es_module_serves_literal_specifiers_on_the_embedded_engine() {
    let dir = plugin_dir();
    write(dir.path(), "requires/index.ts", REQUIRES);
    write(
        dir.path(),
        "requires/helper.cjs",
        "exports.greet = (who) => `hello ${who}`;\n",
    );
    let host = open(dir.path()).unwrap();
    let report = host.report().await;
    let plugin = reported(&report, "requires");
    assert_eq!(plugin.status, yohost::Status::Loaded, "{plugin:?}");
    assert_eq!(plugin.engine.as_deref(), Some("js"), "{plugin:?}");
    let (agent, _) = scripted(vec![
        call("requires", json!({})),
        call("requires", json!({"name": "node:os"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "require").await);
    assert_eq!(results[0].1, "a/b hello pi", "{results:?}");
    assert!(
        results[1].2 && results[1].1.contains("Cannot find module 'node:os'"),
        "{results:?}"
    );
}

/// An extension that runs a process synchronously, as graphviz-style
/// extensions do.
const SYNC_PROCESS: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { execSync } from "node:child_process";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "sync",
    description: "runs echo synchronously",
    parameters: { type: "object", properties: {} },
    async execute() {
      return { content: [{ type: "text", text: execSync("echo synchronous").toString() }] };
    },
  });
}"#;

#[tokio::test]
async fn a_synchronous_process_sends_the_extension_to_node_where_it_runs() {
    let dir = plugin_dir();
    write(dir.path(), "sync/index.ts", SYNC_PROCESS);
    write(
        dir.path(),
        "sync/plugin.toml",
        "[capabilities]\nexec = true\n",
    );
    // Without Node's entry, the extension is refused, naming what it needs.
    let host = open(dir.path()).unwrap();
    let report = host.report().await;
    let plugin = reported(&report, "sync");
    assert_eq!(plugin.status, yohost::Status::Refused, "{plugin:?}");
    assert!(
        plugin
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("imports `execSync` from \"node:child_process\"")),
        "{plugin:?}"
    );
    if let Some(why) = node_missing() {
        eprintln!("skipped the run on Node: {why}");
        return;
    }
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let plugin = reported(&report, "sync");
    assert_eq!(plugin.status, yohost::Status::Loaded, "{plugin:?}");
    assert_eq!(plugin.engine.as_deref(), Some("node"), "{plugin:?}");
    let (agent, _) = scripted(vec![call("sync", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "run").await);
    assert_eq!(results[0].1, "synchronous\n", "{results:?}");
}

/// An extension that needs Node and makes a state folder as it loads.
fn state_writer(state: &Path) -> String {
    format!(
        r#"import type {{ ExtensionAPI }} from "@earendil-works/pi-coding-agent";
import {{ mkdirSync }} from "node:fs";
import {{ createServer }} from "node:net";
export default function (pi: ExtensionAPI) {{
  void createServer;
  mkdirSync({state:?}, {{ recursive: true }});
  pi.on("session_start", async () => {{}});
}}"#,
        state = state.display().to_string()
    )
}

#[tokio::test]
async fn a_write_at_start_up_on_node_is_refused_naming_the_path_and_the_grant() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join(".pi/agent/state");
    write(dir.path(), "stateful/index.ts", &state_writer(&state));
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let plugin = reported(&report, "stateful");
    assert_eq!(plugin.status, yohost::Status::Refused, "{plugin:?}");
    assert_eq!(plugin.engine.as_deref(), Some("node"), "{plugin:?}");
    let reason = plugin.reason.clone().unwrap_or_default();
    assert!(
        reason.contains(&format!("writing {}", home.path().join(".pi").display()))
            || reason.contains(&format!("writing {}", state.display())),
        "the path is named: {reason}"
    );
    assert!(
        reason.contains("`write = [\""),
        "the grant is named: {reason}"
    );
}

#[tokio::test]
async fn a_package_loads_the_extensions_that_stand_alone_and_says_which_it_left_out() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "bundle/package.json",
        r#"{"name": "bundle", "pi": {"extensions": ["./search.ts", "./compact.ts"]}}"#,
    );
    write(
        dir.path(),
        "bundle/search.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "search",
    description: "searches",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "found" }] }; },
  });
}"#,
    );
    write(
        dir.path(),
        "bundle/compact.ts",
        r#"import { compact } from "a-package-not-installed";
export default function (pi) { pi.on("input", () => compact()); }"#,
    );
    write(
        dir.path(),
        "rewriter/package.json",
        r#"{"name": "rewriter", "pi": {"extensions": ["./a.ts", "./b.ts"]}}"#,
    );
    write(
        dir.path(),
        "rewriter/a.ts",
        r#"export default function (pi) { pi.on("context", () => ({ messages: [] })); }"#,
    );
    write(
        dir.path(),
        "rewriter/b.ts",
        r#"export default function (pi) { pi.on("before_provider_request", () => ({})); }"#,
    );
    let host = open(dir.path()).unwrap();
    let report = host.report().await;
    let bundle = reported(&report, "bundle");
    assert_eq!(bundle.status, yohost::Status::Loaded, "{bundle:?}");
    assert_eq!(bundle.tools, ["search"], "{bundle:?}");
    assert!(
        bundle
            .warnings
            .iter()
            .any(|w| w.starts_with("left out compact.ts:") && w.contains("a-package-not-installed")),
        "{bundle:?}"
    );
    let rewriter = reported(&report, "rewriter");
    assert_eq!(rewriter.status, yohost::Status::Refused, "{rewriter:?}");
    assert!(
        rewriter
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("listens for `context`")),
        "{rewriter:?}"
    );
    let (agent, _) = scripted(vec![call("search", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "search").await);
    assert_eq!(results[0].1, "found", "{results:?}");
}

/// A search tool whose `context` handler drops its own messages, and a web
/// search beside a provider: each loads without what would rewrite the
/// request, said in a warning, and its tool works; required, it is refused
/// whole.
#[tokio::test]
async fn an_extension_loads_without_a_refused_handler_when_the_rest_stands_alone() {
    const SEARCH: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("context", (event) => ({ messages: event.messages.filter((m) => m.customType !== "search") }));
  pi.registerProvider("proxy", { baseUrl: "http://127.0.0.1:9", models: [] });
  pi.registerTool({
    name: "search",
    description: "searches",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "found" }] }; },
  });
}"#;
    let dir = plugin_dir();
    write(dir.path(), "search.ts", SEARCH);
    write(
        dir.path(),
        "rewriter.ts",
        r#"export default function (pi) { pi.on("context", () => ({ messages: [] })); }"#,
    );
    let host = open(dir.path()).unwrap();
    let report = host.report().await;
    let search = reported(&report, "search");
    assert_eq!(search.status, yohost::Status::Loaded, "{search:?}");
    assert_eq!(search.tools, ["search"]);
    assert_eq!(
        search.warnings,
        [
            "left out its `context` handler: it rewrites the messages sent to the model, which the host never lets a plugin do",
            "left out its call `pi.registerProvider(\"proxy\")`, which would change the model provider",
        ]
    );
    let required = plugin_dir();
    write(required.path(), "strict/index.ts", SEARCH);
    write(
        required.path(),
        "strict/plugin.toml",
        "mode = \"required\"\n",
    );
    let refused = open(required.path()).unwrap().refused();
    let reason = refused[0].reason.to_string();
    assert!(
        reason.contains("listens for `context`") && reason.contains("pi.registerProvider"),
        "{reason}"
    );
    let rewriter = reported(&report, "rewriter");
    assert_eq!(rewriter.status, yohost::Status::Refused, "{rewriter:?}");
    let (agent, requests) = scripted(vec![call("search", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "search").await);
    assert_eq!(results[0].1, "found", "{results:?}");
    assert_eq!(requests.lock().unwrap().len(), 2, "both requests went out");
}

#[tokio::test]
async fn a_name_pi_no_longer_exports_is_undefined_on_node_too() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    // `node:net` sends it to Node.
    let source = OLD_NAME.replace(
        "export default function",
        "import { createServer } from \"node:net\";\nvoid createServer;\nexport default function",
    );
    write(dir.path(), "old-name/index.ts", &source);
    old_name_is_undefined(&open_with_node(dir.path()), "node").await;
}
