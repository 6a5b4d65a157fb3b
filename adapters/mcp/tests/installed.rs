//! MCP servers as their READMEs start them (`npx -y NAME`, `uvx NAME`),
//! installed by `yohost add mcp:npm:…` and `mcp:pypi:…` (`.ci/run` adds
//! server-memory, server-sequential-thinking and mcp-server-git into
//! `<target>/tmp/added-mcp`), through a real `yoagent::Agent`:
//! - the added folders load as added, and as locked, starting the copies
//!   installed beside them: no launcher runs, so no network and no cache;
//! - the sequential-thinking server answers a call in its added folder;
//! - each README's own configuration (no version), beside an installed
//!   copy: the memory server keeps an entity between two calls in the file
//!   its README's `MEMORY_FILE_PATH` names, inside a write grant; the git
//!   server reads the repository it is granted and not one it is not;
//! - a launcher whose package is not in the folder, or is there at another
//!   version, refuses the server naming the `yohost add` to run, without
//!   starting anything; one whose "package" is a path out of the folder is
//!   refused as no package, and nothing out there is read or run.

mod common;
#[path = "../../../host/tests/support/mod.rs"]
mod support;

use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use support::*;
use yohost::{PluginHost, Status};

/// The folder `.ci/run` added the servers to.
fn added() -> PathBuf {
    installed("added-mcp", "yohost.lock")
}

/// What a plugin folder is made of: `servers` as a README writes them,
/// `installed` (`node_modules` or `venv`) of the added folder `from`
/// linked beside them, grants to read `from` and `reads`, and `extra`
/// lines under `[capabilities]`.
struct Beside<'a> {
    from: &'a str,
    installed: &'a str,
    servers: serde_json::Value,
    reads: &'a [&'a Path],
    extra: &'a str,
}

/// The plugin folder `name` in `dir`, made of `beside`.
fn beside_installed(dir: &Path, name: &str, beside: Beside) {
    let Beside {
        from,
        installed,
        servers,
        reads,
        extra,
    } = beside;
    let source = added().join(from);
    let reads: Vec<String> = std::iter::once(source.as_path())
        .chain(reads.iter().copied())
        .map(|p| p.display().to_string())
        .collect();
    folder(
        dir,
        name,
        servers,
        &format!("[capabilities]\nexec = true\nread = {reads:?}\n{extra}"),
    );
    std::os::unix::fs::symlink(source.join(installed), dir.join(name).join(installed)).unwrap();
}

#[tokio::test]
async fn added_servers_load_from_their_copies_as_added_and_as_locked() {
    for locked in [false, true] {
        let host = PluginHost::builder(added())
            .adapter(yohost_adapter_mcp::adapter())
            .locked(locked)
            .open()
            .expect("the directory opens");
        let report = host.report().await;
        for (name, tool) in [
            ("server-memory", "read_graph"),
            ("server-sequential-thinking", "sequentialthinking"),
            ("mcp-server-git", "git_status"),
        ] {
            let plugin = reported(&report, name);
            assert_eq!(
                plugin.status,
                Status::Loaded,
                "{name} (locked: {locked}): {plugin:?}"
            );
            assert!(
                plugin.tools.iter().any(|t| t == tool),
                "{name} lists {tool}: {:?}",
                plugin.tools
            );
        }
    }
    let servers = std::fs::read_to_string(added().join("server-memory/mcp.json")).unwrap();
    assert!(
        servers.contains(r#""npx""#)
            && servers.contains("@modelcontextprotocol/server-memory@2026.8.31"),
        "the added mcp.json starts it as its README does, pinned: {servers}"
    );
    let servers = std::fs::read_to_string(added().join("mcp-server-git/mcp.json")).unwrap();
    assert!(
        servers.contains(r#""uvx""#) && servers.contains("mcp-server-git@2026.10.19"),
        "{servers}"
    );
}

#[tokio::test]
async fn the_sequential_thinking_server_answers_in_its_added_folder() {
    let host = host(&added());
    let results = run_with(
        &host,
        vec![
            call(
                "sequentialthinking",
                json!({"thought": "first", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": true}),
            ),
            text("done"),
        ],
    )
    .await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        !results[0].2 && results[0].1.contains("\"thoughtNumber\": 1"),
        "{:?}",
        results[0]
    );
}

#[tokio::test]
async fn the_memory_server_as_its_readme_says_keeps_an_entity_in_its_granted_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let memory = data.path().join("memory.jsonl");
    beside_installed(
        dir.path(),
        "memory",
        Beside {
            from: "server-memory",
            installed: "node_modules",
            servers: json!({"memory": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-memory"],
                "env": {"MEMORY_FILE_PATH": memory}
            }}),
            reads: &[],
            extra: &format!("write = [{:?}]\n", data.path().display().to_string()),
        },
    );
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call(
                "create_entities",
                json!({"entities": [{"name": "yohost", "entityType": "project", "observations": ["hosts plugins"]}]}),
            ),
            call("open_nodes", json!({"names": ["yohost"]})),
            text("done"),
        ],
    )
    .await;
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(!results[0].2, "{:?}", results[0]);
    assert!(
        !results[1].2 && results[1].1.contains("hosts plugins"),
        "{:?}",
        results[1]
    );
    let kept = std::fs::read_to_string(&memory).expect("the server wrote its file");
    assert!(kept.contains("yohost"), "{kept}");
}

