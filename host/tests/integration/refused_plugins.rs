//! A refused plugin fails closed, through a real `yoagent::Agent`:
//! - a required policy that cannot load fails every run, the `rm -rf` call
//!   never runs, and the run's error names the plugin and the reason, for
//!   each way of failing to load: a top-level JS throw, a Python
//!   `ImportError`, a name clash, an `entry` that does not exist, and a
//!   `plugin.toml` that cannot be parsed (which counts as required);
//! - the same through `PluginHost::extensions()`;
//! - an advisory plugin that cannot load: the run goes on, and a warning
//!   with the run's `run_id` names it at the start of every run.
//!
//! Not covered: a load past its time limit. The JS engine's limit is a
//! fixed 5 s and Python's import limit 10 s, with no shorter setting, so a
//! test would spend that long spinning.

use crate::support;

use serde_json::json;
use std::path::Path;
use support::*;
use yohost::{Mode, PluginHost};

const DENY_ALL_TS: &str = r#"import { definePlugin } from "yohost";
export default definePlugin({ before_tool() { return { deny: "no shell" }; } });
"#;

const ALLOW_ALL_TS: &str = r#"import { definePlugin } from "yohost";
export default definePlugin({ before_tool() { return null; } });
"#;

const THROWS_AT_LOAD_TS: &str = r#"import { definePlugin } from "yohost";
throw new Error("guard cannot start");
export default definePlugin({ before_tool() { return { deny: "no shell" }; } });
"#;

/// `rm -rf /` through the agent, with `host`'s one live extension.
async fn rm_rf_through(host: &PluginHost) -> (Vec<yoagent::AgentEvent>, RecordingBash) {
    let (agent, bash) = scripted_bash(vec![
        call("bash", json!({"command": "rm -rf /"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    (run(&mut agent, "clean up").await, bash)
}

/// The run failed before any tool ran, and its error names `plugin` and
/// contains `reason`.
fn assert_failed_naming(
    events: &[yoagent::AgentEvent],
    bash: &RecordingBash,
    plugin: &str,
    reason: &str,
) {
    assert!(bash.commands().is_empty(), "the tool never runs");
    let (stop, error) = final_assistant(events);
    assert_eq!(stop, yoagent::StopReason::Error);
    let error = error.expect("an error message");
    assert!(
        error.contains(&format!("required plugin '{plugin}' was refused")),
        "{error}"
    );
    assert!(error.contains(reason), "{error}");
}

/// A required policy in `dir/guard/` with `source` as `index.ts` or
/// `__init__.py`.
fn required_guard(dir: &Path, file: &str, source: &str) {
    write(dir, &format!("guard/{file}"), source);
    write(dir, "guard/plugin.toml", "mode = \"required\"\n");
}

/// Every run fails, not only the first.
async fn every_run_fails(host: &PluginHost, plugin: &str, reason: &str) {
    for _ in 0..2 {
        let (events, bash) = rm_rf_through(host).await;
        assert_failed_naming(&events, &bash, plugin, reason);
    }
}

#[tokio::test]
async fn a_required_policy_whose_script_throws_at_load_fails_every_run() {
    let dir = plugin_dir();
    required_guard(dir.path(), "index.ts", THROWS_AT_LOAD_TS);
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.refused()[0].mode, Mode::Required);
    every_run_fails(&host, "guard", "guard cannot start").await;
}

#[tokio::test]
async fn a_required_python_policy_with_an_import_error_fails_every_run() {
    let dir = plugin_dir();
    required_guard(
        dir.path(),
        "__init__.py",
        "from yohost import Plugin\nimport yohost_no_such_module\nplugin = Plugin()\n",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    every_run_fails(&host, "guard", "yohost_no_such_module").await;
}

#[tokio::test]
async fn a_required_policy_refused_for_a_name_clash_fails_every_run() {
    let dir = plugin_dir();
    // `a-open` takes the name first and allows everything; the real policy
    // is refused: the run must not go on with the impostor alone.
    write(dir.path(), "a-open/index.ts", ALLOW_ALL_TS);
    write(dir.path(), "a-open/plugin.toml", "name = \"guard\"\n");
    write(dir.path(), "b-guard/index.ts", DENY_ALL_TS);
    write(
        dir.path(),
        "b-guard/plugin.toml",
        "name = \"guard\"\nmode = \"required\"\n",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    every_run_fails(&host, "guard", "already named 'guard'").await;
}

#[tokio::test]
async fn a_required_policy_whose_entry_is_missing_fails_every_run() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "guard/plugin.toml",
        "mode = \"required\"\nentry = \"policy.ts\"\n",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    every_run_fails(&host, "guard", "does not exist").await;
}

#[tokio::test]
async fn a_policy_whose_manifest_cannot_be_parsed_counts_as_required() {
    let dir = plugin_dir();
    write(dir.path(), "guard/index.ts", DENY_ALL_TS);
    // Unterminated string: whatever mode it meant, it may be a required policy.
    write(
        dir.path(),
        "guard/plugin.toml",
        "mode = \"advisory\nname = 3",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.refused()[0].mode, Mode::Required);
    every_run_fails(&host, "guard", "malformed plugin.toml").await;
}

#[tokio::test]
async fn per_plugin_extensions_fail_every_run_for_a_refused_required_plugin() {
    let dir = plugin_dir();
    required_guard(dir.path(), "index.ts", THROWS_AT_LOAD_TS);
    write(dir.path(), "open.ts", ALLOW_ALL_TS);
    let host = PluginHost::open(dir.path()).unwrap();
    let extensions = host.extensions();
    let names: Vec<&str> = extensions.iter().map(yoagent::Extension::name).collect();
    assert_eq!(names, ["open", "guard"]);
    let (mut agent, bash) = scripted_bash(vec![
        call("bash", json!({"command": "rm -rf /"})),
        text("done"),
    ]);
    for extension in extensions {
        agent = agent.with_extension(extension);
    }
    let events = run(&mut agent, "clean up").await;
    assert_failed_naming(&events, &bash, "guard", "guard cannot start");
    let (_, error) = final_assistant(&events);
    assert!(
        error.unwrap().contains("[Extension failed: guard]"),
        "yoagent names the refused plugin's own extension"
    );
}

#[tokio::test]
async fn an_advisory_plugin_that_cannot_load_is_logged_with_the_run_id_and_the_run_goes_on() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    write(dir.path(), "broken.ts", THROWS_AT_LOAD_TS);
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.refused()[0].mode, Mode::Advisory);
    for _ in 0..2 {
        let (events, bash) = rm_rf_through(&host).await;
        assert_eq!(bash.commands(), ["rm -rf /"], "the run went on");
        assert_eq!(final_assistant(&events).0, yoagent::StopReason::Stop);
    }
    let warnings: Vec<serde_json::Value> = lines_with(&logs, "plugin", "broken")
        .into_iter()
        .filter(|l| l["level"] == "WARN" && l["fields"]["run_id"].is_string())
        .collect();
    assert_eq!(warnings.len(), 2, "one per run: {warnings:?}");
    assert_ne!(
        warnings[0]["fields"]["run_id"], warnings[1]["fields"]["run_id"],
        "each names its own run"
    );
    assert!(
        warnings[0]["fields"]["reason"]
            .as_str()
            .unwrap()
            .contains("guard cannot start"),
        "{warnings:?}"
    );
}
