//! pi's `fs.watch` within the grants, through a real agent:
//!
//! - a change in a granted folder reaches the extension's listener with
//!   the event types and names real Node reports for the same changes (the
//!   comparison is skipped, saying why, without `node`), at the start of the
//!   plugin's next call; `fs.promises.watch` and `fs.watchFile` see changes
//!   too, and a closed watcher sees none;
//! - a watch outside the grants, or through a symlink that leads out of
//!   one, fails with Node's `EACCES` error; a recursive watch over a folder
//!   holding such a symlink brings no events from where it leads;
//! - a plugin holds at most `MAX_WATCHES` watches, and its watches (the
//!   system's and the threads behind them) end when it closes them and when
//!   it is dropped.

#[path = "../../../host/tests/support/mod.rs"]
mod support;

use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;
use yohost::PluginHost;

/// The tests here count the process's watches: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What the extension (and Node) run: watch `dir` and record each event as
/// `"eventType filename"`.
const WATCH: &str = r#"function watchInto(fs, dir, seen, options) {
  return fs.watch(dir, options ?? {}, (eventType, filename) => seen.push(`${eventType} ${filename}`));
}"#;

/// A pi extension that watches `dir` when its session starts (and, with
/// `recursive`, its whole tree), with tools: `seen` (the events so far,
/// distinct and sorted), `watch` (tries `fs.watch` on a path and answers
/// `"ok"` or the error's `code` and `message`; `count` times, answering
/// each, when given), `close` (closes the
/// watchers), and `iterate` (the first event of `fs.promises.watch` on
/// `dir`, after a tool writes a file there).
fn extension(dir: &Path, recursive: bool) -> String {
    format!(
        r#"import type {{ ExtensionAPI }} from "@earendil-works/pi-coding-agent";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
{WATCH}
const seen = [];
const watchers = [];
const changes = [];
export default function (pi: ExtensionAPI) {{
  pi.on("session_start", () => {{
    watchers.push(watchInto(fs, {dir:?}, seen, {{ recursive: {recursive} }}));
  }});
  const tool = (name, execute) => pi.registerTool({{
    name,
    description: name,
    parameters: {{
      type: "object",
      properties: {{ path: {{ type: "string" }}, count: {{ type: "number" }} }},
    }},
    async execute(_id, params) {{
      return {{ content: [{{ type: "text", text: JSON.stringify(await execute(params)) }}] }};
    }},
  }});
  tool("seen", () => [...new Set(seen)].sort());
  const watchOnce = (path) => {{
    try {{
      watchers.push(fs.watch(path, () => {{}}));
      return "ok";
    }} catch (e) {{
      return {{ code: e.code, message: e.message }};
    }}
  }};
  tool("watch", ({{ path, count }}) =>
    count === undefined ? watchOnce(path) : Array.from({{ length: count }}, () => watchOnce(path)));
  tool("close", () => {{
    for (const w of watchers.splice(0)) w.close();
    for (const path of changes.splice(0)) fs.unwatchFile(path);
    return watchers.length;
  }});
  tool("watch_file", ({{ path }}) => {{
    fs.watchFile(path, (current, previous) => seen.push(`stat ${{previous.size}}->${{current.size}}`));
    changes.push(path);
    return "ok";
  }});
  tool("iterate", async ({{ path }}) => {{
    const controller = new AbortController();
    const events = fsp.watch({dir:?}, {{ signal: controller.signal }});
    const first = events.next();
    fs.writeFileSync(path, "x");
    const {{ value }} = await first;
    controller.abort();
    try {{
      await events.next();
      return [value, "not aborted"];
    }} catch (e) {{
      return [value, e.name];
    }}
  }});
}}
"#
    )
}

/// A host over a plugin folder holding the extension, granted `write` over
/// `dir`.
fn install(dir: &Path, recursive: bool) -> (tempfile::TempDir, PluginHost) {
    let plugins = plugin_dir();
    write(
        plugins.path(),
        "watcher/index.ts",
        &extension(dir, recursive),
    );
    write(
        plugins.path(),
        "watcher/plugin.toml",
        &format!("[capabilities]\nwrite = [{dir:?}]\n"),
    );
    let host = PluginHost::builder(plugins.path())
        .adapter(yohost_adapter_pi::adapter())
        .open()
        .unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    (plugins, host)
}