/// A git repository in `dir` with one commit of `file`.
fn repository(dir: &Path, file: &str) {
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {status:?}");
    };
    git(&["init", "--quiet"]);
    std::fs::write(dir.join(file), "text\n").unwrap();
    git(&["add", file]);
    git(&["commit", "--quiet", "-m", "first"]);
}

#[tokio::test]
async fn the_git_server_as_its_readme_says_reads_its_granted_repository_only() {
    let dir = tempfile::tempdir().unwrap();
    let granted = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    repository(granted.path(), "granted.txt");
    repository(other.path(), "other.txt");
    beside_installed(
        dir.path(),
        "git",
        Beside {
            from: "mcp-server-git",
            installed: "venv",
            servers: json!({"git": {"command": "uvx", "args": ["mcp-server-git"]}}),
            reads: &[granted.path()],
            extra: "",
        },
    );
    let host = host(dir.path());
    let results = run_with(
        &host,
        vec![
            call("git_log", json!({"repo_path": granted.path()})),
            call("git_log", json!({"repo_path": other.path()})),
            text("done"),
        ],
    )
    .await;
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        !results[0].2 && results[0].1.contains("first"),
        "the granted repository's log: {:?}",
        results[0]
    );
    assert!(
        results[1].2 && !results[1].1.contains("first"),
        "a repository outside the grants is not read: {:?}",
        results[1]
    );
}

#[tokio::test]
async fn a_launcher_whose_package_is_not_installed_or_differs_is_refused_naming_the_add() {
    let dir = tempfile::tempdir().unwrap();
    folder(
        dir.path(),
        "absent",
        json!({"absent": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-absent"]}}),
        "[capabilities]\nexec = true\n",
    );
    folder(
        dir.path(),
        "python",
        json!({"python": {"command": "uvx", "args": ["mcp-server-fetch"]}}),
        "[capabilities]\nexec = true\n",
    );
    beside_installed(
        dir.path(),
        "older",
        Beside {
            from: "server-memory",
            installed: "node_modules",
            servers: json!({"older": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2025.1.1"]}}),
            reads: &[],
            extra: "",
        },
    );
    // An attacker's entry: a "package" that is a path out of the folder,
    // to a package.json and a program beside the plugin directory.
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "pkg/package.json",
        r#"{"version": "1.0.0", "bin": "run.js"}"#,
    );
    write(
        outside.path(),
        "pkg/run.js",
        "require('fs').writeFileSync(process.argv[1] + '.ran', '')\n",
    );
    let climb = format!("../../../../../../../..{}/pkg", outside.path().display());
    folder(
        dir.path(),
        "escape",
        json!({"escape": {"command": "npx", "args": ["-y", climb]}}),
        "[capabilities]\nexec = true\n",
    );
    std::fs::create_dir_all(dir.path().join("escape/node_modules")).unwrap();
    let host = host(dir.path());
    let report = host.report().await;
    let reason = |name: &str| {
        let plugin = reported(&report, name);
        assert_eq!(plugin.status, Status::Refused, "{plugin:?}");
        plugin.reason.clone().unwrap_or_default()
    };
    assert!(
        reason("absent")
            .contains("yohost add mcp:npm:@modelcontextprotocol/server-absent --to DIR"),
        "{}",
        reason("absent")
    );
    assert!(
        reason("escape").contains("names no package"),
        "a path is no package name: {}",
        reason("escape")
    );
    assert!(!outside.path().join("pkg/run.js.ran").exists());
    assert!(
        reason("python").contains("yohost add mcp:pypi:mcp-server-fetch"),
        "{}",
        reason("python")
    );
    assert!(
        reason("older").contains(
            "asks for @modelcontextprotocol/server-memory 2025.1.1, and 2026.8.31 is installed"
        ),
        "{}",
        reason("older")
    );
}
