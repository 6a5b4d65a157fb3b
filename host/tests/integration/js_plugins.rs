//! TypeScript plugins on the embedded engine, through a real `yoagent::Agent`:
//! - every hook kind works from TypeScript: tools (offered and called),
//!   `on_input`, `before_model`, `before_tool` (allow, deny, rewrite),
//!   `after_tool`, `on_stop`, `on_event` and `finish`;
//! - an async `before_tool` that awaits a host-backed `setTimeout` decides
//!   the call;
//! - hostile scripts fail closed, naming the plugin in fixed words (the
//!   detail and its `error_kind` go to the log), and the next run works:
//!   a spinning loop and a promise that never settles (timed out, and the
//!   spin interrupted), a 1 GiB array (out of memory), deep recursion, a
//!   thrown error, a reply of the wrong shape or no JSON at all;
//! - `import fs from "node:fs"` (held to the embedded engine) and a syntax
//!   error refuse the plugin with a reason naming the import, or the file
//!   and line; the others still load;
//! - log lines (`ctx.log` and `console.log`) carry the run id of their run,
//!   also after `await`, with two runs in flight through the same plugin;
//! - files are readable only inside the directories `plugin.toml` grants;
//! - a reply over 16 MiB denies the call; a log line is cut at 8 KiB;
//! - the environment is only what `plugin.toml` grants; there is no
//!   `process` or `require`;
//! - the examples (policy, tool, redactor) work as documented;
//! - sources nested 10,000 and 100,000 deep (brackets, template literals,
//!   arrow functions, objects, unary operators; TypeScript and JavaScript)
//!   are refused with a reason instead of overflowing a stack, and a plugin
//!   beside them keeps working.

use crate::support;

use serde_json::json;
use std::path::{Path, PathBuf};
use support::*;
use yohost::{PluginHost, Status};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Put fixture `file` (tests/plugins/js) in `dir/<name>/index.ts` with a
/// manifest.
fn install(dir: &Path, name: &str, file: &str, manifest: &str) {
    let source = std::fs::read_to_string(root().join("tests/plugins/js").join(file)).unwrap();
    write(dir, &format!("{name}/index.ts"), &source);
    write(dir, &format!("{name}/plugin.toml"), manifest);
}

/// Copy the example folder `examples/<name>` into `dir`.
fn install_example(dir: &Path, name: &str) {
    let from = root().join("examples").join(name);
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        write(
            dir,
            &format!("{name}/{}", path.file_name().unwrap().to_str().unwrap()),
            &text,
        );
    }
}

