//! The `yohost` command:
//! - `check --json` lists the example dylib plugins as loaded, and exits 0;
//! - `check` names each loaded plugin's data folder and makes none;
//! - a broken file in a directory is listed as refused with its reason,
//!   the rest load, and `check` exits 1;
//! - the bundled demo script, with no plugins at all, acts only inside a
//!   temporary folder the command makes and removes;
//! - `run` on the bundled script prints the run with plugin log lines that
//!   carry the run id, and `--json` prints one JSON object per line;
//! - `check` lists a rutis-agent tool library with its tools, and a
//!   malformed one as refused with the reason;
//! - `check` lists a DSH tool plugin with its tools, one that needs
//!   services the adapter lacks as refused naming them, and a pi extension
//!   with its tools;
//! - `check` lists an MCP server with its tools, one without `exec` as
//!   refused with the reason, and a remote one without connecting to it;
//! - `check` performs no write and no process but reports them, judged
//!   against the grants: a write outside `capabilities.write`, or a process
//!   without `capabilities.exec`, is reported as denied and fails as it
//!   would in a run.
//!
//! The plugins are the example cdylibs of the `yohost-cli` and
//! `yohost-adapter-rutis-agent` packages, which `cargo test --workspace`
//! builds (alone: `cargo build -p yohost-cli -p yohost-adapter-rutis-agent --examples`).

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::*;
use std::path::Path;
use std::process::Command;
use support::*;

#[test]
fn check_json_lists_loaded_and_refused_plugins_with_reasons() {
    let dir = dylib_dir();
    write(dir.path(), "broken.so", "not a library");
    write(dir.path(), "mystery.xyz", "?");
    let (code, stdout, _) = yohost(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(code, Some(1), "a refused plugin makes `check` fail");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let plugins = doc["plugins"].as_array().unwrap();
    let find = |name: &str| checked(&doc, name);
    assert_eq!(find("rust-policy")["status"], "loaded");
    assert_eq!(
        find("rust-policy")["hooks"],
        serde_json::json!(["before_tool"])
    );
    assert_eq!(
        find("rust-tool")["tools"],
        serde_json::json!(["word_count"])
    );
    assert_eq!(find("rust-tool")["engine"], "dylib");
    let broken = find("broken");
    assert_eq!(broken["status"], "refused");
    assert!(broken["reason"]
        .as_str()
        .unwrap()
        .contains("cannot load the library"));
    assert!(find("mystery")["reason"]
        .as_str()
        .unwrap()
        .contains("not a plugin"));
    for p in plugins {
        for key in [
            "name",
            "file",
            "engine",
            "ecosystem",
            "status",
            "hooks",
            "tools",
            "reason",
            "warnings",
        ] {
            assert!(p.get(key).is_some(), "{key} in {p}");
        }
    }
}

#[test]
fn check_names_each_loaded_plugin_s_data_folder_and_makes_none() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "guard.ts",
        "export default { before_tool() { return null; } };",
    );
    write(dir.path(), "broken.py", "this is not python");
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let env = [(
        "YOHOST_DATA_DIR".to_string(),
        data.to_string_lossy().into_owned(),
    )];
    let path = dir.path().to_str().unwrap();
    let (_, stdout, _) = yohost_with(&["check", "--json", path], dir.path(), &env);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let guard = checked(&doc, "guard");
    let folder = Path::new(guard["data_dir"].as_str().unwrap());
    assert_eq!(folder.file_name().unwrap(), "guard", "{}", folder.display());
    let directory = folder.parent().unwrap();
    let real_root = root.path().canonicalize().unwrap().join("data");
    assert_eq!(directory.parent().unwrap(), real_root);
    let (name, hash) = directory
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .rsplit_once('-')
        .unwrap();
    let plugins = dir.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(name, plugins.trim_start_matches('.'));
    assert!(hash.len() == 12 && hash.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(checked(&doc, "broken")["data_dir"].is_null());
    assert!(!data.exists(), "a check makes no data folder");
    let (_, table, _) = yohost_with(&["check", path], dir.path(), &env);
    assert!(
        table.contains(&format!("    data: {}\n", folder.display())),
        "{table}"
    );
}

