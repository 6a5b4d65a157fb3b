//! DSH tool plugins through a real `yoagent::Agent`:
//! - a DSH tool called by the model returns its rendered content, with
//!   `Config` defaults overridden by plugin.toml's `[config]` and the run as
//!   `exec.agent`; arguments that do not fit the schema are error results
//!   from the host's check (`Validation failed for tool ...`), and a
//!   throwing `execute` and a value that does not fit `output.schema` are
//!   error results (`Error: ...`);
//! - a `tools/pre-execute` deny denies a call, an `ask` denies it (no one to
//!   ask), a guard denies it, and `tools/post-execute` edits a result;
//! - prompt sections reach the model as one note, in `order`;
//! - a plugin whose `inject` needs services no engine of the adapter
//!   provides is refused, naming them; an optional `ctx.inject` is skipped with a
//!   warning, and so is a listener for an event the host never emits;
//! - `exec.signal` aborts when the run is cancelled; `ctx.effect`
//!   disposers run when the plugin is unloaded;
//! - the published `@deepseek-ai/dsh-tool-todo` (installed by `.ci/run`)
//!   loads as its npm package folder and `todo_write` works; kept off Node
//!   (`engine = "embedded"`), `dsh-tool-bash`, `-fs` and `-web` are refused
//!   naming the services they need before any import (`dsh_node.rs` runs
//!   them on Node).

use crate::packages;
use crate::support;

use packages::{copy_tree, dsh_package};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;
use tokio_util::sync::CancellationToken;
use yohost::contract::{CallToolArgs, HookCall, HookReply, RunInfo};
use yohost::{CallLimits, PluginHost, Status};

/// A host over `dir` with the DSH adapter registered.
fn host(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_dsh::adapter())
        .open()
        .expect("the directory opens")
}

/// Put fixture `file` in `dir/<name>/index.js`, with `manifest`.
fn install(dir: &Path, name: &str, file: &str, manifest: &str) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let source = std::fs::read_to_string(fixtures.join(file)).unwrap();
    write(dir, &format!("{name}/index.js"), &source);
    write(dir, &format!("{name}/plugin.toml"), manifest);
}

fn policy_host(dir: &Path) -> PluginHost {
    install(dir, "policy", "policy.js", "[config]\ngreeting = \"hi\"\n");
    host(dir)
}