async fn echo_through(host: &PluginHost, text_arg: &str) -> Vec<(String, String, bool)> {
    let (agent, _) = scripted(vec![call("echo", json!({"text": text_arg})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
}

#[tokio::test]
async fn every_hook_kind_works_from_typescript() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(dir.path(), "every", "every_hook.ts", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert_eq!(report[0].status, Status::Loaded, "{report:?}");
    assert_eq!(
        report[0].name, "every-hook",
        "the plugin's own name is used"
    );
    assert_eq!(report[0].tools, ["shout"]);

    let (agent, requests) = scripted(vec![
        call("shout", json!({"text": "hello"})),
        call("echo", json!({"text": "rewrite-me"})),
        call("echo", json!({"text": "deny-me"})),
        text("a lazy answer"),
        text("a good answer"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "do things").await;
    let results = tool_results(&events);
    assert_eq!(
        results[0],
        ("shout".into(), "HELLO!".into(), false),
        "call_tool"
    );
    assert_eq!(
        results[1],
        ("echo".into(), "rewritten | (filtered)".into(), false),
        "before_tool rewrote and after_tool filtered"
    );
    assert!(
        results[2].2 && results[2].1.contains("every-hook: denied"),
        "{results:?}"
    );
    let requests = requests.lock().unwrap().clone();
    assert!(
        format!("{:?}", requests[0]).contains("every-hook sees"),
        "before_model's note"
    );
    assert_eq!(requests.len(), 5, "on_stop continued once");
    assert!(last_user_text(&requests[4]).contains("every-hook: try harder"));

    let messages: Vec<String> = logs
        .plugin_lines()
        .iter()
        .map(|l| l["fields"]["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(messages.contains(&"shouting".to_string()), "{messages:?}");
    assert!(
        messages.contains(&"event toolExecutionEnd".to_string()),
        "on_event: {messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("finished: completed after ") && !m.ends_with(" 0 events")),
        "finish, after the events: {messages:?}"
    );

    let (agent, requests) = scripted(vec![text("never sent")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "a forbidden prompt").await;
    assert_eq!(
        input_rejection(&events).as_deref(),
        Some("every-hook: forbidden word")
    );
    assert!(requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_async_before_tool_awaiting_a_timer_decides_the_call() {
    let dir = plugin_dir();
    install(dir.path(), "slow", "slow_policy.ts", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let started = std::time::Instant::now();
    let results = echo_through(&host, "slow-deny").await;
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(30),
        "the timer was awaited"
    );
    assert!(
        results[0].2 && results[0].1.contains("slow-policy: denied after thinking"),
        "{results:?}"
    );
    assert_eq!(
        echo_through(&host, "fine").await[0],
        ("echo".into(), "fine".into(), false)
    );
}

#[tokio::test]
async fn a_typescript_enum_and_const_enum_run_as_typescript_has_them() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "colors.ts",
        r#"import { definePlugin } from "yohost";
enum Verdict { Allow, Deny = "deny" }
const enum Limit { Long = 3 }
export default definePlugin({
  before_tool({ args }) {
    const text = String((args as { text?: string }).text ?? "");
    if (text.length > Limit.Long) return { deny: `${Verdict.Deny}: ${Verdict[Verdict.Allow]} is for ${Limit.Long} letters` };
    return null;
  },
});
"#,
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert!(report[0].reason.is_none(), "{report:?}");
    let results = echo_through(&host, "longer").await;
    assert_eq!(
        results[0],
        (
            "echo".into(),
            "Tool call denied: deny: Allow is for 3 letters".into(),
            true
        )
    );
    assert_eq!(
        echo_through(&host, "ok").await[0],
        ("echo".into(), "ok".into(), false)
    );
}

/// A tool that throws, in a required plugin: the call's result is the
/// thrown message, which the model reads in its next request, and the run
/// goes on to its answer (a failing tool is not a failing plugin).
#[tokio::test]
async fn a_required_plugin_s_tool_that_throws_is_an_error_result_the_model_reads() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "lookup/index.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  tools: [{
    name: "lookup",
    description: "looks a word up",
    parameters: { type: "object", properties: { word: { type: "string" } } },
    run({ word }) { throw new Error(`no entry for ${word}: try a shorter word`); },
  }],
});
"#,
    );
    write(dir.path(), "lookup/plugin.toml", "mode = \"required\"\n");
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![
        call("lookup", json!({"word": "zyzzyva"})),
        text("sorry"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "define zyzzyva").await;
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));
    let results = tool_results(&events);
    assert!(results[0].2, "{results:?}");
    assert!(
        results[0]
            .1
            .contains("plugin 'lookup' returned an error in call_tool")
            && results[0]
                .1
                .contains("no entry for zyzzyva: try a shorter word"),
        "{results:?}"
    );
    let second = format!("{:?}", requests.lock().unwrap()[1]);
    assert!(second.contains("no entry for zyzzyva"), "{second}");
}

/// The hostile fixture, with a `before_tool` timeout of `timeout_ms`.
fn hostile_host(timeout_ms: u64) -> (tempfile::TempDir, PluginHost) {
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "hostile.ts",
        &format!("[timeouts]\nbefore_tool = {timeout_ms}"),
    );
    let host = PluginHost::open(dir.path()).unwrap();
    (dir, host)
}

/// `behaviour` denies the call with fixed words naming the plugin, the log
/// has the failure's `error_kind` and `detail` (which the model never
/// reads), and the next run is served normally.
async fn fails_closed(behaviour: &str, error_kind: &str, detail: &str) {
    let (logs, _guard) = capture_logs();
    // A short timeout where the timeout is the point; elsewhere room for a
    // loaded machine (filling memory up to the limit takes a while).
    let timeout_ms = if error_kind == "timeout" { 300 } else { 10_000 };
    let (_dir, host) = hostile_host(timeout_ms);
    let results = echo_through(&host, behaviour).await;
    assert_eq!(results.len(), 1);
    let (_, message, is_error) = &results[0];
    assert!(is_error, "{behaviour}: the call is denied");
    assert!(
        message.contains("plugin 'hostile'"),
        "{behaviour}: {message}"
    );
    assert!(!message.contains(detail), "{behaviour}: {message}");
    let failure = lines_with(&logs, "error_kind", error_kind);
    assert!(
        failure.iter().any(|l| l["fields"]["plugin"] == "hostile"
            && l["fields"]["message"].as_str().unwrap().contains(detail)),
        "{behaviour}: {error_kind} with {detail} in {:?}",
        logs.lines()
    );
    let started = std::time::Instant::now();
    let results = echo_through(&host, "fine").await;
    assert_eq!(
        results[0],
        ("echo".into(), "fine".into(), false),
        "after {behaviour}"
    );
    // A held engine would time the call out (its deadline is 300 ms): the
    // reply above proves the engine is free; the bound only catches a hang,
    // generously, so a loaded machine does not fail it.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the engine is free again"
    );
}

