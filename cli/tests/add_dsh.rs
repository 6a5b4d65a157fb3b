//! DSH's published tool packages, added with `yohost add` and run with
//! `yohost run` on the scripted model, each through a real `yohost`
//! process; npm installs their dependencies from a registry on the loopback
//! address that serves the installed copies (`.ci/run` installs them), so
//! no test needs the internet:
//! - `dsh-tool-bash` is asked `exec` for (its shell service), runs `echo`
//!   in its sandbox in a default `yohost run`, where a write outside its
//!   grants fails, and the built-in `bash` is not offered: the model is
//!   offered DSH's;
//! - `dsh-tool-fs` is asked `write` of the working directory (its `fs`
//!   service works there), and its tools then read and write that folder
//!   and nothing outside it; run in the root, `add` infers no such grant
//!   and adds nothing.

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::registry::{packed, LocalRegistry};
use common::*;
use std::path::{Path, PathBuf};
use support::*;

/// The installed package `dsh-tool-<tool>`, or `None` (with a note) when
/// it is not installed here.
fn installed(tool: &str) -> Option<PathBuf> {
    let folder =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dsh-packages/dsh-tool-{tool}"));
    if folder.join("node_modules").is_dir() {
        Some(folder)
    } else {
        eprintln!(
            "skipped: {} is not installed (.ci/run installs it)",
            folder.display()
        );
        None
    }
}

/// The package `installed` packed as npm publishes it, as `NAME.tgz` in
/// `dir`, and the environment under which `add` installs its dependencies
/// from a registry that serves them.
fn published(installed: &Path, dir: &Path) -> (PathBuf, Vec<(String, String)>) {
    let name = installed.file_name().unwrap().to_string_lossy();
    let tgz = dir.join(format!("{name}.tgz"));
    std::fs::write(&tgz, packed(installed)).unwrap();
    let registry = LocalRegistry::serving(&[installed]);
    (tgz, registry.env(&dir.join("npm-cache")))
}

