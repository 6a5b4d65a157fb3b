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
//!   `engine = "node"` on a Python entry is refused;
//! - a call that overruns its deadline retires its process: another run's
//!   call in flight on it still answers, the next run gets a new process,
//!   and the old one is gone once its calls are done;
//! - dropping the host lets a pi extension's `session_shutdown` run on
//!   Node before the process is killed, and an extension with only that
//!   handler is not warned as never called;
//! - `engine = "auto"` (the default): a plugin whose import graph needs a
//!   Node built-in the flavor lacks, an npm package with a native addon or
//!   one that exports itself only for Node (its `node` condition),
//!   runs on Node, and `yohost check`'s report says why; `engine =
//!   "embedded"` refuses it, naming what it needs; an import refused for
//!   another reason wins over the need for Node; in a live directory the
//!   engine follows the plugin's `node_modules`.
//!
//! - under `auto`, a plugin with a package file over the embedded engine's
//!   1 MiB source limit runs on Node, and `check` names the file; held to
//!   the embedded engine it is refused naming it;
//! - a JSON module imported with `with { type: "json" }` loads; a throw in
//!   stripped TypeScript, at load or in a tool, names the line of the
//!   TypeScript source.
//!
//! Every test is skipped, saying why, when `node` is not on PATH.

use crate::support;

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
import { randomUUID } from "node:crypto";
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

// Names this process across the host's view and its own: a plugin
// process's pid is its number in its own PID namespace.
const token = randomUUID();

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
      "write-out": () => (fs.writeFileSync(`${ctx.pluginDir}/writable/out.txt`, "w"), "written"),
      "write-data": () => (fs.writeFileSync(`${ctx.pluginDir}/../granted/data.txt`, "w"), "written"),
      tmp: () => (fs.mkdirSync(`${os.tmpdir()}/state`, { recursive: true }), fs.writeFileSync(`${os.tmpdir()}/state/t.txt`, "kept"), fs.readFileSync(`${os.tmpdir()}/state/t.txt`, "utf8")),
      spawn: () => execFileSync("true"),
      worker: () => new Worker("1", { eval: true }),
      addon: () => process.dlopen({ exports: {} }, `${ctx.pluginDir}/addon.node`),
      env: () => Object.keys(process.env).sort().join(","),
      pid: () => token,
      exit: () => process.exit(3),
      garbage: () => fs.writeSync(1, "garbage on the wire"),
    };
    const slept = /^sleep-(\d+)$/.exec(cmd);
    if (slept) {
      await new Promise((r) => setTimeout(r, Number(slept[1])));
      return { args: { command: `${cmd}=ok:${token}` } };
    }
    const outcome = outcomes[cmd];
    return outcome ? { args: { command: `${cmd}=${attempt(outcome)}` } } : null;
  },
});
"#;

