//! pi's `node:fs` behaves as Node's, checked against real Node:
//!
//! - the calls in `fs_probe.js` (reads as `Buffer`s and text, writes of
//!   bytes, `mkdir`, `mkdtemp`, `readdir` with file types, `rm`, `stat`,
//!   `access`, `watch`, the promise and callback forms, `createReadStream`,
//!   `createWriteStream`, `readline` over a stream) give what `node` gives
//!   for the same calls, errors included (`code`, `errno`, `syscall`,
//!   `path`, message); the test is skipped, saying why, without `node`;
//! - outside the grants every call fails with Node's `EACCES` error whose
//!   message also names the key to grant, `existsSync` answers false, and
//!   a stream emits the error;
//! - a watcher set while loading hears a change to its granted file at the
//!   plugin's next call (`pi_fs_watch.rs` shows the rest of `fs.watch`).

use crate::support;

use serde_json::{json, Value};
use std::path::Path;
use support::*;
use yohost::PluginHost;

/// The calls both Node and the host make.
const PROBE: &str = include_str!("../fs_probe.js");

/// A host over `dir` with the pi adapter registered.
fn open(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .open()
        .unwrap()
}

/// The folder the probe works in: files, a binary file, a subfolder, a
/// symlink and lines with both line ends.
fn set_up(dir: &Path) {
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::write(dir.join("a.txt"), "hello world").unwrap();
    std::fs::write(dir.join("bin"), [0u8, 0xff, 1, b'a']).unwrap();
    std::fs::write(dir.join("sub/x.txt"), "x").unwrap();
    std::fs::write(dir.join("lines.txt"), "one\ntwo\r\nthree").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
}

/// What Node answers to the probe in `dir`, or why it cannot run.
fn node_answers(dir: &Path) -> Result<Value, String> {
    let script = format!(
        "import * as fs from \"node:fs\"; import * as fsp from \"node:fs/promises\"; \
         import * as readline from \"node:readline\";\n{PROBE}\n\
         console.log(JSON.stringify(await probe(fs, fsp, readline, process.argv[1])));"
    );
    node_module_json(&script, dir)
}

/// A pi extension with a tool `probe` that runs the probe in `dir`, and a
/// tool `outside` that tries each kind of call on `path`, outside its
/// grants. It watches `watched` while it loads.
fn extension(watched: &Path) -> String {
    format!(
        r#"import type {{ ExtensionAPI }} from "@earendil-works/pi-coding-agent";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as readline from "node:readline";
{PROBE}
const fired = [];
export default function (pi: ExtensionAPI) {{
  pi.on("session_start", () => {{ fs.watch({watched:?}, (kind) => fired.push(kind)); }});
  pi.registerTool({{
    name: "probe",
    description: "node:fs calls",
    parameters: {{ type: "object", properties: {{ dir: {{ type: "string" }} }} }},
    async execute(_id, params) {{
      return {{ content: [{{ type: "text", text: JSON.stringify(await probe(fs, fsp, readline, params.dir)) }}] }};
    }},
  }});
  pi.registerTool({{
    name: "outside",
    description: "calls outside the grants",
    parameters: {{ type: "object", properties: {{ path: {{ type: "string" }} }} }},
    async execute(_id, {{ path }}) {{
      const failure = (f) => {{
        try {{ f(); return "no error"; }} catch (e) {{ return {{ code: e.code, errno: e.errno, syscall: e.syscall, path: e.path, message: e.message }}; }}
      }};
      const stream = await new Promise((resolve) => fs.createReadStream(path).on("error", (e) => resolve(e.code)).on("data", () => resolve("data")));
      const answers = {{
        read: failure(() => fs.readFileSync(path)),
        write: failure(() => fs.writeFileSync(path, "x")),
        mkdtemp: failure(() => fs.mkdtempSync(path)),
        readdir: failure(() => fs.readdirSync(path, {{ withFileTypes: true }})),
        watch: failure(() => fs.watch(path)),
        exists: fs.existsSync(path),
        stream,
        fired,
      }};
      return {{ content: [{{ type: "text", text: JSON.stringify(answers) }}] }};
    }},
  }});
}}
"#
    )
}

