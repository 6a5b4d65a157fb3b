//! DSH tool plugins on the Node engine, through a real `yoagent::Agent`,
//! with the published `@deepseek-ai/dsh-tool-*` 0.1.0-rc.8 packages as npm
//! installs them (`.ci/run`):
//! - each package's verdict is pinned: `todo` loads on the embedded engine,
//!   `bash` and `fs` go to Node under `engine = "auto"` (their imports need
//!   it), `web` is refused naming `web`, the service it needs;
//! - `bash` runs `echo` in the plugin's sandbox and returns DSH's own
//!   rendering; a file outside the write grant, or any command without
//!   `exec`, is DSH's sandbox denial; an escalation is rejected (no one to
//!   approve it); a background job it starts is gone once the run ends;
//! - `fs` reads and writes inside its grants and is denied outside them;
//! - every member of DSH's published service definitions (`ShellExecutor`,
//!   `ShellEnvRegistry`, `JobRegistry`, `FileSystem`, `ApprovalService`,
//!   `SandboxPolicyService`) is provided;
//! - a service no engine provides is named before any import is looked at,
//!   and a package whose peers are missing says what to run.

use crate::packages;
use crate::support;

use packages::{copy_tree, dsh_package};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::*;
use yohost::{PluginHost, Status};

/// A host over `dir` with the DSH adapters of both engines registered.
fn host(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_dsh::adapter())
        .adapter(yohost_adapter_dsh::node_adapter())
        .open()
        .expect("the directory opens")
}

/// The package `dsh-tool-<tool>` as a plugin of `dir`, copied from the
/// installed package folder (as `npm install` left it), with `manifest` as
/// its `plugin.toml`; `None` when it is not installed here.
fn install(dir: &Path, tool: &str, manifest: &str) -> Option<PathBuf> {
    let folder = dir.join(format!("dsh-tool-{tool}"));
    copy_tree(&dsh_package(tool)?, &folder);
    std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
    Some(folder)
}

/// A directory for grants, by its real path.
fn granted() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap();
    (dir, real)
}

/// `dsh-tool-bash` in `dir`, granted `exec` and a workspace to write in
/// (returned, by its real path).
fn bash_with_a_workspace(dir: &Path) -> Option<(tempfile::TempDir, PathBuf)> {
    let (guard, work) = granted();
    let manifest = format!(
        "[capabilities]\nexec = true\nwrite = [\"{}\"]\n",
        work.display()
    );
    install(dir, "bash", &manifest)?;
    Some((guard, work))
}

fn skip_without_node() -> bool {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return true;
    }
    false
}

#[tokio::test]
async fn each_published_package_has_its_verdict() {
    if skip_without_node() {
        return;
    }
    let dir = plugin_dir();
    if install(
        dir.path(),
        "todo",
        "[config]\nallowParallelInProgress = false\n",
    )
    .is_none()
    {
        return;
    }
    if install(dir.path(), "bash", "[capabilities]\nexec = true\n").is_none() {
        return;
    }
    if install(dir.path(), "fs", "").is_none() {
        return;
    }
    if install(dir.path(), "web", "[capabilities]\nnetwork = true\n").is_none() {
        return;
    }
    let report = host(dir.path()).report().await;

    let todo = reported(&report, "tool-todo");
    assert_eq!(todo.status, Status::Loaded, "{todo:?}");
    assert_eq!(todo.engine.as_deref(), Some("js"), "{todo:?}");
    assert_eq!(todo.routed, None);

    for (name, tools) in [
        ("tool-bash", vec!["bash"]),
        ("tool-fs", vec!["read", "write", "edit"]),
    ] {
        let entry = reported(&report, name);
        assert_eq!(entry.status, Status::Loaded, "{entry:?}");
        assert_eq!(entry.engine.as_deref(), Some("node"), "{entry:?}");
        assert_eq!(entry.ecosystem.as_deref(), Some("dsh"));
        assert_eq!(entry.tools, tools, "{entry:?}");
        let routed = entry.routed.clone().unwrap_or_default();
        assert!(
            routed.contains("a service its adapter provides only on Node"),
            "routed to Node for its services: {routed}"
        );
    }

    let web = reported(&report, "dsh-tool-web");
    assert_eq!(web.status, Status::Refused, "{web:?}");
    let reason = web.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("the DSH plugin needs `web`, which the host does not provide"),
        "the service is named, not an import: {reason}"
    );
    assert!(!reason.contains("node:module"), "{reason}");
}