#[tokio::test]
async fn a_dsh_tool_called_by_the_model_returns_its_rendered_content() {
    let dir = plugin_dir();
    let host = policy_host(dir.path());
    let report = host.report().await;
    let policy = reported(&report, "fixture-policy");
    assert_eq!(policy.status, Status::Loaded, "{report:?}");
    assert_eq!(policy.ecosystem.as_deref(), Some("dsh"));
    assert_eq!(policy.tools, ["greet"]);

    let (agent, _) = scripted(vec![
        call("greet", json!({"who": "Ada", "times": 2})),
        call("greet", json!({"who": "Ada", "times": "twice"})),
        call("greet", json!({"who": "nobody"})),
        call("greet", json!({"who": "bad-value"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "greet").await;
    let results = tool_results(&events);
    let (_, rendered, is_error) = &results[0];
    assert!(!is_error, "{rendered}");
    assert!(
        rendered.starts_with("hi, Ada! run ") && rendered.ends_with(" (x2)"),
        "the rendered value, with the [config] greeting and the run as exec.agent: {rendered}"
    );
    // The host checks the arguments against the tool's schema before the
    // tool runs, for every engine.
    assert!(
        results[1].2
            && results[1]
                .1
                .starts_with("Validation failed for tool \"greet\":\n  - times: "),
        "{results:?}"
    );
    assert_eq!(
        results[2],
        (
            "greet".to_string(),
            "Error: there is nobody to greet".to_string(),
            true
        )
    );
    assert!(
        results[3].2
            && results[3]
                .1
                .contains("returned an invalid value: value.line must be string"),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_dsh_pre_execute_deny_denies_a_call() {
    let dir = plugin_dir();
    let host = policy_host(dir.path());
    let (agent, _) = scripted(vec![
        call("echo", json!({"text": "rm -rf /"})),
        call("echo", json!({"text": "please-ask first"})),
        call("echo", json!({"text": "guarded"})),
        call("echo", json!({"text": "fine"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(
        results[0].2 && results[0].1.contains("fixture-policy forbids rm -rf"),
        "{results:?}"
    );
    assert!(
        results[1].2
            && results[1]
                .1
                .contains("needs the user's approval, and the host has no one to ask"),
        "an ask denies: {results:?}"
    );
    assert!(
        results[2].2 && results[2].1.contains("guarded by fixture-policy"),
        "{results:?}"
    );
    assert_eq!(
        results[3],
        (
            "echo".to_string(),
            "fine | (seen by fixture-policy)".to_string(),
            false
        ),
        "tools/post-execute added to the result"
    );
}

#[tokio::test]
async fn dsh_prompt_sections_appear_as_one_note_in_order() {
    let dir = plugin_dir();
    let host = policy_host(dir.path());
    let (agent, requests) = scripted(vec![text("ok")]);
    let mut agent = agent.with_extension(host.extension());
    run(&mut agent, "hello").await;
    let first = format!("{:?}", requests.lock().unwrap()[0]);
    assert!(
        first.contains("Greet with \\\"hi\\\".\\n\\nSecond section."),
        "{first}"
    );
}

#[tokio::test]
async fn missing_services_refuse_and_optional_ones_are_skipped_with_a_warning() {
    let dir = plugin_dir();
    install(
        dir.path(),
        "needs-model",
        "needs_model.js",
        "ecosystem = \"dsh\"\n",
    );
    let host = policy_host(dir.path());
    let report = host.report().await;
    let refused = reported(&report, "needs-model");
    assert_eq!(refused.status, Status::Refused);
    let reason = refused.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("needs `llm`, `sessions`, which the host does not provide"),
        "{reason}"
    );
    let policy = reported(&report, "fixture-policy");
    assert!(
        policy.warnings.iter().any(|w| w
            .contains("skipped a `ctx.inject` callback: the host does not provide `attachments`")),
        "{:?}",
        policy.warnings
    );
    assert!(
        policy
            .warnings
            .iter()
            .any(|w| w.contains("`session/start`, which the host never emits")),
        "{:?}",
        policy.warnings
    );
}

#[tokio::test]
async fn a_config_that_does_not_fit_the_schema_refuses_the_plugin() {
    let dir = plugin_dir();
    install(
        dir.path(),
        "policy",
        "policy.js",
        "[config]\ngreeting = 3\n",
    );
    let report = host(dir.path()).report().await;
    assert_eq!(report[0].status, Status::Refused);
    let reason = report[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("does not fit its `Config` schema: TypeError: expected string at greeting")
            || reason.contains("does not fit its `Config` schema: expected string at greeting"),
        "{reason}"
    );
}

/// Poll the captured plugin log lines for `message` for up to 30 seconds
/// (generous, so a loaded machine does not fail it; it returns as soon as
/// the line is there).
async fn logged_soon(logs: &Captured, message: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if logs
            .plugin_lines()
            .iter()
            .any(|l| l["fields"]["message"] == message)
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn exec_signal_aborts_on_cancel_and_effects_run_on_unload() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let host = policy_host(dir.path());
    let plugin = host.plugins()[0].clone();
    let run = RunInfo {
        run_id: "cancelled".into(),
        ..RunInfo::default()
    };
    let opened = plugin.plugin.open_run(&run).await.unwrap();
    let cancel = CancellationToken::new();
    let limits = CallLimits {
        deadline: Instant::now() + Duration::from_secs(30),
        cancel: cancel.clone(),
        ui: None,
        progress: None,
    };
    let call = HookCall::CallTool(CallToolArgs {
        run: run.clone(),
        tool: "greet".into(),
        call_id: "c1".into(),
        args: json!({"who": "slow"}),
    });
    let pending = tokio::spawn(async move { opened.call(call, limits).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    cancel.cancel();
    let outcome = pending.await.unwrap();
    assert!(outcome.is_err(), "a cancelled call fails: {outcome:?}");
    assert!(
        logged_soon(&logs, "greet aborted: AbortError").await,
        "exec.signal aborted"
    );
    drop(plugin);
    drop(host);
    assert!(
        logged_soon(&logs, "fixture-policy disposed").await,
        "the effect's disposer ran on unload"
    );
}

#[tokio::test]
async fn the_published_todo_tool_works() {
    let Some(package) = dsh_package("todo") else {
        return;
    };
    let dir = plugin_dir();
    copy_tree(&package, &dir.path().join("dsh-tool-todo"));
    write(
        dir.path(),
        "dsh-tool-todo/plugin.toml",
        "[config]\nallowParallelInProgress = false\n",
    );
    let host = host(dir.path());
    let report = host.report().await;
    assert_eq!(report[0].status, Status::Loaded, "{report:?}");
    assert_eq!(report[0].name, "tool-todo");
    assert_eq!(report[0].tools, ["todo_write"]);
    let HookReply::Tools(specs) = ask_tools(&host).await else {
        panic!("tools replies with tools");
    };
    assert!(specs[0]
        .description
        .contains("AT MOST ONE todo `in_progress`"));

    let todos = json!({"todos": [
        {"content": "write the adapter", "status": "completed"},
        {"content": "test it", "status": "in_progress"},
        {"content": "ship it", "status": "pending"},
    ]});
    let (agent, _) = scripted(vec![
        call("todo_write", todos),
        call(
            "todo_write",
            json!({"todos": [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]}),
        ),
        call(
            "todo_write",
            json!({"todos": [{"content": "a", "status": "maybe"}]}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "plan").await);
    assert_eq!(
        results[0],
        (
            "todo_write".to_string(),
            "Updated todo list: 1 pending, 1 in progress, 1 completed.".to_string(),
            false
        )
    );
    assert_eq!(
        results[1].1,
        "Error: invalid todos: at most one task may be in_progress (got 2)"
    );
    assert!(results[1].2);
    assert!(
        results[2].2
            && results[2]
                .1
                .starts_with("Validation failed for tool \"todo_write\":\n  - todos.0.status: "),
        "{results:?}"
    );
}

/// What the host's only plugin answers to `tools`.
async fn ask_tools(host: &PluginHost) -> HookReply {
    let plugin = &host.plugins()[0];
    let run = RunInfo::default();
    let opened = plugin.plugin.open_run(&run).await.unwrap();
    let limits = CallLimits {
        deadline: Instant::now() + Duration::from_secs(5),
        cancel: CancellationToken::new(),
        ui: None,
        progress: None,
    };
    let call = HookCall::Tools(run);
    let reply: serde_json::Value = opened.call(call.clone(), limits).await.unwrap();
    call.parse_reply(reply).unwrap()
}

#[tokio::test]
async fn off_node_bash_fs_and_web_are_refused_naming_the_services_first() {
    let dir = plugin_dir();
    let mut expected = Vec::new();
    for (tool, named) in [
        (
            "bash",
            "injects `shell`, a service its adapter provides only on Node",
        ),
        (
            "fs",
            "injects `fs`, a service its adapter provides only on Node",
        ),
        (
            "web",
            "the DSH plugin needs `web`, which the host does not provide",
        ),
    ] {
        let Some(package) = dsh_package(tool) else {
            return;
        };
        let folder = dir.path().join(format!("dsh-tool-{tool}"));
        copy_tree(&package, &folder);
        std::fs::write(folder.join("plugin.toml"), "engine = \"embedded\"\n").unwrap();
        expected.push((format!("dsh-tool-{tool}"), named));
    }
    let report = host(dir.path()).report().await;
    for (name, named) in expected {
        let entry = reported(&report, &name);
        assert_eq!(entry.status, Status::Refused, "{entry:?}");
        let reason = entry.reason.clone().unwrap_or_default();
        assert!(reason.contains(named), "{name}: {reason}");
        assert!(
            !reason.contains("is a Node built-in module"),
            "the service is named, not an import: {name}: {reason}"
        );
    }
}

#[tokio::test]
async fn a_service_only_node_provides_but_not_declared_as_a_list_says_how_to_get_it() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "computed/index.js",
        "const wanted = [\"shell\"];\nexport const inject = [\"tools\", ...wanted];\nexport function apply() {}\n",
    );
    write(dir.path(), "computed/plugin.toml", "ecosystem = \"dsh\"\n");
    let report = host(dir.path()).report().await;
    let reason = report[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("needs `shell`, which the adapter provides only on Node")
            && reason.contains("`engine = \"node\"` in its plugin.toml"),
        "{reason}"
    );
}
