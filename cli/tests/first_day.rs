//! What a new user following only the README and `docs/` ran into, each
//! through a real `yohost` process:
//! - an event or hook name the host does not know (pi's `pi.on`, DSH's
//!   `ctx.on`, a field of yohost's own `definePlugin`) refuses a required
//!   plugin and warns of an advisory one, both naming the name meant; `run`
//!   shows the warning too;
//! - an `after_tool` reply the host rejects is reported as a failure, with
//!   the shape expected and the one received, in text and in JSON, and a
//!   run a required plugin failed names no internal hook of the loop;
//! - a grant resolves against the plugin's folder whatever path the
//!   directory was given by (`check ../plugins`);
//! - `check`'s table gives a malformed manifest's whole reason on one
//!   line, and each plugin's mode and grants;
//! - the scripted model gives every tool call an id of its own;
//! - `yohost new`'s hints name SDKs that exist (this checkout's);
//! - a line a plugin writes while it loads is shown as the load's, before
//!   the run, not as a run's with an empty run id.

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::*;
use std::path::Path;
use support::*;

/// A pi extension that blocks every `bash` call, listening for `EVENT`.
const PI_GUARD: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("EVENT", async () => ({ block: true, reason: "no shell" }));
  pi.registerTool({
    name: "noop",
    description: "does nothing",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
}
"#;

/// A DSH tool plugin listening for `tools/pre-exec` (meant: `-execute`).
const DSH_GUARD: &str = r#"export const name = "dsh-guard";
export function apply(ctx) {
  ctx.on("tools/pre-exec", (exec, next) => next());
}
"#;

/// A yohost plugin with a misspelt hook.
const TS_GUARD: &str = "export default { before_tol() { return null; } };\n";

fn plugin(dir: &Path, name: &str, file: &str, source: &str, manifest: &str) {
    write(dir, &format!("{name}/{file}"), source);
    write(dir, &format!("{name}/plugin.toml"), manifest);
}

#[test]
fn an_unknown_event_refuses_a_required_plugin_and_warns_of_an_advisory_one() {
    let plugins = plugin_dir();
    let dir = plugins.path();
    let misspelt = PI_GUARD.replace("EVENT", "tool_cal");
    plugin(
        dir,
        "pi-required",
        "index.ts",
        &misspelt,
        "mode = \"required\"",
    );
    plugin(
        dir,
        "pi-advisory",
        "index.ts",
        &misspelt,
        "mode = \"advisory\"",
    );
    let dsh = "mode = \"required\"\necosystem = \"dsh\"";
    plugin(dir, "dsh-required", "index.js", DSH_GUARD, dsh);
    plugin(
        dir,
        "ts-required",
        "index.ts",
        TS_GUARD,
        "mode = \"required\"",
    );
    let path = dir.to_str().unwrap();
    let (code, stdout, _) = yohost(&["check", "--json", path], dir);
    assert_eq!(code, Some(1), "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for (name, meant) in [
        ("pi-required", "did you mean `tool_call`?"),
        ("dsh-required", "did you mean `tools/pre-execute`?"),
        ("ts-required", "did you mean `before_tool`?"),
    ] {
        let refused = checked(&doc, name);
        assert_eq!(refused["status"], "refused", "{refused}");
        let reason = refused["reason"].as_str().unwrap();
        assert!(reason.contains("a required plugin"), "{reason}");
        assert!(reason.contains(meant), "{reason}");
    }
    let advisory = checked(&doc, "pi-advisory");
    assert_eq!(advisory["status"], "loaded", "{advisory}");
    let warning = "listens for `tool_cal`, which the host does not know (did you mean `tool_call`?): the handler never runs";
    assert_eq!(advisory["warnings"][0], warning, "{advisory}");

    // The run shows it too, before the run's lines.
    let work = plugin_dir();
    write(work.path(), "script.json", r#"[{"text": "done"}]"#);
    let (_, stdout, _) = run_script(dir, false, work.path());
    let shown = format!("warning: pi-advisory: {warning}");
    assert!(
        position(&stdout, &shown) < position(&stdout, "run "),
        "{stdout}"
    );
}

/// A Python `after_tool` that answers what no hook accepts.
const ANSWERS_42: &str = "from yohost import Plugin\n\nplugin = Plugin(\"answers-42\")\n\n\n@plugin.after_tool\ndef edit(call):\n    return 42\n";

/// A required TypeScript observer that fails on every event.
const FAILS_ON_EVENTS: &str =
    "export default { on_event() { throw new Error(\"no events for me\"); } };\n";

#[test]
fn a_rejected_reply_is_reported_as_a_failure_with_the_shape_expected() {
    let plugins = plugin_dir();
    write(plugins.path(), "answers-42.py", ANSWERS_42);
    let work = plugin_dir();
    let script = r#"[{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}, {"text": "done"}]"#;
    write(work.path(), "script.json", script);
    let (_, stdout, _) = run_script(plugins.path(), false, work.path());
    let line = stdout
        .lines()
        .find(|l| l.starts_with("  answers-42 "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.starts_with("  answers-42 failed in after_tool, so the output of bash was withheld: after_tool returned a reply the host cannot use: "),
        "{line}"
    );
    assert!(line.contains("a number"), "{line}");
    assert!(!stdout.contains("edited the output"), "{stdout}");

    let (_, stdout, _) = run_script(plugins.path(), true, work.path());
    let decision = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|l| l.get("decision").cloned())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(decision["decision"], "fail", "{decision}");
    assert_eq!(decision["hook"], "after_tool", "{decision}");
    let reason = decision["reason"].as_str().unwrap();
    assert!(reason.contains("a number"), "{reason}");

    // A required plugin's failure is told without the loop's own words.
    let failing = plugin_dir();
    plugin(
        failing.path(),
        "observer",
        "index.ts",
        FAILS_ON_EVENTS,
        "mode = \"required\"",
    );
    let (code, stdout, _) = run_script(failing.path(), false, work.path());
    assert_eq!(code, Some(1), "{stdout}");
    let failed = stdout
        .lines()
        .find(|l| l.contains(" failed: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(failed.contains("plugin 'observer'"), "{failed}");
    assert!(!failed.contains("take_failure"), "{failed}");
    // Nor does the JSON form, to its last event.
    let (code, stdout, _) = run_script(failing.path(), true, work.path());
    assert_eq!(code, Some(1), "{stdout}");
    let end = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["type"] == "agentEnd")
        .unwrap_or_else(|| panic!("{stdout}"));
    let end = end.to_string();
    assert!(end.contains("plugin 'observer'"), "{end}");
    assert!(!end.contains("take_failure"), "{end}");
}

#[test]
fn a_grant_resolves_against_the_plugin_folder_from_a_relative_directory() {
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    write(&plugins, "reader/data/notes.txt", "notes");
    plugin(
        &plugins,
        "reader",
        "index.ts",
        "export default { before_tool() { return null; } };\n",
        "[capabilities]\nread = [\"data/\"]",
    );
    let work = top.path().join("work");
    std::fs::create_dir(&work).unwrap();
    for (dir, cwd) in [
        ("../plugins", &work),
        ("plugins", &top.path().to_path_buf()),
    ] {
        let (code, stdout, _) = yohost(&["check", "--json", dir], cwd);
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(checked(&doc, "reader")["status"], "loaded", "{dir}: {doc}");
        assert_eq!(code, Some(0), "{dir}");
    }
}

#[test]
fn check_shows_the_whole_reason_on_one_line_and_each_mode_and_grants() {
    let plugins = plugin_dir();
    let dir = plugins.path();
    plugin(
        dir,
        "typo",
        "index.ts",
        "export default { before_tool() { return null; } };\n",
        "mode = \"requird\"",
    );
    plugin(
        dir,
        "granted",
        "index.ts",
        "export default { before_tool() { return null; } };\n",
        "mode = \"required\"\n[capabilities]\nwrite = [\"out/\"]\nenv = [\"HOME\"]\nnetwork = [\"api.example.org\"]",
    );
    std::fs::create_dir(dir.join("granted/out")).unwrap();
    let (code, stdout, _) = yohost(&["check", dir.to_str().unwrap()], dir);
    assert_eq!(code, Some(1), "{stdout}");
    let reason = stdout
        .lines()
        .find(|l| l.starts_with("    reason: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        reason.ends_with("malformed plugin.toml: line 1, column 8: `mode`: unknown variant `requird`, expected `advisory` or `required`; did you mean `required`?"),
        "{reason}"
    );
    let granted = position(&stdout, "granted ");
    let row: Vec<&str> = stdout
        .lines()
        .nth(granted)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(row[..5], ["granted", "js", "yohost", "loaded", "required"]);
    assert_eq!(
        stdout.lines().nth(granted + 1),
        Some("    grants: write out/, env HOME, network api.example.org"),
        "{stdout}"
    );
    let typo: Vec<&str> = stdout
        .lines()
        .nth(position(&stdout, "typo "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(typo[3..5], ["refused", "required"], "{stdout}");
}

#[test]
fn the_scripted_model_gives_every_tool_call_an_id_of_its_own() {
    let plugins = plugin_dir();
    let work = plugin_dir();
    let call = r#"{"name": "bash", "arguments": {"command": "true"}}"#;
    let script = format!(
        r#"[{{"tool_calls": [{call}, {call}]}}, {{"tool_calls": [{call}]}}, {{"text": "done"}}]"#
    );
    write(work.path(), "script.json", &script);
    let (code, stdout, _) = run_script(plugins.path(), true, work.path());
    assert_eq!(code, Some(0), "{stdout}");
    let ids: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["type"] == "toolExecutionStart")
        .map(|l| l["toolCallId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["call-0-0", "call-0-1", "call-1-0"], "{stdout}");
}

#[test]
fn the_scaffolds_hints_name_sdks_that_exist() {
    let dir = plugin_dir();
    let (code, stdout, _) = yohost(&["new", "python", "py-guard"], dir.path());
    assert_eq!(code, Some(0), "{stdout}");
    let sdk = stdout
        .split("pip install ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(Path::new(sdk).join("pyproject.toml").is_file(), "{stdout}");
    let (code, stdout, _) = yohost(&["new", "ts", "ts-guard"], dir.path());
    assert_eq!(code, Some(0), "{stdout}");
    let package: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("ts-guard/package.json")).unwrap(),
    )
    .unwrap();
    let yohost_sdk = package["devDependencies"]["yohost"].as_str().unwrap();
    let sdk = yohost_sdk
        .strip_prefix("file:")
        .unwrap_or_else(|| panic!("{package}"));
    assert!(Path::new(sdk).join("yohost.d.ts").is_file(), "{package}");
}

#[test]
fn a_line_written_at_load_is_shown_as_the_loads_before_the_run() {
    let plugins = plugin_dir();
    write(
        plugins.path(),
        "chatty.ts",
        "console.log(\"hello at load\");\nexport default { before_tool() { console.log(\"in a call\"); return null; } };\n",
    );
    let work = plugin_dir();
    write(
        work.path(),
        "script.json",
        r#"[{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}, {"text": "done"}]"#,
    );
    let (code, stdout, _) = run_script(plugins.path(), false, work.path());
    assert_eq!(code, Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    let at_load = lines
        .iter()
        .position(|l| *l == "  [chatty info load] hello at load")
        .unwrap_or_else(|| panic!("{stdout}"));
    let started = lines
        .iter()
        .position(|l| l.starts_with("run ") && l.ends_with(" started"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(at_load < started, "{stdout}");
    assert!(stdout.contains("info run "), "{stdout}");

    let (_, stdout, _) = run_script(plugins.path(), true, work.path());
    let logs: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|l| l.get("log").cloned())
        .collect();
    let load = logs
        .iter()
        .find(|l| l["message"] == "hello at load")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(load["phase"], "load", "{load}");
    assert!(load.get("run_id").is_none(), "{load}");
    let in_call = logs.iter().find(|l| l["message"] == "in a call").unwrap();
    assert!(!in_call["run_id"].as_str().unwrap().is_empty(), "{in_call}");
}