#[tokio::test]
async fn bash_runs_echo_in_the_sandbox_and_returns_dshs_rendering() {
    if skip_without_node() {
        return;
    }
    let dir = plugin_dir();
    let (_outside, outside) = granted();
    let Some((_work, work)) = bash_with_a_workspace(dir.path()) else {
        return;
    };
    let host = host(dir.path());
    let bash = |command: &str| call("bash", json!({"command": command, "description": "Run it"}));
    let (agent, requests) = scripted(vec![
        bash("echo hello"),
        bash("echo out; echo err >&2; exit 3"),
        bash("pwd; echo made > here.txt"),
        bash(&format!("echo x > {}/escaped.txt", outside.display())),
        call(
            "bash",
            json!({"command": "cat /etc/shadow", "description": "Read it", "sandbox_permissions": "danger-full-access", "justification": "It needs the file."}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "run commands").await);
    assert_eq!(
        results[0],
        ("bash".to_string(), "hello\n".to_string(), false)
    );
    assert_eq!(results[1].1, "out\n[stderr]\nerr\n[exit code: 3]");
    assert_eq!(
        results[2].1,
        format!("{}\n", work.display()),
        "a command runs in the workspace, the write grant"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("here.txt")).unwrap(),
        "made\n"
    );
    let denied = &results[3].1;
    assert!(
        denied.contains("Permission denied")
            && denied.contains("[sandbox: file access denied under workspace-write mode]")
            && denied.contains("[exit code: 1]"),
        "a file outside the write grant is DSH's sandbox denial: {denied}"
    );
    assert!(!outside.join("escaped.txt").exists());
    assert_eq!(
        results[4],
        (
            "bash".to_string(),
            "Error: the user rejected escalating this command to \"danger-full-access\""
                .to_string(),
            true
        ),
        "an escalation is rejected: the host has no one to approve it"
    );
    // The tool's prompt section reaches the model.
    let first = format!("{:?}", requests.lock().unwrap()[0]);
    assert!(first.contains("Check the [exit code: N] marker"), "{first}");
}

#[tokio::test]
async fn without_exec_every_command_is_a_sandbox_denial() {
    if skip_without_node() {
        return;
    }
    let dir = plugin_dir();
    if install(dir.path(), "bash", "").is_none() {
        return;
    }
    let host = host(dir.path());
    let (agent, _) = scripted(vec![
        call(
            "bash",
            json!({"command": "echo hello", "description": "Say hello"}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "run").await);
    let (_, rendered, _) = &results[0];
    assert!(
        rendered.starts_with("[stderr]\nyohost: the plugin's manifest does not grant `exec`")
            && rendered.contains("[sandbox: file access denied under read-only mode]")
            && rendered.ends_with("[exit code: 126]"),
        "{rendered}"
    );
    assert!(!rendered.contains("hello\n"), "{rendered}");
}

#[tokio::test]
async fn a_background_job_is_gone_after_the_run() {
    if skip_without_node() {
        return;
    }
    let dir = plugin_dir();
    let Some((_work, _)) = bash_with_a_workspace(dir.path()) else {
        return;
    };
    let host = host(dir.path());
    // The job sleeps for a length no other process names.
    // Ten minutes, far past every bound below, so a job never killed (or a
    // run that waits for it) fails them however loaded the machine.
    let marker = format!("600.{}", std::process::id());
    let (agent, _) = scripted(vec![
        call(
            "bash",
            json!({"command": format!("echo $$ > job.pid; exec sleep {marker}"), "description": "Sleep", "run_in_background": true}),
        ),
        call(
            "bash",
            json!({"command": "while [ ! -s job.pid ]; do sleep 0.05; done; kill -0 $(cat job.pid) && cat job.pid", "description": "Check the job"}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let started = Instant::now();
    let results = tool_results(&run(&mut agent, "start a job").await);
    assert_eq!(
        results[0],
        (
            "bash".to_string(),
            "started background job bash-1".to_string(),
            false
        )
    );
    let _: u32 = results[1]
        .1
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the job runs during the run: {results:?}"));
    // Both bounds are far below the job's ten minutes, and generous, so a
    // loaded machine (CI beside other builds) does not fail them.
    assert_all_end(
        &marker,
        Duration::from_secs(30),
        "the job's process outlived the run",
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the run did not wait for the job"
    );
}

#[tokio::test]
async fn fs_reads_and_writes_inside_its_grants_and_is_denied_outside() {
    if skip_without_node() {
        return;
    }
    let dir = plugin_dir();
    let (_work, work) = granted();
    let (_docs, docs) = granted();
    let (_outside, outside) = granted();
    std::fs::write(docs.join("notes.txt"), "first\nsecond\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "hidden\n").unwrap();
    if install(
        dir.path(),
        "fs",
        &format!(
            "[capabilities]\nread = [\"{}\"]\nwrite = [\"{}\"]\n",
            docs.display(),
            work.display()
        ),
    )
    .is_none()
    {
        return;
    }
    let host = host(dir.path());
    let file = |p: &Path| p.display().to_string();
    let (agent, _) = scripted(vec![
        call("read", json!({"file_path": file(&docs.join("notes.txt"))})),
        call(
            "write",
            json!({"file_path": file(&work.join("a.txt")), "content": "one\ntwo\n"}),
        ),
        call("read", json!({"file_path": "a.txt"})),
        call(
            "edit",
            json!({"file_path": file(&work.join("a.txt")), "old_string": "two", "new_string": "three"}),
        ),
        call(
            "write",
            json!({"file_path": file(&outside.join("b.txt")), "content": "no"}),
        ),
        call(
            "write",
            json!({"file_path": file(&docs.join("notes.txt")), "content": "no"}),
        ),
        call(
            "read",
            json!({"file_path": file(&outside.join("secret.txt"))}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "files").await);
    assert_eq!(
        results[0].1,
        format!(
            "<path>{}</path>\n<type>file</type>\n<content>\n1: first\n2: second\n\n(End of file - total 2 lines)\n</content>",
            docs.join("notes.txt").display()
        )
    );
    assert!(
        !results[1].2 && results[1].1.contains("Created file"),
        "{results:?}"
    );
    assert!(
        results[2].1.contains("1: one\n2: two"),
        "a relative path is in the workspace: {results:?}"
    );
    assert!(!results[3].2, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(work.join("a.txt")).unwrap(),
        "one\nthree\n"
    );
    for denied in [&results[4], &results[5]] {
        assert!(
            denied.2
                && denied
                    .1
                    .starts_with("Error: [sandbox: file access denied under workspace-write mode]"),
            "a write outside the write grants is DSH's sandbox denial: {denied:?}"
        );
    }
    assert!(!outside.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(docs.join("notes.txt")).unwrap(),
        "first\nsecond\n"
    );
    assert!(
        results[6].2 && results[6].1.contains("outside the plugin's read grants"),
        "{results:?}"
    );
    assert!(!results[6].1.contains("hidden"));
}

#[tokio::test]
async fn a_service_no_engine_provides_is_named_before_any_import() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "needs-model/index.js",
        "import { gone } from \"@deepseek-ai/dsh-llm\";\nimport path from \"node:path\";\n\
         export const inject = [\"tools\", \"shell\", \"llm\", \"sessions\"];\n\
         export function apply() {}\n",
    );
    let report = host(dir.path()).report().await;
    let entry = reported(&report, "needs-model");
    assert_eq!(entry.status, Status::Refused, "{entry:?}");
    let reason = entry.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("the DSH plugin needs `llm`, `sessions`, which the host does not provide"),
        "{reason}"
    );
    assert!(
        !reason.contains("dsh-llm") && !reason.contains("node:path"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_package_whose_peers_are_missing_says_what_to_run() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "dsh-tool-old/package.json",
        &json!({
            "name": "@deepseek-ai/dsh-tool-old",
            "version": "0.0.1-rc.1",
            "type": "module",
            "main": "lib/index.js",
            "peerDependencies": {"@deepseek-ai/dsh-llm": "^0.0.1-rc.1", "@deepseek-ai/dsh-tools": "^0.0.1-rc.1"},
        })
        .to_string(),
    );
    write(
        dir.path(),
        "dsh-tool-old/lib/index.js",
        "import { assertNever } from \"@deepseek-ai/dsh-llm\";\n\
         export const inject = [\"tools\"];\nexport function apply() { assertNever; }\n",
    );
    std::fs::create_dir_all(dir.path().join("dsh-tool-old/node_modules")).unwrap();
    let report = host(dir.path()).report().await;
    let entry = &report[0];
    assert_eq!(entry.status, Status::Refused, "{entry:?}");
    let reason = entry.reason.clone().unwrap_or_default();
    assert!(
        reason.contains(
            "`@deepseek-ai/dsh-tool-old` 0.0.1-rc.1 names peer dependencies that are not installed"
        ) && reason
            .contains("`@deepseek-ai/dsh-llm@^0.0.1-rc.1`, `@deepseek-ai/dsh-tools@^0.0.1-rc.1`")
            && reason.contains("run `npm install --omit=dev` there")
            && reason.contains("`npm pack @deepseek-ai/dsh-tool-old@0.1.0-rc.8`"),
        "{reason}"
    );
}

/// The public members of `class` in a published `.d.ts` (its methods,
/// getters and fields; not private, static or the constructor).
fn declared_members(dts: &Path, class: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dts).unwrap();
    let start = text
        .find(&format!("class {class} extends Service {{"))
        .unwrap_or_else(|| panic!("{} declares {class}", dts.display()));
    let body = &text[start..];
    let body = &body[..body.find("\n}").unwrap()];
    let mut names = Vec::new();
    // How deep in brackets the line starts: members are at depth 0.
    let mut depth = 0i32;
    for line in body.lines().skip(1).map(str::trim) {
        if line.starts_with("/*") || line.starts_with('*') {
            continue;
        }
        let at = depth;
        depth += line.matches(['{', '(']).count() as i32 - line.matches(['}', ')']).count() as i32;
        let skipped = ["private ", "static ", "protected ", "constructor("];
        if at != 0 || line.is_empty() || skipped.iter().any(|p| line.starts_with(p)) {
            continue;
        }
        let mut rest = line;
        for prefix in ["readonly ", "abstract ", "get ", "set "] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

#[tokio::test]
async fn every_member_of_dshs_service_definitions_is_provided() {
    if skip_without_node() {
        return;
    }
    let (Some(bash), Some(fs)) = (dsh_package("bash"), dsh_package("fs")) else {
        return;
    };
    let types = |package: &Path, dep: &str| {
        package.join(format!(
            "node_modules/@deepseek-ai/{dep}/lib/types/index.d.ts"
        ))
    };
    let definitions = [
        ("shell", types(&bash, "dsh-shell"), "ShellExecutor"),
        (
            "shellEnv",
            types(&bash, "dsh-shell-env"),
            "ShellEnvRegistry",
        ),
        ("jobs", types(&bash, "dsh-jobs"), "JobRegistry"),
        ("fs", types(&fs, "dsh-fs"), "FileSystem"),
        (
            "approval",
            types(&bash, "dsh-user-approval"),
            "ApprovalService",
        ),
        (
            "sandboxPolicy",
            types(&bash, "dsh-sandbox-policy"),
            "SandboxPolicyService",
        ),
    ];
    // The fixture, in a copy of dsh-tool-fs (whose packages hold the
    // `FsError` that `fs` throws).
    let dir = plugin_dir();
    let folder = dir.path().join("surface");
    copy_tree(&fs, &folder);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/surface.js");
    std::fs::copy(fixture, folder.join("lib/index.js")).unwrap();
    std::fs::write(folder.join("plugin.toml"), "ecosystem = \"dsh\"\n").unwrap();
    let host = host(dir.path());
    let report = host.report().await;
    assert_eq!(report[0].status, Status::Loaded, "{report:?}");
    let (agent, _) = scripted(vec![call("surface", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "surface").await);
    let provided: serde_json::Value = serde_json::from_str(&results[0].1)
        .unwrap_or_else(|_| panic!("the fixture lists the services: {results:?}"));
    for (service, dts, class) in definitions {
        let members = declared_members(&dts, class);
        assert!(members.len() >= 3, "{class}: {members:?}");
        let have = provided[service].as_array().unwrap();
        for member in members {
            assert!(
                have.iter().any(|h| h == &json!(member)),
                "`{service}.{member}` ({class}, {}) is not provided",
                dts.display()
            );
        }
    }
}