#[tokio::test]
async fn a_spinning_script_is_interrupted_and_the_call_denied() {
    fails_closed("spin", "timeout", "300ms").await;
}

#[tokio::test]
async fn a_promise_that_never_settles_is_a_timeout() {
    fails_closed("never", "timeout", "300ms").await;
}

#[tokio::test]
async fn a_one_gib_array_runs_out_of_memory() {
    fails_closed("huge", "out_of_memory", "bytes").await;
    fails_closed("bytes", "out_of_memory", "bytes").await;
}

#[tokio::test]
async fn deep_recursion_is_a_failure_not_a_crash() {
    fails_closed("recurse", "guest", "call stack").await;
}

#[tokio::test]
async fn a_thrown_error_denies_the_call() {
    fails_closed("throw", "guest", "hostile plugin threw on purpose").await;
}

#[tokio::test]
async fn a_flood_of_output_is_refused_and_a_flood_of_log_is_cut() {
    fails_closed("flood", "reply_too_large", "over the limit of").await;
    let (logs, _guard) = capture_logs();
    let (_dir, host) = hostile_host(10_000);
    let results = echo_through(&host, "chatty").await;
    assert_eq!(results[0], ("echo".into(), "chatty".into(), false));
    let lines = logs.plugin_lines();
    let message = lines[0]["fields"]["message"].as_str().unwrap();
    assert_eq!(
        message.len(),
        yohost::adapter::limits::MAX_LOG_BYTES,
        "the line is cut at 8 KiB"
    );
}

#[tokio::test]
async fn a_reply_of_the_wrong_shape_denies_the_call() {
    fails_closed("shape", "bad_reply", "unknown field `allow`").await;
    fails_closed("function", "bad_reply", "cannot be turned into JSON").await;
}

