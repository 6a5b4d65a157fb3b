//! `yohost add`, `lock`, `check --locked` and `remove`, each through a real
//! `yohost` process:
//! - `add` of a local pi package folder and of its `.tgz` installs it with
//!   its devDependencies dropped, a `plugin.toml` with the grants its
//!   sources need, an entry in `yohost.lock`, and ends with its `check`
//!   line: loaded;
//! - off a terminal, a package that needs `exec` is not added without
//!   `--allow-exec`, and nothing is left behind;
//! - `check --locked` accepts the directory as locked, and refuses a changed
//!   file, an added file and a plugin the lock does not list, naming each;
//!   `yohost lock` records the directory as it is;
//! - `remove` takes the plugin and its lock entry away.

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::*;
use std::path::Path;
use std::process::Command;
use support::*;

/// A pi package: one extension whose tool fetches, and devDependencies that
/// name a package nobody published.
fn pi_package(dir: &Path, name: &str) {
    write(
        dir,
        "package.json",
        &format!(
            r#"{{"name": "@someone/{name}", "version": "1.2.3", "type": "module",
  "pi": {{"extensions": ["./index.ts"]}},
  "devDependencies": {{"never-published-anywhere": "9.9.9"}}}}"#
        ),
    );
    write(
        dir,
        "index.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "fetch_page",
    description: "fetches a page",
    parameters: { type: "object", properties: {} },
    async execute() {
      const page = await fetch("https://example.org");
      return { content: [{ type: "text", text: await page.text() }] };
    },
  });
}
"#,
    );
}

fn checked_json(dir: &Path, locked: bool) -> (Option<i32>, serde_json::Value) {
    let path = dir.to_str().unwrap();
    let mut args = vec!["check", "--json", path];
    if locked {
        args.push("--locked");
    }
    let (code, stdout, stderr) = yohost(&args, dir);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, doc)
}

#[test]
fn add_installs_a_folder_and_a_tgz_locked_and_remove_takes_them_away() {
    let top = plugin_dir();
    let source = top.path().join("src/hello");
    pi_package(&source, "hello");
    let plugins = top.path().join("plugins");
    let to = plugins.to_str().unwrap();

    // Off a terminal, the grant it needs must be given.
    let spec = source.to_str().unwrap();
    let (code, stdout, stderr) = yohost(&["add", spec, "--to", to], top.path());
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("network: index.ts uses `fetch(`"),
        "{stdout}"
    );
    assert!(stderr.contains("--allow-network"), "{stderr}");
    assert_eq!(std::fs::read_dir(&plugins).unwrap().count(), 0);

    let (code, stdout, _) = yohost(&["add", spec, "--to", to, "--allow-network"], top.path());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.ends_with("hello (js, pi): loaded; hooks tools, call_tool; tools fetch_page\n"),
        "{stdout}"
    );
    let manifest = std::fs::read_to_string(plugins.join("hello/plugin.toml")).unwrap();
    assert!(manifest.contains("name = \"hello\""), "{manifest}");
    assert!(manifest.contains("ecosystem = \"pi\""), "{manifest}");
    assert!(manifest.contains("network = true"), "{manifest}");
    let package = std::fs::read_to_string(plugins.join("hello/package.json")).unwrap();
    assert!(!package.contains("devDependencies"), "{package}");

    // The same package as npm packs it.
    let packed = top.path().join("packed");
    std::fs::create_dir_all(packed.join("package")).unwrap();
    pi_package(&packed.join("package"), "hello-packed");
    let tgz = top.path().join("hello-packed-1.2.3.tgz");
    let tar = Command::new("tar")
        .arg("czf")
        .arg(&tgz)
        .arg("-C")
        .arg(&packed)
        .arg("package")
        .status()
        .unwrap();
    assert!(tar.success());
    let (code, stdout, _) = yohost(
        &["add", tgz.to_str().unwrap(), "--to", to, "--allow-network"],
        top.path(),
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("hello-packed (js, pi): loaded"), "{stdout}");

    let lock = std::fs::read_to_string(plugins.join("yohost.lock")).unwrap();
    assert!(
        lock.contains(&format!("source = \"path:{}\"", source.display())),
        "{lock}"
    );
    assert!(
        lock.contains(&format!("source = \"path:{}\"", tgz.display())),
        "{lock}"
    );
    let (code, doc) = checked_json(&plugins, true);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(checked(&doc, "hello")["status"], "loaded", "{doc}");

    let (code, stdout, _) = yohost(&["remove", "hello", "--from", to], top.path());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!plugins.join("hello").exists());
    let lock = std::fs::read_to_string(plugins.join("yohost.lock")).unwrap();
    assert!(!lock.contains("name = \"hello\""), "{lock}");
    assert!(lock.contains("name = \"hello-packed\""), "{lock}");
    let (code, doc) = checked_json(&plugins, true);
    assert_eq!(code, Some(0), "{doc}");
}

#[test]
fn a_package_that_starts_processes_needs_allow_exec_off_a_terminal() {
    let top = plugin_dir();
    let source = top.path().join("runner");
    write(
        &source,
        "index.ts",
        "import { execSync } from \"node:child_process\";\nexport default { before_tool() { execSync(\"true\"); return null; } };\n",
    );
    let plugins = top.path().join("plugins");
    let args = [
        "add",
        source.to_str().unwrap(),
        "--to",
        plugins.to_str().unwrap(),
        "--yes",
    ];
    let (code, stdout, stderr) = yohost(&args, top.path());
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("exec: index.ts uses `child_process`"),
        "{stdout}"
    );
    assert!(stderr.contains("--allow-exec"), "{stderr}");
    assert!(!plugins.join("runner").exists());
}

const POLICY: &str = "export default { before_tool() { return null; } };\n";

#[test]
fn check_locked_names_a_changed_file_an_added_file_and_an_unlisted_plugin() {
    let plugins = plugin_dir();
    let dir = plugins.path();
    write(dir, "guard/index.ts", POLICY);
    write(dir, "guard/lib/rules.ts", "export const rules = [];\n");
    write(dir, "single.ts", POLICY);
    let (code, stdout, _) = yohost(&["lock", dir.to_str().unwrap()], dir);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("2 plugins in"), "{stdout}");
    let (code, doc) = checked_json(dir, true);
    assert_eq!(code, Some(0), "unchanged is accepted: {doc}");

    write(
        dir,
        "guard/lib/rules.ts",
        "export const rules = [\"changed\"];\n",
    );
    write(dir, "guard/lib/more.ts", "export const more = 1;\n");
    write(dir, "newcomer.ts", POLICY);
    let (code, doc) = checked_json(dir, true);
    assert_eq!(code, Some(1), "{doc}");
    let reason = |name: &str| checked(&doc, name)["reason"].as_str().unwrap().to_string();
    let guard = reason("guard");
    assert!(
        guard.contains(
            "its files differ from yohost.lock: lib/more.ts was added, lib/rules.ts changed"
        ),
        "{guard}"
    );
    let newcomer = reason("newcomer");
    assert!(
        newcomer.contains("`newcomer` is not in yohost.lock"),
        "{newcomer}"
    );
    assert_eq!(checked(&doc, "single")["status"], "loaded", "{doc}");
    // Unlocked, all of them load.
    let (code, _) = checked_json(dir, false);
    assert_eq!(code, Some(0));
}
