//! File grants, through a real `yoagent::Agent`, for the plugins that use
//! them (yohost's `fs` and pi's `node:fs`) and for every engine at load:
//! - a symlink inside a grant leads nowhere outside it: not one that
//!   dangles (a write through it would create a file outside), not a folder
//!   swapped for a symlink while a plugin reads through it thousands of
//!   times;
//! - a FIFO in a granted folder neither blocks the engine nor is read, and
//!   a file over the read limit is refused;
//! - a granted directory that does not exist refuses the plugin in every
//!   engine (JavaScript, pi, Wasm, Python, dylib), naming the grant and the
//!   path, and the other plugins still load;
//! - yohost's relative paths start at the plugin's folder (`ctx.pluginDir`),
//!   `fs.exists` is false for what is missing or not granted, and errors
//!   name the module the plugin imported (`yohost` or `node:fs`).

use crate::support;
use crate::wasm_guests;

use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use support::*;
use yohost::{PluginHost, Status};

/// A yohost plugin that runs a file operation named by an `echo` call's
/// text (`op|path|data`) and denies the call with the outcome.
const FILES: &str = r#"import { definePlugin, fs } from "yohost";
export default definePlugin({
  before_tool({ tool, args }, ctx) {
    if (tool !== "echo") return null;
    const [op, path = "", data = ""] = String(args.text).split("|");
    try {
      switch (op) {
        case "read": return { deny: `read: ${fs.readText(path)}` };
        case "write": fs.writeText(path, data); return { deny: "wrote" };
        case "exists": return { deny: `exists: ${fs.exists(path)}` };
        case "list": return { deny: `list: ${fs.list(path).join(",")}` };
        case "dir": return { deny: `dir: ${ctx.pluginDir}` };
        case "race": {
          let leaked = 0, read = 0, failed = 0;
          for (let i = 0; i < Number(data); i++) {
            try {
              if (fs.readText(path) === "secret") leaked++; else read++;
            } catch (_) {
              failed++;
            }
          }
          return { deny: `leaked ${leaked} read ${read} failed ${failed}` };
        }
      }
      return { deny: `unknown ${op}` };
    } catch (e) {
      return { deny: `error ${e.code}: ${e.message}` };
    }
  },
});
"#;

/// The same operations through pi's `node:fs`, as a tool `fs` whose `text`
/// argument is `op|path|data`.
const PI_FILES: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "fs",
    description: "file operations",
    parameters: { type: "object", properties: { text: { type: "string" } } },
    async execute(_id, params) {
      const [op, path = "", data = ""] = String(params.text).split("|");
      let text;
      try {
        if (op === "read") text = `read: ${readFileSync(path)}`;
        else if (op === "write") { writeFileSync(path, data); text = "wrote"; }
        else text = `exists: ${existsSync(path)}`;
      } catch (e) {
        text = `error ${e.code}: ${e.message}`;
      }
      return { content: [{ type: "text", text }] };
    },
  });
}
"#;

/// Install the yohost files plugin as `dir/files` with `capabilities`.
fn install_files(dir: &Path, capabilities: &str) {
    write(dir, "files/index.ts", FILES);
    write(
        dir,
        "files/plugin.toml",
        &format!("[timeouts]\nbefore_tool = 60000\n[capabilities]\n{capabilities}"),
    );
}

/// The files plugin's answer to each operation, all in one run.
async fn ask(host: &PluginHost, ops: &[&str]) -> Vec<String> {
    let mut script: Vec<_> = ops
        .iter()
        .map(|op| call("echo", json!({ "text": op })))
        .collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
        .into_iter()
        .map(|(_, text, _)| text.trim_start_matches("Tool call denied: ").to_string())
        .collect()
}

/// A host over `dir` with the pi adapter registered.
fn open(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .open()
        .unwrap()
}