/// The probe in `dir/probe`, with a `read` grant `granted` beside it, a
/// `write` grant `writable` of its own (a write grant elsewhere in the
/// plugin directory is refused), its own TypeScript helper and an npm
/// package.
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
    std::fs::create_dir_all(dir.join("probe/writable")).unwrap();
    write(
        dir,
        "probe/plugin.toml",
        &format!(
            "{NODE}{manifest}\n[capabilities]\nread = [\"../granted\"]\nwrite = [\"writable\"]\nenv = [\"PATH\"]\n"
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

    // The same plugin held to the embedded engine: refused for the built-in.
    let embedded = plugin_dir();
    install_probe(embedded.path(), "");
    let toml = embedded.path().join("probe/plugin.toml");
    let manifest = std::fs::read_to_string(&toml)
        .unwrap()
        .replace(NODE, "engine = \"embedded\"\n");
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
            "tmp",
            "spawn",
            "worker",
            "addon",
            "env",
        ],
    )
    .await;
    // The granted `PATH`, the base set the host has (without `HOME`,
    // which no grant lets it read), the process's private `TMPDIR`, and
    // the plugin's data folder.
    let mut env: Vec<&str> = yohost::adapter::sandbox::BASE_ENV
        .iter()
        .copied()
        .filter(|name| *name != "HOME" && (*name == "TMPDIR" || std::env::var(name).is_ok()))
        .chain([yohost::adapter::data_dir::DATA_DIR_ENV])
        .collect();
    env.sort();
    let env = format!("env=ok:{}", env.join(","));
    assert_eq!(
        ran,
        [
            "passwd=denied:ERR_ACCESS_DENIED",
            "data=ok:granted data",
            "write-out=ok:written",
            "write-data=denied:ERR_ACCESS_DENIED",
            // Its private temporary folder is its own, to write and read.
            "tmp=ok:kept",
            "spawn=denied:ERR_ACCESS_DENIED",
            "worker=denied:ERR_ACCESS_DENIED",
            "addon=denied:ERR_DLOPEN_DISABLED",
            &env,
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
async fn token_of(host: &PluginHost) -> String {
    let (ran, _) = bash_through(host, &["pid"]).await;
    ran[0].strip_prefix("pid=ok:").unwrap().to_string()
}

/// Wait up to two seconds for `pid` to be gone.
fn ends(pid: u32) -> bool {
    (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        is_gone(pid)
    })
}

#[tokio::test]
async fn a_dead_process_fails_closed_and_the_next_run_starts_another() {
    needs_node!();
    for how in ["exit", "garbage"] {
        let (logs, _guard) = capture_logs();
        let dir = plugin_dir();
        install_probe(dir.path(), "");
        let host = PluginHost::open(dir.path()).unwrap();
        let first = token_of(&host).await;
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
        let second = token_of(&host).await;
        assert_ne!(first, second, "{how}: a new process serves the next run");
    }
}

#[tokio::test]
async fn dropping_the_host_kills_the_process() {
    needs_node!();
    let dir = plugin_dir();
    install_probe(dir.path(), "");
    let host = PluginHost::open(dir.path()).unwrap();
    token_of(&host).await;
    let serving = running(&dir.path().to_string_lossy());
    assert_eq!(
        serving.len(),
        1,
        "one process serves the plugin: {serving:?}"
    );
    drop(host);
    assert!(
        ends(serving[0]),
        "process {} outlived its plugin",
        serving[0]
    );
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

/// A plugin `name` whose tool `hash` answers with the `hasher` package's
/// `hash`; the package is native when `native` is set (a `binding.gyp`).
fn install_hasher(dir: &Path, name: &str, manifest: &str, native: bool) {
    write(
        dir,
        &format!("{name}/index.ts"),
        r#"
import { definePlugin, text } from "yohost";
import { hash } from "hasher";

export default definePlugin({
  tools: [{
    name: "hash",
    description: "Hash a text",
    parameters: { type: "object", properties: { text: { type: "string" } } },
    async execute(args: { text: string }) {
      return { content: [text(hash(args.text))] };
    },
  }],
});
"#,
    );
    write(
        dir,
        &format!("{name}/node_modules/hasher/package.json"),
        r#"{"name": "hasher", "main": "index.js"}"#,
    );
    write(
        dir,
        &format!("{name}/node_modules/hasher/index.js"),
        "exports.hash = (s) => 'h:' + s + ':' + (typeof globalThis.process);\n",
    );
    set_native(dir, name, native);
    write(dir, &format!("{name}/plugin.toml"), manifest);
}

/// Give `name`'s `hasher` package a `binding.gyp`, or take it away.
fn set_native(dir: &Path, name: &str, native: bool) {
    let gyp = dir.join(format!("{name}/node_modules/hasher/binding.gyp"));
    if native {
        write(
            dir,
            &format!("{name}/node_modules/hasher/binding.gyp"),
            "{}",
        );
    } else if gyp.exists() {
        std::fs::remove_file(gyp).unwrap();
    }
}

/// The text of the `hash` tool's result for `text`, through an agent.
async fn hash_through(host: &PluginHost, text_in: &str) -> (String, bool) {
    let (agent, _) = scripted(vec![call("hash", json!({ "text": text_in })), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    (results[0].1.clone(), results[0].2)
}

#[tokio::test]
async fn auto_runs_a_plugin_that_needs_node_on_node_and_says_why() {
    needs_node!();
    let dir = plugin_dir();
    // The probe imports `node:fs`, `node:os`, `node:child_process` and
    // `node:worker_threads`, which yohost's own flavor does not provide.
    install_probe(dir.path(), "");
    let toml = dir.path().join("probe/plugin.toml");
    let manifest = std::fs::read_to_string(&toml).unwrap().replace(NODE, "");
    std::fs::write(&toml, manifest).unwrap();
    install_hasher(dir.path(), "native", "", true);
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;

    let probe = reported(&report, "probe");
    assert_eq!(probe.status, Status::Loaded, "{report:?}");
    assert_eq!(probe.engine.as_deref(), Some("node"));
    let why = probe.routed.clone().unwrap_or_default();
    assert!(
        why.contains("`node:fs` is a Node built-in module")
            && why.contains("`node:worker_threads`"),
        "{why}"
    );
    let (ran, _) = bash_through(&host, &["modules"]).await;
    assert_eq!(ran, ["modules=ok:PAD-!"]);

    let native = reported(&report, "native");
    assert_eq!(native.status, Status::Loaded, "{report:?}");
    assert_eq!(native.engine.as_deref(), Some("node"));
    let why = native.routed.clone().unwrap_or_default();
    assert!(
        why.contains("imports \"hasher\", a native addon (binding.gyp)"),
        "{why}"
    );
    assert!(native.to_string().contains("\n  on node: "), "{native}");
    assert_eq!(hash_through(&host, "x").await, ("h:x:object".into(), false));
}

/// A package that exports itself only under Node's `node` condition (as
/// `pkce-challenge` does) is not found by the embedded engine's resolution:
/// `auto` sends the plugin to Node, saying why, and it runs there.
#[tokio::test]
async fn a_package_exported_only_for_node_sends_its_plugin_to_node() {
    needs_node!();
    let dir = plugin_dir();
    install_hasher(dir.path(), "node-only", "", false);
    write(
        dir.path(),
        "node-only/node_modules/hasher/package.json",
        r#"{"name": "hasher", "exports": {".": {"node": "./index.js"}}}"#,
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let plugin = reported(&report, "node-only");
    assert_eq!(plugin.status, Status::Loaded, "{report:?}");
    assert_eq!(plugin.engine.as_deref(), Some("node"));
    let why = plugin.routed.clone().unwrap_or_default();
    assert!(
        why.contains(
            "imports \"hasher\", which exports itself only for Node (its `node` condition)"
        ),
        "{why}"
    );
    assert_eq!(hash_through(&host, "x").await, ("h:x:object".into(), false));
}

/// A plugin `auto` sends to Node, which Node then refuses, is reported
/// with engine `node`, and its reason says why it went there.
#[tokio::test]
async fn a_plugin_auto_sent_to_node_and_refused_there_is_reported_on_node() {
    needs_node!();
    let dir = plugin_dir();
    write(
        dir.path(),
        "breaks/index.ts",
        r#"import { readFileSync } from "node:fs";
import { definePlugin } from "yohost";
throw new Error(`breaks at load ${typeof readFileSync}`);
export default definePlugin({ before_model: () => null });
"#,
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let breaks = reported(&report, "breaks");
    assert_eq!(breaks.status, Status::Refused, "{report:?}");
    assert_eq!(breaks.engine.as_deref(), Some("node"), "{breaks}");
    let why = breaks.to_string();
    assert!(
        why.contains("breaks at load function") && why.contains("on Node, because"),
        "{why}"
    );
}

#[tokio::test]
async fn embedded_refuses_what_needs_node_and_other_refusals_win_over_node() {
    needs_node!();
    let dir = plugin_dir();
    install_hasher(dir.path(), "held", "engine = \"embedded\"\n", true);
    install_hasher(dir.path(), "plain", "", false);
    // Needs Node, but also imports a file outside its folder.
    write(dir.path(), "outside.ts", "export const x = 1;\n");
    write(
        dir.path(),
        "escapes/index.ts",
        "import net from \"node:net\";\nimport { x } from \"../outside.ts\";\nexport default { name: String(net) + x };\n",
    );
    // Needs Node, but also a package that is not installed.
    write(
        dir.path(),
        "uninstalled/index.ts",
        "import { createServer } from \"node:http\";\nimport { z } from \"zod\";\nexport default { name: String(createServer) + String(z) };\n",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;

    let held = reported(&report, "held");
    assert_eq!(held.status, Status::Refused, "{report:?}");
    let reason = held.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("imports \"hasher\", a native addon (binding.gyp)")
            && reason.contains("`engine = \"embedded\"`"),
        "{reason}"
    );
    let plain = reported(&report, "plain");
    assert_eq!(plain.status, Status::Loaded, "{report:?}");
    assert_eq!(plain.engine.as_deref(), Some("js"));
    assert_eq!(plain.routed, None);
    // On the embedded engine there is no `process`.
    assert_eq!(
        hash_through(&host, "y").await,
        ("h:y:undefined".into(), false)
    );

    for (name, named) in [
        ("escapes", "outside the plugin's folder"),
        ("uninstalled", "the package `zod` is not installed"),
    ] {
        let entry = reported(&report, name);
        assert_eq!(entry.status, Status::Refused, "{report:?}");
        let reason = entry.reason.clone().unwrap_or_default();
        assert!(
            reason.contains(named) && !reason.contains("Node"),
            "{name}: {reason}"
        );
    }
}

#[tokio::test]
async fn in_a_live_directory_the_engine_follows_node_modules() {
    needs_node!();
    let dir = plugin_dir();
    install_hasher(dir.path(), "hasher", "", false);
    let host = PluginHost::open(dir.path()).unwrap();
    let engine = |host: &PluginHost| {
        host.plugins()
            .into_iter()
            .find(|p| p.name == "hasher")
            .map(|p| p.engine.as_str())
    };
    assert_eq!(engine(&host), Some("js"));
    assert_eq!(hash_through(&host, "a").await.0, "h:a:undefined");

    set_native(dir.path(), "hasher", true);
    host.reload();
    assert_eq!(engine(&host), Some("node"));
    assert_eq!(hash_through(&host, "b").await.0, "h:b:object");

    set_native(dir.path(), "hasher", false);
    host.reload();
    assert_eq!(engine(&host), Some("js"));
    assert_eq!(hash_through(&host, "c").await.0, "h:c:undefined");
}

#[tokio::test]
async fn an_overrun_retires_the_process_without_failing_another_runs_call() {
    needs_node!();
    let dir = plugin_dir();
    install_probe(dir.path(), "[timeouts]\nbefore_tool = 3000\n");
    let host = PluginHost::open(dir.path()).unwrap();
    let old = token_of(&host).await;
    let serving = running(&dir.path().to_string_lossy());
    assert_eq!(
        serving.len(),
        1,
        "one process serves the plugin: {serving:?}"
    );
    // Run A overruns at 3 s; run B's call, in flight from 1 s to 3.5 s on
    // the same process, answers within its own deadline (4 s).
    let overrun = bash_through(&host, &["sleep-10000"]);
    let in_flight = async {
        tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
        bash_through(&host, &["sleep-2500"]).await
    };
    let ((ran_a, results_a), (ran_b, _)) = tokio::join!(overrun, in_flight);
    assert!(ran_a.is_empty(), "{ran_a:?}");
    assert!(results_a[0].2, "the overrun fails closed: {results_a:?}");
    assert_eq!(ran_b, [format!("sleep-2500=ok:{old}")]);

    let new = token_of(&host).await;
    assert_ne!(old, new, "the next run gets a new process");
    assert!(
        ends(serving[0]),
        "the retired process {} is killed once its calls are done",
        serving[0]
    );
}

#[tokio::test]
async fn a_dropped_pi_extension_runs_its_session_shutdown_on_node() {
    needs_node!();
    let dir = plugin_dir();
    let out = plugin_dir();
    write(
        dir.path(),
        "bye/index.ts",
        &format!(
            r#"import type {{ ExtensionAPI }} from "@earendil-works/pi-coding-agent";
import {{ writeFileSync }} from "node:fs";
export default function (pi: ExtensionAPI) {{
  pi.on("session_shutdown", async () => {{
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync({:?}, "shut down");
  }});
}}
"#,
            out.path().join("bye.txt").display().to_string()
        ),
    );
    write(
        dir.path(),
        "bye/plugin.toml",
        &format!(
            "{NODE}[capabilities]\nwrite = [{:?}]\n",
            out.path().display().to_string()
        ),
    );
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_pi::node_adapter())
        .open()
        .unwrap();
    let report = host.report().await;
    let bye = reported(&report, "bye");
    assert_eq!(bye.status, Status::Loaded, "{report:?}");
    assert!(
        bye.warnings.iter().all(|w| !w.contains("never call")),
        "a handler the host calls at unload is not \"never called\": {:?}",
        bye.warnings
    );
    drop(host);
    let marker = out.path().join("bye.txt");
    let written = (0..300).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        marker.exists()
    });
    assert!(
        written,
        "session_shutdown ran before the process was killed"
    );
}

#[tokio::test]
async fn a_pi_extension_on_node_sees_nodes_own_process() {
    needs_node!();
    let dir = plugin_dir();
    write(
        dir.path(),
        "which/index.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "which_process",
    description: "Which process object the extension sees",
    parameters: { type: "object", properties: {} },
    async execute() {
      const seen = [process.release?.name, typeof process.memoryUsage, typeof process.pid];
      return { content: [{ type: "text", text: seen.join(" ") }] };
    },
  });
}
"#,
    );
    write(dir.path(), "which/plugin.toml", NODE);
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_pi::node_adapter())
        .open()
        .unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![call("which_process", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    // The pi flavor's stand-in `process` (made for the embedded engine) is
    // put back to Node's own once the flavor's prelude has run.
    assert_eq!(
        results,
        [(
            "which_process".to_string(),
            "node function number".to_string(),
            false
        )]
    );
}

/// The Node engine's own `Candidate` for single file `name` of `dir`.
fn single_file_on_node(dir: &Path, name: &str) -> yohost::adapter::Candidate {
    let found = yohost::adapter::Adapters::default().scan(dir).unwrap();
    let mut candidate = found
        .into_iter()
        .find_map(|f| match f {
            yohost::adapter::Found::Plugin(c) if c.name == name => Some(*c),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{name} is a candidate"));
    candidate.engine = yohost::EngineKind::NODE;
    candidate
}

/// A single-file plugin on Node reads as its own only the file and the
/// directory's `node_modules` (`--allow-fs-read` and the imports it may
/// link): `spy.ts` importing another plugin's file (`./victim/secret.ts`)
/// is refused, naming the path, while `uses.ts` importing a package from
/// the directory's `node_modules` loads and runs.
#[tokio::test]
async fn a_single_file_plugin_on_node_cannot_import_another_plugins_files() {
    needs_node!();
    let dir = plugin_dir();
    write(
        dir.path(),
        "victim/secret.ts",
        "export const token: string = \"victim-secret\";\n",
    );
    write(
        dir.path(),
        "spy.ts",
        r#"import { definePlugin } from "yohost";
import { token } from "./victim/secret.ts";
export default definePlugin({ before_model: () => ({ note: token }) });
"#,
    );
    single_file_with_a_package(dir.path());
    let spy = single_file_on_node(dir.path(), "spy");
    let why = match yohost::adapter::node::load(&spy, Default::default()) {
        Ok(_) => panic!("spy.ts loaded on Node"),
        Err(e) => e.to_string(),
    };
    assert!(
        why.contains("victim/secret.ts") && why.contains("outside the plugin's own files"),
        "{why}"
    );
    let uses = single_file_on_node(dir.path(), "uses");
    let loaded = yohost::adapter::node::load(&uses, Default::default())
        .unwrap_or_else(|e| panic!("uses.ts loads on Node: {e}"));
    let mut plugin = yohost::LoadedPlugin::new(
        &uses.name,
        yohost::EngineKind::NODE,
        loaded.plugin.clone(),
        loaded.hooks.clone(),
    );
    plugin.file = uses.root.clone();
    plugin.ecosystem = uses.ecosystem;
    plugin.manifest = uses.manifest.clone();
    plugin.processes = loaded.processes;
    let host = PluginHost::from_plugins(vec![plugin]);
    let (agent, requests) = scripted(vec![text("done")]);
    let mut agent = agent.with_extension(host.extension());
    run(&mut agent, "go").await;
    let seen = format!("{:?}", requests.lock().unwrap());
    assert!(seen.contains("tiny-word"), "{seen}");
}

/// Types spread over lines before the code, so that stripping them moves
/// it up: the tool's throw is on line 14 of the source; the JSON module is
/// imported with its attribute.
const POSITIONED: &str = r#"import data from "./data.json" with { type: "json" };
interface Options {
  a: string;
  b: number;
}
type Alias = { x: Options };
export default {
  tools: [
    {
      name: "word",
      run(): string {
        const unused: Alias | undefined = undefined;
        void unused;
        throw new Error("boom with " + data.word);
      },
    },
  ],
};
"#;

#[tokio::test]
async fn json_imports_load_and_throws_name_the_typescript_line_on_node() {
    needs_node!();
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    write(dir.path(), "positioned/index.ts", POSITIONED);
    write(dir.path(), "positioned/data.json", r#"{"word": "json"}"#);
    write(dir.path(), "positioned/plugin.toml", NODE);
    let at_load = POSITIONED.replace(
        "export default {",
        "const fail: boolean = true;\nif (fail) throw new Error(\"boom at load\");\nexport default {",
    );
    write(dir.path(), "at-load/index.ts", &at_load);
    write(dir.path(), "at-load/data.json", r#"{"word": "json"}"#);
    write(dir.path(), "at-load/plugin.toml", NODE);
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert_eq!(
        reported(&report, "positioned").status,
        Status::Loaded,
        "{report:?}"
    );
    let refused = reported(&report, "at-load");
    let reason = refused.reason.clone().unwrap_or_default();
    assert!(reason.contains("boom at load"), "{reason}");
    assert!(reason.contains("index.ts:8"), "{reason}");

    let (agent, _) = scripted(vec![call("word", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(results[0].2, "{results:?}");
    let logged = serde_json::to_string(&logs.lines()).unwrap();
    assert!(logged.contains("boom with json"), "{logged}");
    assert!(logged.contains("index.ts:14"), "{logged}");
}

/// A tool plugin whose npm package is one file of 1.2 MiB.
fn install_large(dir: &Path, manifest: &str) {
    write(
        dir,
        "large/index.ts",
        "import { answer } from \"big\";\nexport default { tools: [{ name: \"big\", run: () => answer }] };\n",
    );
    write(
        dir,
        "large/node_modules/big/package.json",
        r#"{"name": "big", "main": "index.js"}"#,
    );
    let padding = format!("/*{}*/\n", "x".repeat(1200 * 1024));
    write(
        dir,
        "large/node_modules/big/index.js",
        &format!("{padding}exports.answer = \"from a large file\";\n"),
    );
    write(dir, "large/plugin.toml", manifest);
}

#[tokio::test]
async fn auto_runs_a_plugin_with_a_file_over_the_embedded_limit_on_node() {
    needs_node!();
    let dir = plugin_dir();
    install_large(dir.path(), "");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let large = reported(&report, "large");
    assert_eq!(large.status, Status::Loaded, "{report:?}");
    assert_eq!(large.engine.as_deref(), Some("node"));
    let why = large.routed.clone().unwrap_or_default();
    assert!(
        why.contains("index.js is over the limit of")
            && why.contains("bytes of the embedded engine"),
        "{why}"
    );
    let (agent, _) = scripted(vec![call("big", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results[0].1, "from a large file", "{results:?}");

    let embedded = plugin_dir();
    install_large(embedded.path(), "engine = \"embedded\"\n");
    let host = PluginHost::open(embedded.path()).unwrap();
    let report = host.report().await;
    let refused = reported(&report, "large");
    assert_eq!(refused.status, Status::Refused, "{report:?}");
    let reason = refused.reason.clone().unwrap_or_default();
    assert!(reason.contains("bytes of the embedded engine"), "{reason}");
}