/// Install the extension in a fresh plugin folder, granted `write` over
/// `granted`; the folder and the host over it.
fn install(granted: &Path, watched: &Path) -> (tempfile::TempDir, PluginHost) {
    let plugins = plugin_dir();
    write(plugins.path(), "probe/index.ts", &extension(watched));
    write(
        plugins.path(),
        "probe/plugin.toml",
        &format!("[timeouts]\ncall_tool = 60000\n[capabilities]\nwrite = [{granted:?}]\n"),
    );
    let host = open(plugins.path());
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    (plugins, host)
}

#[tokio::test]
async fn node_fs_answers_as_node_does() {
    let for_node = tempfile::tempdir().unwrap();
    set_up(for_node.path());
    let expected = match node_answers(for_node.path()) {
        Ok(expected) => expected,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let for_host = tempfile::tempdir().unwrap();
    set_up(for_host.path());
    let (_plugins, host) = install(for_host.path(), &for_host.path().join("a.txt"));
    let dir = for_host.path().to_string_lossy().into_owned();
    let got = json_answers(&host, vec![("probe", json!({ "dir": dir }))]).await;
    let (got, expected) = (got[0].as_object().unwrap(), expected.as_object().unwrap());
    let differing: Vec<String> = expected
        .iter()
        .filter(|(case, want)| got.get(*case) != Some(want))
        .map(|(case, want)| format!("`{case}`: node {want}, host {:?}", got.get(case)))
        .collect();
    assert!(differing.is_empty(), "{}", differing.join("\n"));
    assert_eq!(got.len(), expected.len());
}

#[tokio::test]
async fn outside_the_grants_every_call_is_eacces_naming_the_key() {
    let granted = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let secret = elsewhere.path().join("secret");
    std::fs::write(&secret, "s").unwrap();
    let watched = granted.path().join("watched");
    std::fs::write(&watched, "before").unwrap();
    let (_plugins, host) = install(granted.path(), &watched);
    // The watcher set at load hears the change at the next call.
    std::fs::write(&watched, "after").unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let shown = secret.to_string_lossy().into_owned();
    let got = json_answers(&host, vec![("outside", json!({ "path": shown }))]).await;
    let got = &got[0];
    for (call, syscall, key) in [
        ("read", "open", "read"),
        ("write", "open", "write"),
        ("mkdtemp", "mkdtemp", "write"),
        ("readdir", "scandir", "read"),
        ("watch", "watch", "read"),
    ] {
        let error = &got[call];
        assert_eq!(error["code"], "EACCES", "{call}: {got}");
        assert_eq!(error["errno"], -13, "{call}: {got}");
        assert_eq!(error["syscall"], syscall, "{call}: {got}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("EACCES: permission denied, {syscall} '{shown}")),
            "{call}: {message}"
        );
        assert!(
            message.contains(&format!("capabilities.{key}")),
            "{call}: {message}"
        );
    }
    assert_eq!(got["exists"], false);
    assert_eq!(got["stream"], "EACCES");
    assert_eq!(got["fired"][0], "change", "{got}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "s");
}

/// An extension that reads `path` (relative to its own file) at load and
/// answers it from its tool `shipped`.
const READS_WHAT_IT_SHIPS: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
const here = dirname(fileURLToPath(import.meta.url));
let text;
try {
  text = readFileSync(join(here, "PATH"), "utf8");
} catch (e) {
  text = `cannot read: ${e.code}`;
}
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "TOOL", label: "TOOL", description: "what it ships",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text }] }; },
  });
}
"#;

#[tokio::test]
async fn an_extension_in_a_folder_reads_what_it_ships_without_a_grant_and_nothing_beside() {
    let dir = plugin_dir();
    let source = |path: &str, tool: &str| {
        READS_WHAT_IT_SHIPS
            .replace("PATH", path)
            .replace("TOOL", tool)
    };
    write(
        dir.path(),
        "shipper/index.ts",
        &source("data/words.txt", "shipped"),
    );
    write(dir.path(), "shipper/data/words.txt", "from its own folder");
    // A lone file's folder is the whole plugin directory: it reads nothing
    // of it, a neighbour's files included.
    write(
        dir.path(),
        "lone.ts",
        &source("shipper/data/words.txt", "beside"),
    );
    let host = open(dir.path());
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![
        call("shipped", json!({})),
        call("beside", json!({})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results[0].1, "from its own folder", "{results:?}");
    assert_eq!(results[1].1, "cannot read: EACCES", "{results:?}");
}