#[tokio::test]
async fn importing_node_fs_is_refused_naming_the_import() {
    let dir = plugin_dir();
    install(
        dir.path(),
        "thief",
        "imports_fs.ts",
        "engine = \"embedded\"\n",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert_eq!(report[0].status, Status::Refused);
    let reason = report[0].reason.as_deref().unwrap();
    assert!(
        reason.contains("\"node:fs\"") && reason.contains("the embedded engine does not provide"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_syntax_error_is_refused_naming_file_and_line_and_others_load() {
    let dir = plugin_dir();
    let source = std::fs::read_to_string(root().join("tests/plugins/js/syntax_error.ts")).unwrap();
    write(dir.path(), "broken.ts", &source);
    install(dir.path(), "slow", "slow_policy.ts", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let broken = report.iter().find(|r| r.name == "broken").unwrap();
    assert_eq!(broken.status, Status::Refused);
    let reason = broken.reason.as_deref().unwrap();
    assert!(
        reason.contains("broken.ts:3:"),
        "names the file and line: {reason}"
    );
    let slow = report.iter().find(|r| r.name == "slow").unwrap();
    assert_eq!(slow.status, Status::Loaded);
}

#[test]
fn log_lines_carry_the_run_id_of_each_of_two_concurrent_runs() {
    let (logs, _guard) = capture_logs();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = plugin_dir();
    install(dir.path(), "slow", "slow_policy.ts", "");
    let host = PluginHost::open(dir.path()).unwrap();
    runtime.block_on(async {
        let agent = |text_arg: &str, ms: u64| {
            let (agent, _) = scripted(vec![
                call("echo", json!({"text": text_arg, "ms": ms})),
                text("done"),
            ]);
            agent.with_extension(host.extension())
        };
        let (mut a, mut b) = (agent("run-a", 120), agent("run-b", 10));
        let b_later = async {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            run(&mut b, "b").await
        };
        let (ea, eb) = tokio::join!(run(&mut a, "a"), b_later);
        assert_eq!(tool_results(&ea)[0].1, "run-a");
        assert_eq!(tool_results(&eb)[0].1, "run-b");
    });
    let lines = logs.plugin_lines();
    let run_of = |message: &str| -> String {
        let line = lines
            .iter()
            .find(|l| l["fields"]["message"] == message)
            .unwrap_or_else(|| panic!("{message:?} in {lines:#?}"));
        assert_eq!(line["fields"]["plugin"], "slow");
        line["fields"]["run_id"].as_str().unwrap().to_string()
    };
    let a = run_of("before await: run-a");
    let b = run_of("before await: run-b");
    assert!(!a.is_empty() && !b.is_empty());
    assert_ne!(a, b);
    assert_eq!(
        run_of("after await: run-a"),
        a,
        "after await, with run b in flight"
    );
    assert_eq!(run_of("after await: run-b"), b);
    assert_eq!(run_of("console before await: run-a"), a, "console.log");
    assert_eq!(run_of("console before await: run-b"), b);
}

#[tokio::test]
async fn the_environment_is_only_what_the_manifest_grants() {
    std::env::set_var("YOHOST_JS_TEST_GRANTED", "visible");
    std::env::set_var("YOHOST_JS_TEST_SECRET", "hidden");
    let dir = plugin_dir();
    install(
        dir.path(),
        "env",
        "env_reader.ts",
        "[capabilities]\nenv = [\"YOHOST_JS_TEST_GRANTED\"]",
    );
    let data = tempfile::tempdir().unwrap();
    let host = PluginHost::builder(dir.path())
        .data_dir(data.path())
        .open()
        .unwrap();
    let message = echo_through(&host, "x").await[0].1.clone();
    // The granted variable, and the one naming the plugin's data folder.
    let env = message
        .split_once("env: ")
        .and_then(|(_, rest)| rest.split_once("; process"))
        .map(|(env, _)| serde_json::from_str::<serde_json::Value>(env).unwrap())
        .unwrap_or_else(|| panic!("{message}"));
    let data_dir = env["YOHOST_DATA_DIR"].as_str().unwrap_or_default();
    assert!(
        std::path::Path::new(data_dir).starts_with(data.path().canonicalize().unwrap()),
        "{message}"
    );
    assert_eq!(
        env,
        json!({"YOHOST_JS_TEST_GRANTED": "visible", "YOHOST_DATA_DIR": data_dir}),
        "{message}"
    );
    assert!(!message.contains("hidden"), "{message}");
    assert!(
        message.contains("process: undefined; require: undefined"),
        "{message}"
    );
}

#[tokio::test]
async fn files_are_readable_only_inside_the_granted_directories() {
    let dir = plugin_dir();
    install(
        dir.path(),
        "reader",
        "file_reader.ts",
        "[capabilities]\nread = [\"data\"]",
    );
    let granted = write(dir.path(), "reader/data/note.txt", "granted contents");
    let secret = write(dir.path(), "secret.txt", "secret contents");
    let host = PluginHost::open(dir.path()).unwrap();
    assert!(
        host.plugins()[0].warnings.is_empty(),
        "{:?}",
        host.plugins()[0].warnings
    );
    let message = echo_through(&host, granted.to_str().unwrap()).await[0]
        .1
        .clone();
    assert!(message.contains("read: granted contents"), "{message}");
    let message = echo_through(&host, secret.to_str().unwrap()).await[0]
        .1
        .clone();
    assert!(
        message.contains("error: EACCES") && message.contains("not granted"),
        "{message}"
    );
    assert!(!message.contains("secret contents"), "{message}");

    // Without a grant, only what the plugin's own folder ships is readable.
    let dir = plugin_dir();
    install(dir.path(), "reader", "file_reader.ts", "");
    let note = write(dir.path(), "reader/note.txt", "own file");
    let beside = write(dir.path(), "beside/note.txt", "a neighbour's file");
    let host = PluginHost::open(dir.path()).unwrap();
    let message = echo_through(&host, note.to_str().unwrap()).await[0]
        .1
        .clone();
    assert!(message.contains("read: own file"), "{message}");
    let message = echo_through(&host, beside.to_str().unwrap()).await[0]
        .1
        .clone();
    assert!(message.contains("error: EACCES"), "{message}");
}

#[tokio::test]
async fn the_typescript_examples_work() {
    let dir = plugin_dir();
    for name in ["ts-policy", "ts-tool", "ts-redactor"] {
        install_example(dir.path(), name);
    }
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert!(
        report.iter().all(|r| r.status == Status::Loaded),
        "{report:?}"
    );

    let (agent, _) = scripted(vec![
        call("bash", json!({"command": "rm -rf /"})),
        call("text_stats", json!({"text": "one two\nthree"})),
        call(
            "echo",
            json!({"text": "key sk-abcdefghijkl and password: hunter2"}),
        ),
        text("done"),
    ]);
    let mut agent = agent
        .with_tools(vec![
            Box::new(Echo),
            Box::new(yoagent::tools::bash::BashTool::new()),
        ])
        .with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(
        results[0].2 && results[0].1.contains("ts-policy: `rm -rf` is not allowed"),
        "{results:?}"
    );
    assert_eq!(
        results[1],
        (
            "text_stats".into(),
            "3 words, 2 lines, 13 characters".into(),
            false
        )
    );
    assert_eq!(results[2].1, "key [REDACTED] and [REDACTED]");
}

/// Plugin files nested `depth` deep in the ways oxc's parser and QuickJS's
/// recurse, and whether each must be refused (QuickJS parses a chain of
/// 10,000 unary operators within its stack, so that one may load).
fn deeply_nested(depth: usize) -> Vec<(&'static str, String, bool)> {
    let nest = |open: &str, inner: &str, close: &str| {
        format!(
            "const deep = {}{inner}{};\nexport default {{ on_input() {{ return null; }} }};\n",
            open.repeat(depth),
            close.repeat(depth)
        )
    };
    vec![
        ("brackets.ts", nest("(", "null", ")"), true),
        ("arrays.js", nest("[", "1", "]"), true),
        ("templates.ts", nest("`${", "1", "}`"), true),
        ("objects.ts", nest("{a:", "1", "}"), true),
        ("arrows-ts.ts", nest("() => ", "1", ""), true),
        ("arrows-js.js", nest("() => ", "1", ""), true),
        (
            "unclosed.ts",
            format!("const deep: {}", "[".repeat(depth)),
            true,
        ),
        ("unary.js", nest("!", "1", ""), false),
    ]
}

#[test]
fn deeply_nested_sources_are_refused_not_a_crash() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for depth in [10_000, 100_000] {
        let dir = plugin_dir();
        let files = deeply_nested(depth);
        for (name, source, _) in &files {
            write(dir.path(), name, source);
        }
        install(dir.path(), "slow", "slow_policy.ts", "");
        let host = PluginHost::open(dir.path()).unwrap();
        let report = runtime.block_on(host.report());
        for (file, _, must_refuse) in &files {
            let plugin = report
                .iter()
                .find(|r| r.file.file_name() == Some(std::ffi::OsStr::new(file)))
                .unwrap_or_else(|| panic!("{file} in {report:?}"));
            if *must_refuse || plugin.status == Status::Refused {
                assert_eq!(plugin.status, Status::Refused, "{depth} {file}: {plugin:?}");
                let reason = plugin.reason.as_deref().unwrap_or("");
                assert!(
                    reason.contains("nest deeper than 1000")
                        || reason.contains("SyntaxError")
                        || reason.contains("Maximum call stack size exceeded"),
                    "{depth} {file}: {reason}"
                );
            }
        }
        let results = runtime.block_on(echo_through(&host, "fine"));
        assert_eq!(results[0], ("echo".into(), "fine".into(), false), "{depth}");
    }
}
