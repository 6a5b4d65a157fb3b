//! Rust dylib plugins through a real `yoagent::Agent`:
//! - a policy's denial reaches the model as the tool's error result;
//! - a rewrite feeds the next plugin in the chain;
//! - a panicking, hanging, erroring or garbage-returning dylib fails closed
//!   (the call is denied, naming the plugin in fixed words; the detail and
//!   its `error_kind` go to the log) and the next run works;
//! - a required plugin's failure fails the run, naming the plugin;
//! - a dylib declaring a hook number the host does not know (built against
//!   a newer contract) is refused, naming the number;
//! - a wrong ABI version, a file that is not a library, a malformed manifest
//!   or a second plugin of the same name is refused with a reason, and the
//!   other plugins still load;
//! - a dylib tool is offered and callable, and its log lines carry `run_id`.

use crate::support;
use crate::wasm_guests;

use serde_json::json;
use std::path::Path;
use support::*;
use wasm_guests::native_guest;
use yohost::{PluginHost, Status};

/// The built cdylib `example`: the rust-policy and rust-tool examples come
/// from the native guests (they are examples of the command's package, which
/// `cargo test -p yohost` does not build), the fixtures from this package.
fn dylib(example: &str) -> std::path::PathBuf {
    match example {
        "example_policy" | "example_tool" => native_guest(example),
        fixture => example_dylib(fixture),
    }
}

/// Put the built cdylib `example` in `dir/<name>/` with a manifest.
fn install(dir: &Path, name: &str, example: &str, manifest_extra: &str) {
    let lib = dylib(example);
    write(
        dir,
        &format!("{name}/plugin.toml"),
        &format!(
            "name = \"{name}\"\nentry = {:?}\n{manifest_extra}",
            lib.display().to_string()
        ),
    );
}

#[tokio::test]
async fn a_policy_denial_reaches_the_model() {
    let dir = plugin_dir();
    install(dir.path(), "policy", "example_policy", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![
        call("bash", json!({"command": "rm -rf /"})),
        text("ok, I will not"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(yoagent::tools::bash::BashTool::new())])
        .with_extension(host.extension());
    let events = run(&mut agent, "clean up").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].2, "the denied call is an error result");
    assert!(
        results[0].1.contains("`rm -rf` is not allowed"),
        "{results:?}"
    );
    let second_request = requests.lock().unwrap()[1].clone();
    let seen = format!("{second_request:?}");
    assert!(
        seen.contains("`rm -rf` is not allowed"),
        "the model sees the denial"
    );
}

#[tokio::test]
async fn a_rewrite_feeds_the_next_plugin() {
    let dir = plugin_dir();
    install(dir.path(), "tag-a", "fixture_tagger", "priority = 1");
    install(dir.path(), "tag-b", "fixture_tagger", "priority = 2");
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 2);
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "echo hi").await;
    assert_eq!(tool_results(&events)[0].1, "hi +tag +tag");
}

