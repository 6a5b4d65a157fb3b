//! Plugins on the Node engine (`engine = "node"`), through a real
//! `yoagent::Agent`, beyond the conformance suite's cases:
//! - Node's built-ins, the plugin's own TypeScript files (imported the
//!   TypeScript way, `./x.js` for `x.ts`) and a CommonJS npm package load;
//!   the same plugin on the embedded engine is refused for the built-in;
//!   `yohost check`'s report says `node`;
//! - `console.log` and `process.stdout.write` become log lines of the call
//!   that wrote them, after an `await` too, and never corrupt the frames;
//! - the permission model: files outside the folder and grants cannot be
//!   read, outside `write` grants cannot be written; no process without
//!   `exec`, no worker threads, no native addons; the environment is only
//!   what is granted;
//! - a process that exits, or writes garbage on its stdout, fails its call
//!   closed (`crashed`) and the rest of the run, and the next run gets a new
//!   process; dropping the host kills the process;
//! - TypeScript outside the plugin's folder is not compiled for it, and
//!   `engine = "node"` on a Python entry is refused.
//!
//! Every test is skipped, saying why, when `node` is not on PATH.

mod support;

use serde_json::json;
use std::path::Path;
use support::*;
use yohost::{PluginHost, Status};

/// Skip the test (printing why) when Node is missing.
macro_rules! needs_node {
    () => {
        if let Some(why) = node_missing() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// Run `cmd` through the recording `bash` tool behind `host`'s plugins;
/// returns the commands that ran (after rewrites) and the tool results.
async fn bash_through(
    host: &PluginHost,
    cmds: &[&str],
) -> (Vec<String>, Vec<(String, String, bool)>) {
    let mut script: Vec<_> = cmds
        .iter()
        .map(|c| call("bash", json!({ "command": c })))
        .collect();
    script.push(text("done"));
    let (agent, recorder) = scripted_bash(script);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    (recorder.commands(), tool_results(&events))
}

const NODE: &str = "engine = \"node\"\n";

/// A policy that answers each command with what it found out, by rewriting
/// it to `<cmd>=<outcome>`.
const PROBE: &str = r#"
import { definePlugin } from "yohost";
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { Worker } from "node:worker_threads";
import { shout } from "./lib/shout.js";
import pad from "padder";

function attempt(run: () => unknown): string {
  try {
    return "ok:" + String(run());
  } catch (e) {
    return "denied:" + ((e as { code?: string }).code ?? String(e));
  }
}

export default definePlugin({
  name: "probe",
  async before_tool({ tool, args }, ctx) {
    if (tool !== "bash") return null;
    const cmd = String(args.command);
    await new Promise((r) => setTimeout(r, 1));
    console.log(`console ${cmd}`);
    process.stdout.write(`stdout ${cmd}\n`);
    const outcomes: Record<string, () => unknown> = {
      modules: () => shout(pad(os.EOL.length)),
      passwd: () => fs.readFileSync("/etc/passwd", "utf8").split("\n")[0],
      data: () => fs.readFileSync(`${ctx.pluginDir}/../granted/data.txt`, "utf8").trim(),
      "write-out": () => (fs.writeFileSync(`${ctx.pluginDir}/../writable/out.txt`, "w"), "written"),
      "write-data": () => (fs.writeFileSync(`${ctx.pluginDir}/../granted/data.txt`, "w"), "written"),
      spawn: () => execFileSync("true"),
      worker: () => new Worker("1", { eval: true }),
      addon: () => process.dlopen({ exports: {} }, `${ctx.pluginDir}/addon.node`),
      env: () => Object.keys(process.env).sort().join(","),
      pid: () => process.pid,
      exit: () => process.exit(3),
      garbage: () => fs.writeSync(1, "garbage on the wire"),
    };
    const outcome = outcomes[cmd];
    return outcome ? { args: { command: `${cmd}=${attempt(outcome)}` } } : null;
  },
});
"#;

/// The probe in `dir/probe`, with a `read` grant `granted` and a `write`
/// grant `writable` beside it, its own TypeScript helper and an npm package.
fn install_probe(dir: &Path, manifest: &str) {
    write(dir, "probe/index.ts", PROBE);
    write(
        dir,
        "probe/lib/shout.ts",
        "export const shout = (s: string): string => s.toUpperCase() + \"!\";\n",
    );
    write(
        dir,
        "probe/node_modules/padder/package.json",
        r#"{"name": "padder", "main": "main.js"}"#,
    );
    write(
        dir,
        "probe/node_modules/padder/main.js",
        "module.exports = (n) => 'pad' + '-'.repeat(n);\n",
    );
    write(dir, "granted/data.txt", "granted data\n");
    std::fs::create_dir_all(dir.join("writable")).unwrap();
    write(
        dir,
        "probe/plugin.toml",
        &format!(
            "{NODE}{manifest}\n[capabilities]\nread = [\"../granted\"]\nwrite = [\"../writable\"]\nenv = [\"PATH\"]\n"
        ),
    );
}

#[tokio::test]
async fn node_builtins_own_typescript_and_npm_packages_load_on_node() {
    needs_node!();
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install_probe(dir.path(), "");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let probe = reported(&report, "probe");
    assert_eq!(probe.status, Status::Loaded, "{report:?}");
    assert_eq!(probe.engine.as_deref(), Some("node"));

    let (ran, _) = bash_through(&host, &["modules"]).await;
    assert_eq!(ran, ["modules=ok:PAD-!"]);
    let run_ids: Vec<_> = lines_with(&logs, "plugin", "probe")
        .into_iter()
        .filter(|l| {
            let m = l["fields"]["message"].as_str().unwrap_or("");
            m == "console modules" || m == "stdout modules"
        })
        .map(|l| l["fields"]["run_id"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(run_ids.len(), 2, "both lines are logged");
    assert!(run_ids.iter().all(|id| !id.is_empty()), "{run_ids:?}");

    // The same plugin on the embedded engine: refused for the built-in.
    let embedded = plugin_dir();
    install_probe(embedded.path(), "");
    let toml = embedded.path().join("probe/plugin.toml");
    let manifest = std::fs::read_to_string(&toml).unwrap().replace(NODE, "");
    std::fs::write(&toml, manifest).unwrap();
    let host = PluginHost::open(embedded.path()).unwrap();
    let report = host.report().await;
    let refused = reported(&report, "probe");
    assert_eq!(refused.status, Status::Refused);
    assert_eq!(refused.engine.as_deref(), Some("js"));
}

#[tokio::test]
async fn the_permission_model_confines_files_processes_workers_and_env() {
    needs_node!();
    let dir = plugin_dir();
    install_probe(dir.path(), "");
    let host = PluginHost::open(dir.path()).unwrap();
    let (ran, _) = bash_through(
        &host,
        &[
            "passwd",
            "data",
            "write-out",
            "write-data",
            "spawn",
            "worker",
            "addon",
            "env",
        ],
    )
    .await;
    assert_eq!(
        ran,
        [
            "passwd=denied:ERR_ACCESS_DENIED",
            "data=ok:granted data",
            "write-out=ok:written",
            "write-data=denied:ERR_ACCESS_DENIED",
            "spawn=denied:ERR_ACCESS_DENIED",
            "worker=denied:ERR_ACCESS_DENIED",
            "addon=denied:ERR_DLOPEN_DISABLED",
            "env=ok:PATH",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("granted/data.txt")).unwrap(),
        "granted data\n"
    );

    // With `exec`, the process may start.
    let granted = plugin_dir();
    install_probe(granted.path(), "");
    let toml = granted.path().join("probe/plugin.toml");
    let manifest = std::fs::read_to_string(&toml).unwrap() + "exec = true\n";
    std::fs::write(&toml, manifest).unwrap();
    let host = PluginHost::open(granted.path()).unwrap();
    let (ran, _) = bash_through(&host, &["spawn"]).await;
    assert_eq!(ran, ["spawn=ok:"]);
}

/// A line's field, from the event or else its span.
fn field(line: &serde_json::Value, name: &str) -> serde_json::Value {
    let own = &line["fields"][name];
    if own.is_null() {
        line["span"][name].clone()
    } else {
        own.clone()
    }
}

/// The process id the probe reports in a run of its own.
async fn pid_of(host: &PluginHost) -> u32 {
    let (ran, _) = bash_through(host, &["pid"]).await;
    ran[0].strip_prefix("pid=ok:").unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_dead_process_fails_closed_and_the_next_run_starts_another() {
    needs_node!();
    for how in ["exit", "garbage"] {
        let (logs, _guard) = capture_logs();
        let dir = plugin_dir();
        install_probe(dir.path(), "");
        let host = PluginHost::open(dir.path()).unwrap();
        let first = pid_of(&host).await;
        let (ran, results) = bash_through(&host, &[how, "after"]).await;
        assert!(ran.is_empty(), "{how}: {ran:?}");
        assert!(results.iter().all(|r| r.2), "{how}: {results:?}");
        let mut kinds: Vec<String> = logs
            .lines()
            .iter()
            .filter(|l| field(l, "plugin") == "probe")
            .filter_map(|l| field(l, "error_kind").as_str().map(String::from))
            .collect();
        kinds.dedup();
        assert_eq!(kinds, ["crashed", "unloaded"], "{how}");
        let second = pid_of(&host).await;
        assert_ne!(first, second, "{how}: a new process serves the next run");
    }
}

#[tokio::test]
async fn dropping_the_host_kills_the_process() {
    needs_node!();
    let dir = plugin_dir();
    install_probe(dir.path(), "");
    let host = PluginHost::open(dir.path()).unwrap();
    let pid = pid_of(&host).await;
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_dir.exists());
    drop(host);
    let gone = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        !proc_dir.exists()
    });
    assert!(gone, "process {pid} outlived its plugin");
}

#[tokio::test]
async fn typescript_outside_the_folder_is_not_compiled_and_node_runs_only_javascript() {
    needs_node!();
    let dir = plugin_dir();
    write(dir.path(), "outside.ts", "export const x: number = 1;\n");
    write(
        dir.path(),
        "reach/index.ts",
        "import { definePlugin } from \"yohost\";\nimport { x } from \"../outside.ts\";\nexport default definePlugin({ name: \"reach\" + x });\n",
    );
    write(dir.path(), "reach/plugin.toml", NODE);
    write(dir.path(), "snake/__init__.py", "");
    write(dir.path(), "snake/plugin.toml", NODE);
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    for name in ["reach", "snake"] {
        let refused = reported(&report, name);
        assert_eq!(refused.status, Status::Refused, "{report:?}");
    }
    let reason = reported(&report, "reach")
        .reason
        .clone()
        .unwrap_or_default();
    assert!(reason.contains("outside.ts"), "{reason}");
}