#[test]
fn check_exits_0_when_every_plugin_loads_and_1_when_any_is_refused() {
    let dir = dylib_dir();
    let check = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_yohost"))
            .args(["check", dir.to_str().unwrap()])
            .output()
            .expect("yohost runs")
            .status
            .code()
    };
    assert_eq!(check(dir.path()), Some(0));
    write(dir.path(), "mystery.xyz", "?");
    assert_eq!(check(dir.path()), Some(1));
}

#[test]
fn run_prints_the_run_and_plugin_lines_with_the_run_id() {
    let dir = dylib_dir();
    let work = plugin_dir();
    let (code, stdout, _) = yohost(
        &["run", dir.path().to_str().unwrap(), "--prompt", "go"],
        work.path(),
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("-> word_count"), "{stdout}");
    assert!(
        stdout.contains("<- bash [error] Tool call denied: rust-policy"),
        "{stdout}"
    );
    assert!(stdout.contains("[rust-tool info run "), "{stdout}");

    let (code, stdout, _) = yohost(
        &[
            "run",
            dir.path().to_str().unwrap(),
            "--prompt",
            "go",
            "--json",
        ],
        work.path(),
    );
    assert_eq!(code, Some(0));
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let run_id = lines[0]["run_id"].as_str().unwrap().to_string();
    assert!(lines
        .iter()
        .filter(|l| l.get("type").is_some())
        .all(|l| l["run_id"] == run_id.as_str()));
    let log = lines
        .iter()
        .find(|l| l.get("log").is_some())
        .expect("a plugin log line");
    assert_eq!(log["log"]["run_id"], run_id.as_str());
    assert_eq!(log["log"]["plugin"], "rust-tool");
    assert!(lines.iter().any(|l| l["type"] == "agentEnd"));
}

#[test]
fn run_prints_a_tool_s_progress_between_its_call_and_its_result() {
    let plugins = plugin_dir();
    write(
        plugins.path(),
        "counter/index.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  tools: [{
    name: "count",
    run(_args, ctx) {
      ctx.progress("1 of 2");
      ctx.progress("2 of 2 \u001b[31mred");
      return "counted";
    },
  }],
});
"#,
    );
    let work = plugin_dir();
    write(
        work.path(),
        "script.json",
        r#"[{"tool_calls": [{"name": "count", "arguments": {}}]}, {"text": "done"}]"#,
    );
    let run = |json: bool| {
        let mut args = vec!["run", plugins.path().to_str().unwrap()];
        args.extend(["--prompt", "go", "--script", "script.json"]);
        if json {
            args.push("--json");
        }
        let (code, stdout, stderr) = yohost(&args, work.path());
        assert_eq!(code, Some(0), "{stdout}{stderr}");
        stdout
    };
    let stdout = run(false);
    let lines: Vec<&str> = stdout.lines().collect();
    let at = |line: &str| {
        lines
            .iter()
            .position(|l| *l == line)
            .unwrap_or_else(|| panic!("no line {line:?} in {stdout}"))
    };
    let called = at("-> count {}");
    assert_eq!(at(".. count 1 of 2"), called + 1);
    assert_eq!(at(".. count 2 of 2 \\u{1b}[31mred"), called + 2);
    assert_eq!(at("<- count [ok] counted"), called + 3);
    let stdout = run(true);
    let progress: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "progressMessage")
        .collect();
    assert_eq!(progress.len(), 2, "{stdout}");
    assert_eq!(progress[0]["text"], "1 of 2");
    assert_eq!(progress[0]["toolName"], "count");
}