/// What the extension has seen once it has seen `wanted` (or after a few
/// seconds): events reach it at the start of a call, after `notify` reads
/// them.
async fn seen_once(host: &PluginHost, wanted: &[&str]) -> Vec<String> {
    // Generous, so a loaded machine does not fail it (it returns as soon
    // as `wanted` is seen).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = json_answers(host, vec![("seen", json!({}))]).await;
        let seen: Vec<String> = serde_json::from_value(got[0].clone()).unwrap();
        if wanted.iter().all(|w| seen.iter().any(|s| s == w)) || Instant::now() > deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The changes both Node and the test make in a watched folder holding
/// `a.txt`: a new file, an append, a rename and a removal.
const CHANGES: &[&str] = &[
    "rename new.txt",
    "change new.txt",
    "change a.txt",
    "rename renamed.txt",
];

fn change_files(dir: &Path) {
    std::fs::write(dir.join("new.txt"), "new").unwrap();
    let mut a = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("a.txt"))
        .unwrap();
    std::io::Write::write_all(&mut a, b" more").unwrap();
    drop(a);
    std::fs::rename(dir.join("new.txt"), dir.join("renamed.txt")).unwrap();
    std::fs::remove_file(dir.join("renamed.txt")).unwrap();
}

/// What Node's `fs.watch` reports for the same changes, or why it cannot
/// run.
fn node_sees(dir: &Path) -> Result<Vec<String>, String> {
    let script = format!(
        r#"import * as fs from "node:fs";
{WATCH}
const dir = process.argv[1];
const seen = [];
const watcher = watchInto(fs, dir, seen);
fs.writeFileSync(`${{dir}}/new.txt`, "new");
fs.appendFileSync(`${{dir}}/a.txt`, " more");
fs.renameSync(`${{dir}}/new.txt`, `${{dir}}/renamed.txt`);
fs.unlinkSync(`${{dir}}/renamed.txt`);
setTimeout(() => {{ watcher.close(); console.log(JSON.stringify([...new Set(seen)].sort())); }}, 500);
"#
    );
    let seen = node_module_json(&script, dir)?;
    Ok(serde_json::from_value(seen).unwrap())
}

/// The watches this process holds: `notify`'s threads and the system's
/// inotify instances.
#[cfg(target_os = "linux")]
fn watches_held() -> (usize, usize) {
    let threads = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("notify-rs inoti"))
        .count();
    let instances = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy() == "anon_inode:inotify")
        .count();
    (threads, instances)
}

/// Wait up to 30 seconds for `held()` to give `wanted` (generous, so a
/// loaded machine does not fail it; it returns as soon as it does).
#[cfg(target_os = "linux")]
async fn settles_at(wanted: (usize, usize)) -> (usize, usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let held = watches_held();
        if held == wanted || Instant::now() > deadline {
            return held;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_change_in_a_granted_folder_reaches_the_listener_as_node_reports_it() {
    let _serial = SERIAL.lock().await;
    let for_node = tempfile::tempdir().unwrap();
    std::fs::write(for_node.path().join("a.txt"), "a").unwrap();
    let node = node_sees(for_node.path());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let (_plugins, host) = install(dir.path(), false);
    change_files(dir.path());
    let seen = seen_once(&host, CHANGES).await;
    let mut expected: Vec<String> = CHANGES.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(seen, expected);
    match node {
        Ok(node) => assert_eq!(seen, node, "node reports other events"),
        Err(why) => println!("not compared with node: {why}"),
    }
    // Once closed, a watcher hears nothing more.
    json_answers(&host, vec![("close", json!({}))]).await;
    std::fs::write(dir.path().join("late.txt"), "late").unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = seen_once(&host, &[]).await;
    assert!(!after.iter().any(|s| s.contains("late")), "{after:?}");
}

#[tokio::test]
async fn watch_file_and_the_promise_form_see_changes() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "a").unwrap();
    let (_plugins, host) = install(dir.path(), false);
    json_answers(&host, vec![("watch_file", json!({ "path": file }))]).await;
    // Appended, not rewritten: one change of size, whenever it is seen.
    let mut appending = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(&mut appending, b"bc").unwrap();
    drop(appending);
    let seen = seen_once(&host, &["stat 1->3"]).await;
    assert!(seen.contains(&"stat 1->3".to_string()), "{seen:?}");
    // The iterator's first event comes while its tool runs; aborting ends
    // it with Node's `AbortError`.
    let made = dir.path().join("made.txt");
    let got = json_answers(&host, vec![("iterate", json!({ "path": made }))]).await;
    assert_eq!(
        got[0],
        json!([{"eventType": "rename", "filename": "made.txt"}, "AbortError"])
    );
}

