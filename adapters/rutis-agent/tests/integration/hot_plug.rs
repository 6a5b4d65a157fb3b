//! rutis-agent tool libraries dropped into a plugin directory, through a
//! real `yoagent::Agent`:
//! - a hot-plug tool is offered, called by the model with its arguments,
//!   and its result reaches the model's next request;
//! - an `{"ok": true, "notes": ...}` result shows its notes, and an
//!   `{"ok": false, "error": ...}` result is an error result showing the
//!   whole JSON, as rutis shows them;
//! - a library written to rutis's demo ABI (static name and schemas, heap
//!   results, a `free`, a schema with keys rutis ignores) loads and runs;
//! - a result that is not UTF-8, and a tool that hangs past its timeout,
//!   fail the call closed with the host's message;
//! - a library with no name and no `free` works, named after its file;
//! - a library is recognised by its symbols without a manifest, a manifest
//!   can name the ecosystem, and a host without the adapter refuses it
//!   naming the adapter crate;
//! - malformed libraries are refused, each with its reason.
//!
//! The fixtures are this crate's example cdylibs (`tests/fixture/`), which
//! `cargo test` builds.

use crate::support;

use serde_json::json;
use std::path::Path;
use support::*;
use yoagent::Message;
use yohost::PluginHost;

/// A host over `dir` with the rutis-agent adapter registered.
fn host(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_rutis_agent::adapter())
        .open()
        .expect("the directory opens")
}

/// A plugin directory holding the fixture `example` as a lone file.
fn dir_with(example: &str) -> tempfile::TempDir {
    let dir = plugin_dir();
    let lib = example_dylib(example);
    std::fs::copy(&lib, dir.path().join(lib.file_name().unwrap())).unwrap();
    dir
}

/// A plugin directory holding the tools fixture in a folder whose manifest
/// sets `manifest` (its `entry` is added).
fn dir_with_manifest(manifest: &str) -> tempfile::TempDir {
    let dir = plugin_dir();
    let lib = example_dylib("rutis_fixture_tools");
    write(
        dir.path(),
        "tools/plugin.toml",
        &format!("entry = {:?}\n{manifest}", lib.display().to_string()),
    );
    dir
}

/// Run the scripted turns against `host` and return the run's events and
/// the requests the model saw.
async fn run_with(
    host: &PluginHost,
    turns: Vec<yoagent::provider::mock::MockResponse>,
) -> (Vec<yoagent::AgentEvent>, Vec<Vec<Message>>) {
    let (agent, requests) = scripted(turns);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    let requests = requests.lock().unwrap().clone();
    (events, requests)
}

#[tokio::test]
async fn a_hot_plug_tool_is_called_by_the_model_and_its_result_reaches_it() {
    let dir = dir_with("rutis_fixture_tools");
    let host = host(dir.path());
    let report = host.report().await;
    let tools = reported(&report, "fixture-tools");
    assert_eq!(tools.engine.as_deref(), Some("dylib"));
    assert_eq!(tools.ecosystem.as_deref(), Some("rutis-agent"));
    assert_eq!(
        tools.tools,
        ["shout", "fail", "live_strings", "hang", "garbled"]
    );

    let (events, requests) = run_with(
        &host,
        vec![call("shout", json!({"text": "hello"})), text("done")],
    )
    .await;
    assert_eq!(
        tool_results(&events),
        [("shout".into(), "HELLO".into(), false)]
    );
    let seen = requests[1].iter().any(|m| {
        matches!(m, Message::ToolResult { tool_name, content, is_error: false, .. }
            if tool_name == "shout" && texts(content) == "HELLO")
    });
    assert!(seen, "the result reaches the model: {:?}", requests[1]);
}

/// The crash this pins: freeing a static name or schema aborted the whole
/// host. rutis's loader frees nothing but invoke results.
#[tokio::test]
async fn a_library_written_to_rutis_demo_abi_loads_and_reads_as_rutis_shows_it() {
    let dir = dir_with("rutis_fixture_demo_abi");
    let host = host(dir.path());
    let report = host.report().await;
    let demo = reported(&report, "demo-abi");
    assert_eq!(demo.tools, ["release_notes", "broken", "live_results"]);
    let (events, _) = run_with(
        &host,
        vec![
            call("release_notes", json!({"version": "v0.2.0"})),
            call("broken", json!({})),
            call("live_results", json!({})),
            text("done"),
        ],
    )
    .await;
    let results = tool_results(&events);
    assert_eq!(
        results[0],
        (
            "release_notes".into(),
            "v0.2.0: hot-loading, memory compact".into(),
            false
        )
    );
    let whole: serde_json::Value =
        serde_json::from_str(r#"{"ok":false,"error":"not today"}"#).unwrap();
    assert_eq!(
        results[1],
        ("broken".into(), format!("error: {whole}"), true)
    );
    // The two earlier results went back to the library's `free`; the
    // counting one is counted before it is handed out.
    assert_eq!(results[2], ("live_results".into(), "0".into(), false));
}

#[tokio::test]
async fn an_error_result_is_an_error() {
    let dir = dir_with("rutis_fixture_tools");
    let host = host(dir.path());
    let (events, requests) = run_with(&host, vec![call("fail", json!({})), text("done")]).await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    let (name, shown, is_error) = &results[0];
    assert_eq!(name, "fail");
    assert!(is_error, "{results:?}");
    assert!(shown.contains("the fail tool always fails"), "{shown}");
    let seen = requests[1]
        .iter()
        .any(|m| matches!(m, Message::ToolResult { is_error: true, .. }));
    assert!(seen, "the model sees an error result");
}

#[tokio::test]
async fn a_result_that_is_not_utf8_fails_the_call_closed() {
    let dir = dir_with("rutis_fixture_tools");
    let host = host(dir.path());
    let (events, _) = run_with(&host, vec![call("garbled", json!({})), text("done")]).await;
    let results = tool_results(&events);
    let (_, shown, is_error) = &results[0];
    assert!(is_error, "{results:?}");
    assert!(
        shown.contains("[yohost]") && shown.contains("fixture-tools"),
        "{shown}"
    );
    assert!(!shown.contains("\u{fffd}"), "no plugin bytes: {shown}");
}

#[tokio::test]
async fn a_hanging_tool_is_abandoned_at_its_timeout() {
    let dir = dir_with_manifest("[timeouts]\ncall_tool = 300");
    let host = host(dir.path());
    let started = std::time::Instant::now();
    let (events, _) = run_with(&host, vec![call("hang", json!({})), text("done")]).await;
    // The tool sleeps for an hour: a run that waited would exceed this
    // bound, generous so a loaded machine does not fail it.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the run does not wait for the tool"
    );
    let results = tool_results(&events);
    let (name, shown, is_error) = &results[0];
    assert_eq!(name, "hang");
    assert!(is_error, "{results:?}");
    assert!(
        shown.contains("[yohost]") && shown.contains("fixture-tools"),
        "{shown}"
    );
    // The next run is served by a fresh worker although the old one is stuck.
    let (events, _) = run_with(
        &host,
        vec![call("shout", json!({"text": "again"})), text("done")],
    )
    .await;
    assert_eq!(
        tool_results(&events),
        [("shout".into(), "AGAIN".into(), false)]
    );
}