async fn echo_through(host: &PluginHost, text_arg: &str) -> Vec<(String, String, bool)> {
    let (agent, _) = scripted(vec![call("echo", json!({"text": text_arg})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
}

#[tokio::test]
async fn hostile_dylibs_fail_closed_and_the_next_run_works() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "fixture_hostile",
        "[timeouts]\nbefore_tool = 300",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    for (behaviour, error_kind, detail) in [
        (
            "panic",
            "crashed",
            "panicked: hostile plugin panicked on purpose",
        ),
        ("hang", "timeout", "300ms"),
        ("error", "guest", "hostile plugin refused to decide"),
    ] {
        let results = echo_through(&host, behaviour).await;
        assert_eq!(results.len(), 1);
        let (_, message, is_error) = &results[0];
        assert!(is_error, "{behaviour}: the call is denied");
        assert!(
            message.contains("plugin 'hostile'"),
            "{behaviour}: {message}"
        );
        assert!(!message.contains(detail), "{behaviour}: {message}");
        assert!(
            lines_with(&logs, "error_kind", error_kind)
                .iter()
                .any(|l| l["fields"]["message"].as_str().unwrap().contains(detail)),
            "{behaviour}: {:?}",
            logs.lines()
        );
        // The next run is served normally.
        let results = echo_through(&host, "fine").await;
        assert_eq!(results[0], ("echo".into(), "fine".into(), false));
    }
}

#[tokio::test]
async fn a_garbage_reply_denies_the_call() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(dir.path(), "garbage", "fixture_garbage", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let results = echo_through(&host, "anything").await;
    assert!(results[0].2);
    assert!(
        results[0]
            .1
            .contains("plugin 'garbage' returned a reply the host cannot use"),
        "{results:?}"
    );
    let line = &lines_with(&logs, "error_kind", "bad_reply")[0];
    assert!(
        line["fields"]["message"]
            .as_str()
            .unwrap()
            .contains("not MessagePack"),
        "{line}"
    );
}

#[tokio::test]
async fn a_required_plugin_failure_fails_the_run_naming_it() {
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "fixture_hostile",
        "mode = \"required\"",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, requests) = scripted(vec![text("never sent")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "please fail the model").await;
    let (stop, error) = final_assistant(&events);
    assert_eq!(stop, yoagent::StopReason::Error);
    let error = error.unwrap();
    assert!(
        error.contains("plugin 'hostile' returned an error in before_model"),
        "{error}"
    );
    assert!(!error.contains("the model gate is broken"), "{error}");
    assert!(requests.lock().unwrap().is_empty(), "no request is sent");

    // Advisory, the same failure is skipped and the run completes.
    let dir = plugin_dir();
    install(dir.path(), "hostile", "fixture_hostile", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![text("answer")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "please fail the model").await;
    assert_eq!(final_assistant(&events).0, yoagent::StopReason::Stop);
}

#[tokio::test]
async fn a_dylib_declaring_a_hook_number_the_host_does_not_know_is_refused_naming_it() {
    let dir = plugin_dir();
    install(dir.path(), "future-hook", "fixture_future_hook", "");
    install(dir.path(), "policy", "example_policy", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert_eq!(reported(&report, "policy").status, Status::Loaded);
    let future = reported(&report, "future-hook");
    assert_eq!(future.status, Status::Refused);
    let reason = future.reason.as_deref().unwrap();
    assert!(
        reason.contains("declares hook number 10, which this host does not know")
            && reason.contains("update yohost"),
        "{reason}"
    );
}

#[tokio::test]
async fn bad_libraries_are_refused_and_the_rest_load() {
    let dir = plugin_dir();
    install(dir.path(), "future", "fixture_future_abi", "");
    install(dir.path(), "policy", "example_policy", "");
    write(
        dir.path(),
        "not-a-plugin.so",
        "this is not a shared library",
    );
    write(dir.path(), "broken/plugin.toml", "mode = [");
    install(dir.path(), "twin", "example_policy", "");
    let tool = native_guest("example_tool");
    write(
        dir.path(),
        "twin2/plugin.toml",
        &format!("name = \"twin\"\nentry = {:?}", tool.display().to_string()),
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let by_name = |n: &str| reported(&report, n);
    assert_eq!(by_name("policy").status, Status::Loaded);
    let future = by_name("future");
    assert_eq!(future.status, Status::Refused);
    let reason = future.reason.as_deref().unwrap();
    assert!(
        reason.contains("ABI version 99") && reason.contains("version 1"),
        "{reason}"
    );
    let junk = by_name("not-a-plugin");
    assert!(
        junk.reason
            .as_deref()
            .unwrap()
            .contains("cannot load the library"),
        "{junk:?}"
    );
    let twins: Vec<_> = report.iter().filter(|r| r.name == "twin").collect();
    assert_eq!(twins.len(), 2);
    assert_eq!(twins[0].status, Status::Loaded);
    let reason = twins[1].reason.as_deref().unwrap();
    assert!(reason.contains("already named 'twin'"), "{reason}");
    let broken = by_name("broken");
    assert!(
        broken
            .reason
            .as_deref()
            .unwrap()
            .contains("malformed plugin.toml"),
        "{broken:?}"
    );
}

#[tokio::test]
async fn a_dylib_tool_is_callable_and_its_logs_carry_the_run_id() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(dir.path(), "rust-tool", "example_tool", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![
        call("word_count", json!({"text": "one two three"})),
        text("three words"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "count").await;
    let results = tool_results(&events);
    assert_eq!(
        results[0],
        (
            "word_count".into(),
            "3 words, 1 lines, 13 characters".into(),
            false
        )
    );
    let lines = logs.plugin_lines();
    let line = lines
        .iter()
        .find(|l| l["fields"]["message"] == "counting 13 characters")
        .unwrap_or_else(|| panic!("the plugin's log line in {lines:?}"));
    assert_eq!(line["fields"]["plugin"], "rust-tool");
    assert!(!line["fields"]["run_id"].as_str().unwrap().is_empty());
}