#[tokio::test]
async fn a_watch_outside_the_grants_or_through_a_symlink_out_of_them_fails() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let granted = dir.path().join("granted");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&granted).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::create_dir(granted.join("sub")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, granted.join("link")).unwrap();
    let (_plugins, host) = install(&granted, true);
    let outside_shown = outside.to_string_lossy().into_owned();
    let got = json_answers(
        &host,
        vec![
            ("watch", json!({ "path": outside })),
            ("watch", json!({ "path": granted.join("link") })),
            ("watch", json!({ "path": granted.join("missing") })),
        ],
    )
    .await;
    assert_eq!(got[0]["code"], "EACCES", "{got:?}");
    let message = got[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "EACCES: permission denied, watch '{outside_shown}'"
        )) && message.contains("capabilities.read"),
        "{message}"
    );
    if cfg!(unix) {
        assert_eq!(got[1]["code"], "EACCES", "{got:?}");
    }
    assert_eq!(got[2]["code"], "ENOENT", "{got:?}");
    // The recursive watch over `granted` hears its own tree, not what the
    // link leads to.
    std::fs::write(outside.join("secret.txt"), "s").unwrap();
    std::fs::write(granted.join("sub/inside.txt"), "i").unwrap();
    let seen = seen_once(&host, &["rename sub/inside.txt"]).await;
    assert!(
        seen.contains(&"rename sub/inside.txt".to_string()),
        "{seen:?}"
    );
    assert!(!seen.iter().any(|s| s.contains("secret")), "{seen:?}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn watches_are_capped_and_end_when_closed_and_when_the_plugin_is_dropped() {
    let _serial = SERIAL.lock().await;
    // The threads of watches other tests closed may still be ending.
    let held = watches_held();
    let before = settles_at((held.1, held.1)).await;
    let dir = tempfile::tempdir().unwrap();
    let (plugins, host) = install(dir.path(), false);
    // The host watches its plugin folder too.
    let open = (before.0 + 1, before.1 + 1);
    let (threads, instances) = (open.0 + 1, open.1 + 1);
    assert_eq!(settles_at((threads, instances)).await, (threads, instances));
    let limit = yohost::adapter::js::watch::MAX_WATCHES;
    let calls = vec![("watch", json!({ "path": dir.path(), "count": limit }))];
    let got = json_answers(&host, calls).await[0].clone();
    let got = got.as_array().unwrap();
    assert!(got[..limit - 1].iter().all(|a| a == "ok"), "{got:?}");
    assert_eq!(got[limit - 1]["code"], "EMFILE", "{got:?}");
    // The plugin's watches share one watcher: one thread, one instance.
    let full = (open.0 + 1, open.1 + 1);
    assert_eq!(settles_at(full).await, full);
    json_answers(&host, vec![("close", json!({}))]).await;
    assert_eq!(settles_at(open).await, open, "closed");
    // Watches started again end when the plugin is dropped.
    json_answers(&host, vec![("watch", json!({ "path": dir.path() }))]).await;
    assert_eq!(settles_at((open.0 + 1, open.1 + 1)).await.0, open.0 + 1);
    drop(host);
    drop(plugins);
    assert_eq!(settles_at(before).await, before, "dropped");
}