/// The pi files plugin's answer to each operation.
async fn ask_pi(host: &PluginHost, ops: &[&str]) -> Vec<String> {
    let mut script: Vec<_> = ops
        .iter()
        .map(|op| call("fs", json!({ "text": op })))
        .collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
        .into_iter()
        .map(|(_, text, _)| text)
        .collect()
}

#[cfg(unix)]
#[tokio::test]
async fn a_dangling_symlink_in_a_grant_writes_nothing_outside_it() {
    let dir = plugin_dir();
    let outside = plugin_dir();
    install_files(dir.path(), "write = [\"out\"]");
    write(dir.path(), "pi/index.ts", PI_FILES);
    write(
        dir.path(),
        "pi/plugin.toml",
        "[capabilities]\nwrite = [\"out\"]",
    );
    for plugin in ["files", "pi"] {
        std::fs::create_dir_all(dir.path().join(plugin).join("out")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join(format!("{plugin}-created")),
            dir.path().join(plugin).join("out/link"),
        )
        .unwrap();
    }
    let host = open(dir.path());
    let link = dir.path().join("files/out/link");
    let answers = ask(&host, &[&format!("write|{}|escaped", link.display())]).await;
    assert!(answers[0].contains("error EACCES"), "{answers:?}");
    let link = dir.path().join("pi/out/link");
    let answers = ask_pi(&host, &[&format!("write|{}|escaped", link.display())]).await;
    assert!(answers[0].contains("error EACCES"), "{answers:?}");
    let created: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert!(created.is_empty(), "{created:?}");
}

/// Sets its flag when dropped, also when the test panics.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(unix)]
#[test]
fn a_folder_swapped_for_a_symlink_while_a_plugin_reads_never_leaks() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = plugin_dir();
    // Outside the plugin directory, so the swaps do not wake its watcher.
    let granted = plugin_dir();
    let outside = plugin_dir();
    install_files(dir.path(), &format!("read = [{:?}]", granted.path()));
    let data = granted.path();
    write(data, "sub/file.txt", "granted");
    write(outside.path(), "file.txt", "secret");
    std::os::unix::fs::symlink(outside.path(), data.join("sub.link")).unwrap();
    let host = open(dir.path());

    let stop = AtomicBool::new(false);
    let swaps = AtomicUsize::new(0);
    let answers = std::thread::scope(|scope| {
        let _stop = StopOnDrop(&stop);
        scope.spawn(|| {
            let (sub, real, link) = (
                data.join("sub"),
                data.join("sub.dir"),
                data.join("sub.link"),
            );
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&sub, &real).unwrap();
                std::fs::rename(&link, &sub).unwrap();
                std::fs::rename(&sub, &link).unwrap();
                std::fs::rename(&real, &sub).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        });
        let path = data.join("sub/file.txt");
        runtime.block_on(ask(&host, &[&format!("race|{}|30000", path.display())]))
    });
    let answer = &answers[0];
    assert!(answer.starts_with("leaked 0 read "), "{answer}");
    let read: usize = answer.split(' ').nth(3).unwrap().parse().unwrap();
    assert!(read > 0, "the granted file was read too: {answer}");
    assert!(
        swaps.load(Ordering::Relaxed) > 100,
        "the folder was swapped"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_fifo_does_not_block_and_a_huge_file_is_not_read() {
    let dir = plugin_dir();
    install_files(dir.path(), "read = [\"data\"]");
    write(dir.path(), "pi/index.ts", PI_FILES);
    write(
        dir.path(),
        "pi/plugin.toml",
        "[capabilities]\nread = [\"../files/data\"]",
    );
    let data = dir.path().join("files/data");
    std::fs::create_dir_all(&data).unwrap();
    let fifo = data.join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let huge = std::fs::File::create(data.join("huge")).unwrap();
    huge.set_len(17 * 1024 * 1024).unwrap();
    let host = open(dir.path());

    let started = Instant::now();
    let answers = ask(
        &host,
        &[
            &format!("read|{}", fifo.display()),
            &format!("read|{}", data.join("huge").display()),
        ],
    )
    .await;
    assert!(answers[0].starts_with("error EINVAL"), "{answers:?}");
    assert!(answers[1].starts_with("error EFBIG"), "{answers:?}");
    let answers = ask_pi(&host, &[&format!("read|{}", fifo.display())]).await;
    assert!(answers[0].starts_with("error EINVAL"), "{answers:?}");
    // A read of the FIFO would block forever (the answers above show it
    // did not, and was refused); the bound is generous so a loaded machine
    // does not fail it.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "nothing blocked"
    );
}

