//! A `plugin.toml` with problems, through `PluginHost::open`, `report()`
//! (what `yohost check` shows) and a real `yoagent::Agent`:
//! - every problem is reported at once, in file order (not the order of the
//!   keys), each with its line, and an unknown key with the key meant when
//!   one is close (`mdoe` → `mode`);
//! - the plugin is refused with the mode its manifest asks for: an advisory
//!   one with a misspelt key is shown advisory, and runs of the directory
//!   go on with the other plugins; a key misspelling `mode` counts.

use crate::support;

use serde_json::json;
use support::*;
use yohost::manifest::ManifestError;
use yohost::{LoadError, Mode, PluginHost, Status};

const DENY_ALL_TS: &str = r#"import { definePlugin } from "yohost";
export default definePlugin({ before_tool() { return { deny: "no shell" }; } });
"#;

/// Two unknown keys and a wrong type, in an order that is not the keys'.
const THREE_PROBLEMS: &str =
    "# a guard\npriority = \"high\"\nzzz_cache = true\nmdoe = \"required\"\n";

#[tokio::test]
async fn every_problem_is_reported_in_file_order_with_its_line_and_the_key_meant() {
    let dir = plugin_dir();
    write(dir.path(), "guard/index.ts", DENY_ALL_TS);
    write(dir.path(), "guard/plugin.toml", THREE_PROBLEMS);
    let host = PluginHost::open(dir.path()).unwrap();
    let refused = host.refused();
    assert_eq!(refused.len(), 1);
    let problems = match &refused[0].reason {
        LoadError::Manifest {
            problem: ManifestError::Problems(problems),
            ..
        } => problems.clone(),
        other => panic!("{other}"),
    };
    let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [2, 3, 4], "{problems:?}");
    let messages: Vec<String> = problems.iter().map(|p| p.error.to_string()).collect();
    assert!(
        messages[0].starts_with("`priority`: invalid type: string \"high\""),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("unknown key `zzz_cache`"),
        "{messages:?}"
    );
    assert!(!messages[1].contains("did you mean"), "{messages:?}");
    assert!(
        messages[2].contains("unknown key `mdoe`; did you mean `mode`?"),
        "{messages:?}"
    );
    // `mdoe` asks for required: fail closed.
    assert_eq!(refused[0].mode, Mode::Required);

    let report = host.report().await;
    let guard = reported(&report, "guard");
    assert_eq!(guard.status, Status::Refused);
    assert_eq!(guard.mode, Mode::Required);
    let reason = guard.reason.as_deref().unwrap();
    let at = |needle: &str| {
        reason
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}: {reason}"))
    };
    assert!(
        at("line 2, column 12") < at("line 3, column 1") && at("line 3") < at("line 4, column 1")
    );
    assert!(reason.contains("3 problems"), "{reason}");
}

#[tokio::test]
async fn an_advisory_manifest_with_a_misspelt_key_is_shown_advisory_and_runs_go_on() {
    let dir = plugin_dir();
    write(dir.path(), "typo/index.ts", DENY_ALL_TS);
    write(
        dir.path(),
        "typo/plugin.toml",
        "mode = \"advisory\"\nentyr = \"index.ts\"\n",
    );
    write(dir.path(), "guard.ts", DENY_ALL_TS);
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let typo = reported(&report, "typo");
    assert_eq!(typo.status, Status::Refused);
    assert_eq!(typo.mode, Mode::Advisory, "the mode its manifest writes");
    let reason = typo.reason.as_deref().unwrap();
    assert!(
        reason.contains("line 2, column 1: unknown key `entyr`; did you mean `entry`?"),
        "{reason}"
    );
    assert_eq!(reported(&report, "guard").status, Status::Loaded);
    // Every run goes on: the other plugin loaded and denies the call.
    for _ in 0..2 {
        let (agent, bash) = scripted_bash(vec![
            call("bash", json!({"command": "rm -rf /"})),
            text("done"),
        ]);
        let mut agent = agent.with_extension(host.extension());
        let events = run(&mut agent, "clean up").await;
        assert_eq!(final_assistant(&events).0, yoagent::StopReason::Stop);
        assert!(bash.commands().is_empty(), "the guard denied the call");
        let results = tool_results(&events);
        assert!(results[0].1.contains("no shell"), "{results:?}");
    }
}
