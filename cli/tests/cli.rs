//! The `yohost` command:
//! - `check --json` lists the example dylib plugins as loaded, and exits 0;
//! - a broken file in a directory is listed as refused with its reason,
//!   the rest load, and `check` exits 1;
//! - `run` on the bundled script prints the run with plugin log lines that
//!   carry the run id, and `--json` prints one JSON object per line;
//! - `check` lists a rutis-agent tool library with its tools, and a
//!   malformed one as refused with the reason;
//! - `check` lists a DSH tool plugin with its tools, one that needs
//!   services the adapter lacks as refused naming them, and a pi extension
//!   with its tools.
//!
//! The plugins are the example cdylibs of the `yohost` and
//! `yohost-adapter-rutis-agent` packages, which `cargo test --workspace`
//! builds (alone: `cargo build -p yohost -p yohost-adapter-rutis-agent --examples`).

#[path = "../../host/tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use support::*;

fn yohost(args: &[&str], cwd: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_yohost"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("yohost runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn dylib_dir() -> tempfile::TempDir {
    let dir = plugin_dir();
    for (name, example) in [
        ("rust-policy", "example_policy"),
        ("rust-tool", "example_tool"),
    ] {
        let lib = example_dylib(example);
        write(
            dir.path(),
            &format!("{name}/plugin.toml"),
            &format!("entry = {:?}", lib.display().to_string()),
        );
    }
    dir
}

#[test]
fn check_json_lists_loaded_and_refused_plugins_with_reasons() {
    let dir = dylib_dir();
    write(dir.path(), "broken.so", "not a library");
    write(dir.path(), "mystery.xyz", "?");
    let (ok, stdout) = yohost(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    assert!(!ok, "a refused plugin makes `check` fail");
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
    let (ok, stdout) = yohost(
        &["run", dir.path().to_str().unwrap(), "--prompt", "go"],
        work.path(),
    );
    assert!(ok, "{stdout}");
    assert!(stdout.contains("-> word_count"), "{stdout}");
    assert!(
        stdout.contains("<- bash [error] Tool call denied: rust-policy"),
        "{stdout}"
    );
    assert!(stdout.contains("[rust-tool info run "), "{stdout}");

    let (ok, stdout) = yohost(
        &[
            "run",
            dir.path().to_str().unwrap(),
            "--prompt",
            "go",
            "--json",
        ],
        work.path(),
    );
    assert!(ok);
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
fn check_lists_rutis_agent_tools_and_refuses_a_malformed_library_with_the_reason() {
    let dir = plugin_dir();
    for example in ["rutis_fixture_tools", "rutis_fixture_duplicate"] {
        let lib = example_dylib(example);
        std::fs::copy(&lib, dir.path().join(lib.file_name().unwrap())).unwrap();
    }
    let (_, stdout) = yohost(
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
fn check_lists_dsh_and_pi_plugins_with_their_tools_or_the_reason() {
    let dir = plugin_dir();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/dsh/tests/fixtures");
    for (name, file) in [("policy", "policy.js"), ("needs-shell", "needs_shell.js")] {
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
    let (_, stdout) = yohost(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let policy = checked(&doc, "fixture-policy");
    assert_eq!(policy["status"], "loaded", "{policy}");
    assert_eq!(policy["ecosystem"], "dsh");
    assert_eq!(policy["tools"], serde_json::json!(["greet"]));
    let refused = checked(&doc, "needs-shell");
    assert_eq!(refused["status"], "refused");
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains("needs `shell`, `jobs`, which the host does not provide"),
        "{reason}"
    );
    let pi = checked(&doc, "hello");
    assert_eq!(pi["status"], "loaded", "{pi}");
    assert_eq!(pi["ecosystem"], "pi");
    assert_eq!(pi["tools"], serde_json::json!(["hello"]));
}