#[tokio::test]
async fn a_library_without_name_or_free_works_named_after_its_file() {
    let dir = dir_with("rutis_fixture_minimal");
    let host = host(dir.path());
    let report = host.report().await;
    let minimal = reported(&report, "rutis_fixture_minimal");
    assert_eq!(minimal.tools, ["echo_args"]);
    let (events, _) = run_with(
        &host,
        vec![call("echo_args", json!({"n": [1, 2]})), text("done")],
    )
    .await;
    assert_eq!(
        tool_results(&events),
        [("echo_args".into(), r#"{"n":[1,2]}"#.into(), false)]
    );
}

#[tokio::test]
async fn a_library_is_recognised_by_its_symbols_and_needs_the_adapter() {
    // A manifest without `ecosystem`: recognised by the adapter.
    let dir = dir_with_manifest("name = \"named\"");
    assert_eq!(host(dir.path()).plugins()[0].name, "named");

    // Without the adapter, the dylib engine refuses it (no yohost entry).
    let dir = dir_with("rutis_fixture_tools");
    let plain = PluginHost::open(dir.path()).unwrap();
    assert!(plain.plugins().is_empty());
    let reason = plain.refused()[0].reason.to_string();
    assert!(reason.contains("yohost_plugin_entry"), "{reason}");

    // A manifest that names the ecosystem, without the adapter: refused,
    // naming the crate to register.
    let dir = dir_with_manifest("ecosystem = \"rutis-agent\"");
    let plain = PluginHost::open(dir.path()).unwrap();
    let refusal = &plain.refused()[0];
    assert!(matches!(
        refusal.reason,
        yohost::LoadError::NoAdapter {
            ecosystem: yohost_adapter_rutis_agent::ECOSYSTEM,
            engine: yohost::EngineKind::DYLIB,
            ..
        }
    ));
    assert!(
        refusal
            .reason
            .to_string()
            .contains("yohost-adapter-rutis-agent"),
        "{}",
        refusal.reason
    );
}

#[tokio::test]
async fn malformed_libraries_are_refused_with_their_reason() {
    let dir = plugin_dir();
    let cases = [
        ("rutis_fixture_bad_json", "tool 0: the schema is not JSON"),
        (
            "rutis_fixture_no_name",
            "tool 0: the schema has no `name` string",
        ),
        (
            "rutis_fixture_params_not_object",
            "tool 0 (stringly): `parameters` is not a JSON object",
        ),
        (
            "rutis_fixture_duplicate",
            "tools 0 and 1 are both named `twin`",
        ),
        ("rutis_fixture_too_many", "declares 4294967295 tools"),
        (
            "rutis_fixture_no_invoke",
            "exports no `rutis_plugin_tool_invoke`",
        ),
    ];
    for (example, _) in cases {
        let lib = example_dylib(example);
        std::fs::copy(&lib, dir.path().join(lib.file_name().unwrap())).unwrap();
    }
    let host = host(dir.path());
    assert!(host.plugins().is_empty());
    let refused = host.refused();
    for (example, reason) in cases {
        let refusal = refused
            .iter()
            .find(|r| r.name == example)
            .unwrap_or_else(|| panic!("{example} in {refused:?}"));
        assert_eq!(
            refusal.ecosystem,
            Some(yohost_adapter_rutis_agent::ECOSYSTEM),
            "{example}"
        );
        let text = refusal.reason.to_string();
        assert!(text.contains(reason), "{example}: {text}");
    }
    // A rescan for another file keeps the unchanged refusals as they were.
    let lib = example_dylib("rutis_fixture_minimal");
    std::fs::copy(&lib, dir.path().join(lib.file_name().unwrap())).unwrap();
    assert_eq!(host.plugins().len(), 1);
    let refused = host.refused();
    assert_eq!(refused.len(), cases.len());
    assert!(refused
        .iter()
        .all(|r| r.ecosystem == Some(yohost_adapter_rutis_agent::ECOSYSTEM)));
}
