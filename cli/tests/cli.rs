//! The `yohost` command:
//! - `check --json` lists the example dylib plugins as loaded, and exits 0;
//! - a broken file in a directory is listed as refused with its reason,
//!   the rest load, and `check` exits 1;
//! - the bundled demo script, with no plugins at all, acts only inside a
//!   temporary folder the command makes and removes;
//! - `run` on the bundled script prints the run with plugin log lines that
//!   carry the run id, and `--json` prints one JSON object per line;
//! - `check` lists a rutis-agent tool library with its tools, and a
//!   malformed one as refused with the reason.
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