#[tokio::test]
async fn relative_paths_start_at_the_plugin_folder_and_errors_name_the_module() {
    let dir = plugin_dir();
    install_files(dir.path(), "read = [\"data\"]");
    write(dir.path(), "files/data/note.txt", "granted contents");
    write(dir.path(), "pi/index.ts", PI_FILES);
    let host = open(dir.path());
    let folder = dir.path().join("files").canonicalize().unwrap();
    let answers = ask(
        &host,
        &[
            "read|data/note.txt",
            "dir",
            "exists|data/note.txt",
            "exists|data/missing.txt",
            "exists|/etc/passwd",
            "list|data",
            "read|/etc/passwd",
        ],
    )
    .await;
    assert_eq!(answers[0], "read: granted contents");
    assert_eq!(answers[1], format!("dir: {}", folder.display()));
    assert_eq!(
        answers[2..5],
        ["exists: true", "exists: false", "exists: false"]
    );
    assert_eq!(answers[5], "list: note.txt");
    assert!(
        answers[6].starts_with("error EACCES: yohost: reading /etc/passwd is not granted"),
        "{answers:?}"
    );
    let answers = ask_pi(&host, &["read|/etc/passwd", "exists|/etc/passwd"]).await;
    assert!(
        answers[0].starts_with("error EACCES: EACCES: permission denied, open '/etc/passwd' (node:fs: reading /etc/passwd is not granted"),
        "{answers:?}"
    );
    assert_eq!(answers[1], "exists: false");
}

#[tokio::test]
async fn a_missing_granted_directory_refuses_the_plugin_in_every_engine() {
    let dir = plugin_dir();
    let grant = "[capabilities]\nread = [\"nowhere\"]\n";
    install_files(dir.path(), "read = [\"nowhere\"]");
    write(dir.path(), "pi/index.ts", PI_FILES);
    write(dir.path(), "pi/plugin.toml", grant);
    write(
        dir.path(),
        "py/__init__.py",
        "from yohost import Plugin\nplugin = Plugin()\n",
    );
    write(dir.path(), "py/plugin.toml", grant);
    let dylib = example_dylib("fixture_tagger");
    write(
        dir.path(),
        "native/plugin.toml",
        &format!("entry = {:?}\n{grant}", dylib.display().to_string()),
    );
    let wasm = wasm_guests::guest("guest_policy");
    write(
        dir.path(),
        "wasm/plugin.toml",
        &format!("entry = {:?}\n{grant}", wasm.display().to_string()),
    );
    write(
        dir.path(),
        "fine.ts",
        "export default { on_input() { return null; } };",
    );
    let host = open(dir.path());
    let report = host.report().await;
    for name in ["files", "pi", "py", "native", "wasm"] {
        let plugin = reported(&report, name);
        assert_eq!(plugin.status, Status::Refused, "{name}: {plugin:?}");
        let reason = plugin.reason.as_deref().unwrap_or("");
        let path = dir.path().join(name).join("nowhere");
        assert!(
            reason.contains("capabilities.read grants \"nowhere\"")
                && reason.contains(&format!("{} does not exist", path.display())),
            "{name}: {reason}"
        );
    }
    assert_eq!(reported(&report, "fine").status, Status::Loaded);
}