#[test]
fn check_lists_rutis_agent_tools_and_refuses_a_malformed_library_with_the_reason() {
    let dir = plugin_dir();
    for example in ["rutis_fixture_tools", "rutis_fixture_duplicate"] {
        let lib = example_dylib(example);
        std::fs::copy(&lib, dir.path().join(lib.file_name().unwrap())).unwrap();
    }
    let (_, stdout, _) = yohost(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let tools = checked(&doc, "fixture-tools");
    assert_eq!(tools["status"], "loaded");
    assert_eq!(tools["engine"], "dylib");
    assert_eq!(tools["ecosystem"], "rutis-agent");
    assert_eq!(tools["hooks"], serde_json::json!(["tools", "call_tool"]));
    assert_eq!(
        tools["tools"],
        serde_json::json!(["shout", "fail", "live_strings", "hang", "garbled"])
    );
    let duplicate = checked(&doc, "rutis_fixture_duplicate");
    assert_eq!(duplicate["status"], "refused");
    assert_eq!(duplicate["ecosystem"], "rutis-agent");
    let reason = duplicate["reason"].as_str().unwrap();
    assert!(
        reason.contains("malformed tool schema: tools 0 and 1 are both named `twin`"),
        "{reason}"
    );
}

#[test]
fn check_lists_mcp_servers_with_their_tools_or_the_reason() {
    let dir = plugin_dir();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/mcp/tests/fixture/hostile.mjs");
    std::fs::create_dir_all(dir.path().join("servers")).unwrap();
    std::fs::copy(&fixture, dir.path().join("servers/hostile.mjs")).unwrap();
    let servers = serde_json::json!({"mcpServers": {
        "hostile": {"command": "node", "args": ["hostile.mjs"]},
        "remote": {"url": "http://127.0.0.1:9/mcp"},
    }});
    write(dir.path(), "servers/mcp.json", &servers.to_string());
    write(
        dir.path(),
        "servers/plugin.toml",
        "[capabilities]\nexec = true\n[servers.remote.capabilities]\nnetwork = [\"127.0.0.1\"]\n",
    );
    write(
        dir.path(),
        "lone.mcp.json",
        r#"{"mcpServers": {"lone": {"command": "node"}}}"#,
    );
    let (_, stdout, _) = yohost(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let hostile = checked(&doc, "hostile");
    assert_eq!(hostile["status"], "loaded", "{hostile}");
    assert_eq!(hostile["engine"], "mcp");
    assert_eq!(hostile["tools"][0], "say", "{hostile}");
    let remote = checked(&doc, "remote");
    assert_eq!(remote["status"], "loaded", "{remote}");
    assert!(
        remote["warnings"]
            .to_string()
            .contains("opens no connection"),
        "{remote}"
    );
    let lone = checked(&doc, "lone");
    assert_eq!(lone["status"], "refused");
    assert!(
        lone["reason"].as_str().unwrap().contains("exec = true"),
        "{lone}"
    );
}

/// Every file under `dir` with its contents, and every folder.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.to_string_lossy().into_owned();
        if path.is_dir() {
            out.push((name, Vec::new()));
            out.extend(tree(&path));
        } else {
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn the_demo_script_with_no_plugins_acts_only_inside_a_folder_it_makes() {
    let plugins = plugin_dir();
    let outer = plugin_dir();
    let cwd = outer.path().join("cwd");
    write(&cwd, "build/keep.txt", "the caller's build");
    write(&cwd, "motto.txt", "the caller's motto");
    let temp = plugin_dir();
    let before = tree(outer.path());
    let out = Command::new(env!("CARGO_BIN_EXE_yohost"))
        .args(["run", plugins.path().to_str().unwrap(), "--prompt", "go"])
        .current_dir(&cwd)
        .env("TMPDIR", temp.path())
        .output()
        .expect("yohost runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    // Unguarded, every call ran: in the demo's folder.
    let demo = temp.path().canonicalize().unwrap();
    assert!(
        stdout.contains(&format!("the demo acts in {}", demo.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("-> bash {\"command\":\"rm -rf ./build\"}"),
        "{stdout}"
    );
    assert!(stdout.contains("<- write_file [ok]"), "{stdout}");
    assert!(!stdout.contains("denied"), "{stdout}");
    assert_eq!(
        tree(outer.path()),
        before,
        "the caller's folders are untouched"
    );
    assert_eq!(
        tree(temp.path()),
        Vec::new(),
        "the demo's folder is removed"
    );
}

#[test]
fn check_prints_each_refusal_once_and_no_colours_when_not_on_a_terminal() {
    let dir = plugin_dir();
    write(dir.path(), "broken.so", "not a library");
    write(dir.path(), "no-hooks.ts", "export default {};");
    let (code, stdout, stderr) = yohost(&["check", dir.path().to_str().unwrap()], dir.path());
    assert_eq!(code, Some(1));
    let all = format!("{stdout}{stderr}");
    assert_eq!(all.matches("cannot load the library").count(), 1, "{all}");
    assert_eq!(all.matches("implements no hooks").count(), 1, "{all}");
    assert!(!all.contains('\x1b'), "{all:?}");
}

/// Each plugin's decision, in a run of four TypeScript plugins: a guard
/// that denies and rewrites, one whose deny gives no reason, and a filter.
const GUARD: &str = r#"
export default {
  before_tool({ tool, args }, ctx) {
    if (tool !== "bash") return null;
    if (args.command.includes("rm -rf")) {
      ctx.log.warn("judged a removal");
      return { deny: "no removals" };
    }
    if (args.command.includes("--force ")) {
      return { args: { command: args.command.replace("--force ", "--force-with-lease ") } };
    }
    return null;
  },
};
"#;
const BLANK: &str = r#"
export default {
  before_tool({ tool }) { return tool === "write_file" ? { deny: " " } : null; },
};
"#;
const SCRUB: &str = r#"
export default {
  after_tool({ output }, ctx) {
    const text = output.content.map((b) => b.text ?? "").join("");
    if (!text.includes("sk-")) return null;
    ctx.log.info("scrubbed a key");
    return { content: [{ type: "text", text: text.replace(/sk-\w+/g, "[key]") }] };
  },
};
"#;
const DECISIONS_SCRIPT: &str = r#"[
  {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf ./build"}}]},
  {"tool_calls": [{"name": "bash", "arguments": {"command": "echo git push --force origin"}}]},
  {"tool_calls": [{"name": "bash", "arguments": {"command": "echo sk-live1234567890"}}]},
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}]},
  {"text": "done"}
]"#;

fn decisions_dir() -> (tempfile::TempDir, tempfile::TempDir) {
    let plugins = plugin_dir();
    write(plugins.path(), "guard.ts", GUARD);
    write(plugins.path(), "blank.ts", BLANK);
    write(plugins.path(), "scrub.ts", SCRUB);
    let work = plugin_dir();
    write(work.path(), "script.json", DECISIONS_SCRIPT);
    (plugins, work)
}

#[test]
fn run_names_the_plugin_of_each_decision_after_the_call_it_concerns() {
    let (plugins, work) = decisions_dir();
    let (code, stdout, _) = run_script(plugins.path(), false, work.path());
    assert_eq!(code, Some(0), "{stdout}");
    let at = |wanted: &str| position(&stdout, wanted);
    let rm = at(r#"-> bash {"command":"rm -rf ./build"}"#);
    assert_eq!(at("  [guard warn run "), rm + 1, "{stdout}");
    assert_eq!(at("  guard denied bash: no removals"), rm + 2, "{stdout}");
    assert_eq!(at("<- bash [error] Tool call denied: no removals"), rm + 3);
    // The call as the model made it, then the rewrite and what ran.
    let push = at(r#"-> bash {"command":"echo git push --force origin"}"#);
    assert_eq!(
        at(r#"  guard rewrote bash to {"command":"echo git push --force-with-lease origin"}"#),
        push + 1,
        "{stdout}"
    );
    let key = at("<- bash [ok] Exit code: 0 ⏎ [key]");
    assert_eq!(at("  [scrub info run "), key + 1, "{stdout}");
    assert_eq!(at("  scrub edited the output of bash"), key + 2, "{stdout}");
    // A deny without a reason is a bad reply: the call is denied all the
    // same, in the host's words that name the plugin.
    let write_file = at("-> write_file ");
    assert_eq!(
        at("  blank denied write_file: [yohost] call denied: plugin 'blank' returned a reply the host cannot use in before_tool"),
        write_file + 1,
        "{stdout}"
    );
    assert!(!work.path().join("x.txt").exists());

    let (code, stdout, _) = run_script(plugins.path(), true, work.path());
    assert_eq!(code, Some(0), "{stdout}");
    let decisions: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|l| l.get("decision").cloned())
        .collect();
    let made: Vec<(&str, &str, &str)> = decisions
        .iter()
        .map(|d| {
            (
                d["plugin"].as_str().unwrap(),
                d["decision"].as_str().unwrap(),
                d["tool"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        made,
        [
            ("guard", "deny", "bash"),
            ("guard", "rewrite", "bash"),
            ("scrub", "edit_output", "bash"),
            ("blank", "deny", "write_file"),
        ]
    );
    assert_eq!(decisions[0]["reason"], "no removals");
    assert_eq!(
        decisions[1]["args"],
        serde_json::json!({"command": "echo git push --force-with-lease origin"})
    );
    assert!(decisions
        .iter()
        .all(|d| d["call_id"].as_str().is_some_and(|c| !c.is_empty())));
}

#[test]
fn check_lists_dsh_and_pi_plugins_with_their_tools_or_the_reason() {
    let dir = plugin_dir();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/dsh/tests/fixtures");
    for (name, file) in [("policy", "policy.js"), ("needs-model", "needs_model.js")] {
        let source = std::fs::read_to_string(fixtures.join(file)).unwrap();
        write(dir.path(), &format!("{name}/index.js"), &source);
        write(
            dir.path(),
            &format!("{name}/plugin.toml"),
            "ecosystem = \"dsh\"",
        );
    }
    write(
        dir.path(),
        "hello.ts",
        "import type { ExtensionAPI } from \"@earendil-works/pi-coding-agent\";\nexport default function (pi: ExtensionAPI) {\n  pi.registerTool({ name: \"hello\", execute: async () => ({ content: [] }) });\n}\n",
    );
    let (_, stdout, _) = yohost(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let policy = checked(&doc, "fixture-policy");
    assert_eq!(policy["status"], "loaded", "{policy}");
    assert_eq!(policy["ecosystem"], "dsh");
    assert_eq!(policy["tools"], serde_json::json!(["greet"]));
    let refused = checked(&doc, "needs-model");
    assert_eq!(refused["status"], "refused");
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains("needs `llm`, `sessions`, which the host does not provide"),
        "{reason}"
    );
    let pi = checked(&doc, "hello");
    assert_eq!(pi["status"], "loaded", "{pi}");
    assert_eq!(pi["ecosystem"], "pi");
    assert_eq!(pi["tools"], serde_json::json!(["hello"]));
}

/// The end of a pi extension's default function: a tool `noop`, so that
/// the extension has something the host calls.
macro_rules! noop_tool_and_end {
    () => {
        r#"  pi.registerTool({
    name: "noop",
    description: "does nothing",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
}"#
    };
}

/// A pi extension that writes a file and runs `touch` when its session
/// starts, and writes another when it shuts down.
const ACTS_AT_START: &str = concat!(
    r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { writeFileSync } from "node:fs";
export default function (pi: ExtensionAPI) {
  pi.on("session_start", async () => {
    writeFileSync("OUT/written.txt", "data");
    const touched = await pi.exec("touch", ["OUT/touched.txt"]);
    if (touched.code !== 0) throw new Error("touch failed");
  });
  pi.on("session_shutdown", () => writeFileSync("OUT/at-exit.txt", "bye"));
"#,
    noop_tool_and_end!()
);

#[test]
fn check_runs_no_process_and_writes_no_file_but_reports_both() {
    let plugins = plugin_dir();
    let out = plugin_dir();
    let out_dir = out.path().to_str().unwrap();
    write(
        plugins.path(),
        "acts/index.ts",
        &ACTS_AT_START.replace("OUT", out_dir),
    );
    write(
        plugins.path(),
        "acts/plugin.toml",
        &format!("[capabilities]\nexec = true\nwrite = [{out_dir:?}]\n"),
    );
    let (code, stdout, stderr) = yohost(
        &["check", "--json", plugins.path().to_str().unwrap()],
        out.path(),
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "a check wrote nothing and ran nothing"
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let warnings = doc["plugins"][0]["warnings"].to_string();
    assert!(
        warnings.contains(&format!(
            "node:fs would write 4 bytes to {out_dir}/written.txt"
        )),
        "{warnings}"
    );
    assert!(
        warnings.contains(&format!("would run `touch {out_dir}/touched.txt`")),
        "{warnings}"
    );

    // `yohost run` does what the check only reported.
    let script = plugin_dir();
    let script = write(script.path(), "script.json", r#"[{"text": "done"}]"#);
    let (code, stdout, stderr) = yohost(
        &[
            "run",
            plugins.path().to_str().unwrap(),
            "--prompt",
            "go",
            "--script",
            script.to_str().unwrap(),
        ],
        out.path(),
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    for file in ["written.txt", "touched.txt", "at-exit.txt"] {
        assert!(out.path().join(file).exists(), "{file}");
    }
}

/// A pi extension that, when its session starts, writes inside its grant
/// and outside it, and runs `touch` without the `exec` grant; the last two
/// must fail as they would in a run.
const WRITES_AND_RUNS: &str = concat!(
    r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { writeFileSync } from "node:fs";
export default function (pi: ExtensionAPI) {
  pi.on("session_start", async () => {
    writeFileSync("@IN@/granted.txt", "ok");
    try {
      writeFileSync("@OUT@/denied.txt", "no");
      throw new Error("a write outside the grants went through");
    } catch (e) {
      if (e.code !== "EACCES") throw e;
    }
    let ran = false;
    try {
      await pi.exec("touch", ["@IN@/touched.txt"]);
      ran = true;
    } catch {}
    if (ran) throw new Error("a process ran without the exec grant");
  });
"#,
    noop_tool_and_end!()
);

#[test]
fn check_reports_writes_and_processes_the_grants_would_deny_as_denied() {
    let plugins = plugin_dir();
    let granted = plugin_dir();
    let outside = plugin_dir();
    let (inside, out) = (
        granted.path().to_str().unwrap(),
        outside.path().to_str().unwrap(),
    );
    write(
        plugins.path(),
        "acts/index.ts",
        &WRITES_AND_RUNS
            .replace("@IN@", inside)
            .replace("@OUT@", out),
    );
    write(
        plugins.path(),
        "acts/plugin.toml",
        &format!("[capabilities]\nwrite = [{inside:?}]\n"),
    );
    let (code, stdout, stderr) = yohost(
        &["check", "--json", plugins.path().to_str().unwrap()],
        granted.path(),
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    for dir in [granted.path(), outside.path()] {
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "nothing done");
    }
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let acts = &doc["plugins"][0];
    assert_eq!(acts["status"], "loaded", "{acts}");
    let warnings: Vec<&str> = acts["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    let says = |what: &str| warnings.iter().any(|w| w.contains(what));
    assert!(
        says(&format!(
            "node:fs would write 2 bytes to {inside}/granted.txt"
        )),
        "{warnings:?}"
    );
    assert!(
        says(&format!(
            "node:fs would be denied: writing {out}/denied.txt is not granted"
        )),
        "{warnings:?}"
    );
    assert!(
        !says(&format!("would write 2 bytes to {out}/denied.txt")),
        "{warnings:?}"
    );
    assert!(
        says(&format!("`touch {inside}/touched.txt` would be denied")),
        "{warnings:?}"
    );
    assert!(
        !says(&format!("would run `touch {inside}/touched.txt`")),
        "{warnings:?}"
    );
}

/// A Rust plugin's `entry` under its folder's `target/` is found where
/// `CARGO_TARGET_DIR` makes cargo build it: the scaffold's `entry` works
/// under any target dir, and without the variable the error says to build.
#[test]
fn an_entry_under_target_is_found_where_cargo_target_dir_builds_it() {
    let dir = plugin_dir();
    let plugin = dir.path().join("policy");
    let name = format!(
        "{}rust_policy{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    write(
        &plugin,
        "plugin.toml",
        &format!("entry = \"target/debug/{name}\"\n"),
    );
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(elsewhere.path().join("debug")).unwrap();
    std::fs::copy(
        example_dylib("example_policy"),
        elsewhere.path().join("debug").join(&name),
    )
    .unwrap();
    let path = dir.path().to_str().unwrap();
    let moved = [(
        "CARGO_TARGET_DIR".to_string(),
        elsewhere.path().to_str().unwrap().to_string(),
    )];
    let (code, stdout, stderr) = yohost_with(&["check", path], dir.path(), &moved);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("loaded"), "{stdout}");
    let (code, stdout, _) = yohost_with(
        &["check", path],
        dir.path(),
        &[("CARGO_TARGET_DIR".to_string(), "/nowhere".to_string())],
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("which does not exist: build the plugin first"),
        "{stdout}"
    );
}