/// The `[capabilities]` of the plugin.toml that `add` wrote in `plugin`.
fn capabilities(plugin: &Path) -> toml::Table {
    let text = std::fs::read_to_string(plugin.join("plugin.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    manifest["capabilities"].as_table().unwrap().clone()
}

/// The JSON lines of a `yohost run --json`.
fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The text of each tool result of a run's JSON lines, and whether it is
/// an error, in order.
fn results(lines: &[serde_json::Value]) -> Vec<(String, bool)> {
    lines
        .iter()
        .filter(|l| l["type"] == "toolExecutionEnd")
        .map(|l| {
            let text = l["result"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("");
            (text, l["isError"] == true)
        })
        .collect()
}

/// The last text the model gave in a run's JSON lines: a `list_tools`
/// turn's list of the tools offered.
fn last_text(lines: &[serde_json::Value]) -> String {
    lines
        .iter()
        .filter(|l| l["type"] == "messageEnd" && l["message"]["role"] == "assistant")
        .filter_map(|l| l["message"]["content"][0]["text"].as_str())
        .next_back()
        .unwrap_or_else(|| panic!("no text of the model: {lines:?}"))
        .to_string()
}

#[test]
fn dsh_bash_added_with_yohost_add_runs_echo_sandboxed_and_the_built_in_bash_is_not_offered() {
    let Some(bash) = installed("bash") else {
        return;
    };
    let top = plugin_dir();
    let (tgz, env) = published(&bash, top.path());
    let plugins = top.path().join("plugins");
    let add = [
        "add",
        tgz.to_str().unwrap(),
        "--to",
        plugins.to_str().unwrap(),
    ];

    // Off a terminal, the grant it needs must be given.
    let (code, stdout, stderr) = yohost_with(&add, top.path(), &env);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("  exec: lib/index.js uses `@deepseek-ai/dsh-shell`"),
        "add infers that DSH's bash starts processes: {stdout}"
    );
    assert!(stderr.contains("--allow-exec"), "{stderr}");
    assert!(!plugins.join("dsh-tool-bash").exists());

    let (code, stdout, stderr) =
        yohost_with(&[&add[..], &["--allow-exec"]].concat(), top.path(), &env);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("dsh-tool-bash (node, dsh): loaded"),
        "{stdout}"
    );
    assert_eq!(
        capabilities(&plugins.join("dsh-tool-bash")),
        toml::toml! { exec = true },
        "exec and nothing else"
    );

    // A folder outside its grants, which its shell may not write.
    let outside = top.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let escape = outside.join("escape.txt");
    let call = |command: &str| {
        serde_json::json!({"tool_calls": [{"name": "bash", "arguments": {
            "command": command, "description": "Run a command"}}]})
    };
    let script = serde_json::json!([
        call("echo from-the-shell"),
        call(&format!("echo escaped > {}", escape.display())),
        {"list_tools": true},
    ]);
    write(top.path(), "script.json", &script.to_string());
    let (code, stdout, stderr) = run_script(&plugins, true, top.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let lines = json_lines(&stdout);
    let replaced: Vec<_> = lines
        .iter()
        .filter_map(|l| l.get("replaces_builtin"))
        .collect();
    assert_eq!(
        replaced,
        [&serde_json::json!({"plugin": "dsh-tool-bash", "tool": "bash"})]
    );
    let results = results(&lines);
    assert_eq!(results.len(), 2, "{stdout}");
    assert_eq!(
        results[0],
        ("from-the-shell\n".to_string(), false),
        "DSH's bash ran echo and rendered its output as DSH does (no exit code line): {stdout}"
    );
    assert!(
        results[1]
            .0
            .contains("[sandbox: file access denied under read-only mode]"),
        "a write outside its grants is denied in the sandbox: {:?}",
        results[1]
    );
    assert!(!escape.exists(), "the shell wrote outside its grants");

    // The model was offered DSH's bash, once, and not yoagent's.
    let offered = last_text(&lines);
    let bashes: Vec<&str> = offered
        .lines()
        .filter(|l| l.starts_with("bash: "))
        .collect();
    assert_eq!(bashes.len(), 1, "{offered}");
    assert!(
        bashes[0].starts_with("bash: Execute a bash command (`bash -c`)"),
        "DSH's description: {offered}"
    );
    let builtin = yoagent::tools::default_tools()
        .into_iter()
        .find(|t| t.name() == "bash")
        .unwrap();
    assert!(
        !offered.contains(builtin.description()),
        "the built-in bash is not offered: {offered}"
    );
    assert!(
        offered.contains("read_file: "),
        "the other built-ins are: {offered}"
    );

    // `check` says so too.
    let dir = plugins.to_str().unwrap();
    let (_, stdout, _) = yohost(&["check", dir], top.path());
    assert!(
        stdout.contains("    replaces the built-in tool bash of `yohost run`"),
        "{stdout}"
    );
    let (_, stdout, _) = yohost(&["check", "--json", dir], top.path());
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        doc["replaces_builtins"],
        serde_json::json!([{"plugin": "dsh-tool-bash", "tool": "bash"}])
    );
}

/// The results of `dsh-tool-fs`'s tools in a run of `plugins` in
/// `project`: reading `notes.txt` there, writing `made.txt`, editing
/// `notes.txt`, reading `secret` and writing `out`, both outside it.
fn fs_results(plugins: &Path, project: &Path, secret: &Path, out: &Path) -> Vec<(String, bool)> {
    write(project, "notes.txt", "first\nsecond\n");
    let call = |name: &str, arguments: serde_json::Value| serde_json::json!({"tool_calls": [{"name": name, "arguments": arguments}]});
    let path = |p: &Path| p.display().to_string();
    let script = serde_json::json!([
        call("read", serde_json::json!({"file_path": "notes.txt"})),
        call("write", serde_json::json!({"file_path": "made.txt", "content": "made\n"})),
        call("edit", serde_json::json!({"file_path": "notes.txt", "old_string": "second", "new_string": "third"})),
        call("read", serde_json::json!({"file_path": path(secret)})),
        call("write", serde_json::json!({"file_path": path(out), "content": "no"})),
        {"text": "done"},
    ]);
    write(project, "script.json", &script.to_string());
    let (code, stdout, stderr) = run_script(plugins, true, project);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let results = results(&json_lines(&stdout));
    assert_eq!(results.len(), 5, "{stdout}");
    assert!(
        !results[0].1 && results[0].0.contains("1: first\n2: second"),
        "it reads its working folder: {results:?}"
    );
    assert!(
        results[3].1 && results[3].0.contains("outside the plugin's read grants"),
        "it reads nothing outside: {results:?}"
    );
    assert!(!results[3].0.contains("hidden"), "{results:?}");
    assert!(!out.exists(), "it wrote outside its working folder");
    results
}

/// Whether `result` is DSH's sandbox denial under `mode`.
fn denied(result: &(String, bool), mode: &str) -> bool {
    result.1
        && result
            .0
            .contains(&format!("[sandbox: file access denied under {mode} mode]"))
}

#[test]
fn dsh_fs_added_with_yohost_add_gets_the_working_directory_and_works_there_only() {
    let Some(fs) = installed("fs") else {
        return;
    };
    let top = plugin_dir();
    let (tgz, env) = published(&fs, top.path());
    let project = top.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let real = project.canonicalize().unwrap().display().to_string();
    let secret = write(top.path(), "secret.txt", "hidden\n");
    let out = top.path().join("out.txt");
    let add = |plugins: &Path, flags: &[&str], cwd: &Path| {
        let mut args = vec![
            "add",
            tgz.to_str().unwrap(),
            "--to",
            plugins.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        yohost_with(&args, cwd, &env)
    };
    let because = "lib/index.js injects DSH's `fs` service: its tools read and write files in the working directory";

    // A plugin directory outside the working folder: the folder is granted
    // for writing. Off a terminal, `--yes` gives it.
    let outer = top.path().join("plugins");
    let (code, stdout, stderr) = add(&outer, &[], &project);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("  write {real}: {because}\n")),
        "{stdout}"
    );
    assert!(!stdout.contains("  exec"), "{stdout}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert!(!outer.join("dsh-tool-fs").exists());
    let (code, stdout, stderr) = add(&outer, &["--yes"], &project);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("dsh-tool-fs (node, dsh): loaded"),
        "{stdout}"
    );
    let granted = real.clone();
    assert_eq!(
        capabilities(&outer.join("dsh-tool-fs")),
        toml::toml! { write = [granted] },
        "write of the working folder and nothing else"
    );
    let results = fs_results(&outer, &project, &secret, &out);
    assert!(!results[1].1 && !results[2].1, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(project.join("made.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).unwrap(),
        "first\nthird\n"
    );
    assert!(denied(&results[4], "workspace-write"), "{results:?}");

    // The plugin directory inside the working folder, as `add` makes it by
    // default: the host refuses a write grant there, so it is read.
    std::fs::remove_file(project.join("made.txt")).unwrap();
    let inner = project.join("plugins");
    let (code, stdout, stderr) = add(&inner, &["--yes"], &project);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("  read {real}: {because}, but only to read: a plugin may not write where its plugin directory is")),
        "{stdout}"
    );
    assert!(
        stdout.contains("dsh-tool-fs (node, dsh): loaded"),
        "{stdout}"
    );
    let granted = real.clone();
    assert_eq!(
        capabilities(&inner.join("dsh-tool-fs")),
        toml::toml! { read = [granted] },
    );
    let results = fs_results(&inner, &project, &secret, &out);
    for written in [&results[1], &results[2]] {
        assert!(denied(written, "read-only"), "{results:?}");
    }
    assert!(!project.join("made.txt").exists());
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).unwrap(),
        "first\nsecond\n"
    );

    // Run in the root, there is no folder to infer: nothing is added.
    let (code, stdout, stderr) = add(&top.path().join("elsewhere"), &["--yes"], Path::new("/"));
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("in the working directory, and that is /: run `yohost add` in the folder"),
        "{stderr}"
    );
    assert!(!top.path().join("elsewhere/dsh-tool-fs").exists());
}
