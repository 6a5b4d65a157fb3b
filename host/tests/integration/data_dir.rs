//! Each plugin's data folder, outside the plugin directory, through a real
//! `yoagent::Agent`: what a plugin writes there survives runs without
//! reloading it; no plugin reaches another's; a check makes none; a
//! planted one refuses the plugin; a Node plugin's process is told where it
//! is (`YOHOST_DATA_DIR`) and may write there under the kernel sandbox; a
//! Python plugin finds it as `plugin.data_dir`, a dylib as
//! `yohost_sdk::data_dir()`.

use crate::support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use support::*;
use yohost::adapter::data_dir::{directory_folder, plugin_folder};
use yohost::{PluginHost, Status};

/// A tool `count` that adds one to the number in `count` in its data
/// folder and answers `<number> <data folder>`.
const COUNTER: &str = r#"
import { definePlugin, fs } from "yohost";

export default definePlugin({
  tools: [{
    name: "count",
    run(_args, ctx) {
      const file = ctx.dataDir + "/count";
      const before = fs.exists(file) ? Number(fs.readText(file)) : 0;
      fs.writeText(file, String(before + 1));
      return `${before + 1} ${ctx.dataDir}`;
    },
  }],
});
"#;

/// A tool `peek` that tries to read and to write the data folder of the
/// plugin `counter` beside its own, and says what each attempt gave.
const PEEKER: &str = r#"
import { definePlugin, fs } from "yohost";

function attempt(run: () => unknown): string {
  try {
    return "ok:" + String(run());
  } catch (e) {
    return "denied:" + ((e as { code?: string }).code ?? String(e));
  }
}

export default definePlugin({
  tools: [{
    name: "peek",
    run(_args, ctx) {
      const other = ctx.dataDir + "/../counter/count";
      return [attempt(() => fs.readText(other)), attempt(() => fs.writeText(other, "99"))].join(" ");
    },
  }],
});
"#;

/// Call tool `tool` in one run of an agent with `host`: its result.
async fn call_once(host: &PluginHost, tool: &str) -> (String, bool) {
    let (agent, _) = scripted(vec![call(tool, json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results.len(), 1, "{results:?}");
    (results[0].1.clone(), results[0].2)
}

fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap()
}

/// A host of the `count` plugins in `plugins`, each loaded, with the data
/// folders under `data`.
fn open_with_data(plugins: &Path, data: &Path, count: usize) -> PluginHost {
    let host = PluginHost::builder(plugins).data_dir(data).open().unwrap();
    assert_eq!(host.plugins().len(), count, "{:?}", host.refused());
    host
}

/// Where plugin `name` of `plugins` keeps its data under `data`, symlinks
/// resolved.
fn data_folder(data: &Path, plugins: &Path, name: &str) -> PathBuf {
    real(&plugin_folder(
        &directory_folder(data, plugins).unwrap(),
        name,
    ))
}

#[tokio::test]
async fn a_plugin_keeps_what_it_writes_in_its_data_folder_across_runs_without_a_reload() {
    let plugins = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    write(plugins.path(), "counter/index.ts", COUNTER);
    let host = open_with_data(plugins.path(), data.path(), 1);
    let before = host.plugins();

    let (first, failed) = call_once(&host, "count").await;
    assert!(!failed, "{first}");
    let (count, folder) = first.split_once(' ').unwrap();
    assert_eq!(count, "1");
    let (second, _) = call_once(&host, "count").await;
    assert_eq!(second, format!("2 {folder}"));

    let after = host.plugins();
    assert!(
        Arc::ptr_eq(&before[0], &after[0]),
        "the plugin was loaded again for what it wrote"
    );
    let folder = PathBuf::from(folder);
    assert!(
        folder.starts_with(real(data.path())),
        "{}",
        folder.display()
    );
    assert!(!folder.starts_with(real(plugins.path())));
    let expected = plugin_folder(
        &directory_folder(data.path(), plugins.path()).unwrap(),
        "counter",
    );
    assert_eq!(folder, real(&expected));
    assert_eq!(std::fs::read_to_string(folder.join("count")).unwrap(), "2");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&folder).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[tokio::test]
async fn a_plugin_cannot_reach_another_plugin_s_data_folder() {
    let plugins = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    write(plugins.path(), "counter/index.ts", COUNTER);
    write(plugins.path(), "peeker/index.ts", PEEKER);
    let host = open_with_data(plugins.path(), data.path(), 2);
    let (counted, _) = call_once(&host, "count").await;
    assert!(counted.starts_with("1 "), "{counted}");
    let (peeked, _) = call_once(&host, "peek").await;
    assert_eq!(peeked, "denied:EACCES denied:EACCES");
    let (counted, _) = call_once(&host, "count").await;
    assert!(
        counted.starts_with("2 "),
        "untouched by the other: {counted}"
    );
}

#[tokio::test]
async fn a_check_makes_no_data_folder() {
    let plugins = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    let root = data.path().join("root");
    write(plugins.path(), "counter/index.ts", COUNTER);
    let host = PluginHost::builder(plugins.path())
        .data_dir(&root)
        .dry_run(true)
        .open()
        .unwrap();
    let report = host.report().await;
    assert_eq!(reported(&report, "counter").status, Status::Loaded);
    assert!(!root.exists(), "a check made {}", root.display());
}

#[tokio::test]
async fn a_planted_data_folder_refuses_the_plugin_and_is_left_alone() {
    let plugins = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    write(plugins.path(), "counter/index.ts", COUNTER);
    let elsewhere = data.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let folder = directory_folder(data.path(), plugins.path()).unwrap();
    std::fs::create_dir(&folder).unwrap();
    std::os::unix::fs::symlink(&elsewhere, plugin_folder(&folder, "counter")).unwrap();
    let host = PluginHost::builder(plugins.path())
        .data_dir(data.path())
        .open()
        .unwrap();
    let report = host.report().await;
    let refused = reported(&report, "counter");
    assert_eq!(refused.status, Status::Refused);
    let why = format!("{refused:?}");
    assert!(
        why.contains("data folder") && why.contains("not private"),
        "{why}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// A Node plugin's tool that writes into the folder its process's
/// `YOHOST_DATA_DIR` names, with `node:fs`, and answers what it read back.
#[cfg(feature = "node")]
const ON_NODE: &str = r#"
import { definePlugin } from "yohost";
import fs from "node:fs";

export default definePlugin({
  tools: [{
    name: "note",
    run(_args, ctx) {
      const dir = process.env.YOHOST_DATA_DIR ?? "unset";
      const file = dir + "/note";
      const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      fs.writeFileSync(file, before + "x");
      return `${fs.readFileSync(file, "utf8")} ${dir === ctx.dataDir} ${dir}`;
    },
  }],
});
"#;

#[cfg(feature = "node")]
#[tokio::test]
async fn a_node_plugin_s_process_writes_where_yohost_data_dir_names() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let plugins = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    write(plugins.path(), "noter/index.ts", ON_NODE);
    write(plugins.path(), "noter/plugin.toml", "engine = \"node\"\n");
    let host = open_with_data(plugins.path(), data.path(), 1);
    let (first, failed) = call_once(&host, "note").await;
    assert!(!failed, "{first}");
    let (second, _) = call_once(&host, "note").await;
    let expected = data_folder(data.path(), plugins.path(), "noter");
    assert_eq!(first, format!("x true {}", expected.display()));
    assert_eq!(second, format!("xx true {}", expected.display()));
}

/// A Python plugin's tool that counts in the folder `plugin.data_dir`
/// names, and answers `<count> <folder>`.
#[cfg(feature = "python")]
const PYTHON_COUNTER: &str = r#"
from pathlib import Path
from yohost import Plugin

plugin = Plugin("pycount")
started_in = plugin.data_dir


@plugin.tool(name="pycount")
def pycount(call):
    file = Path(plugin.data_dir) / "count"
    count = int(file.read_text()) + 1 if file.exists() else 1
    file.write_text(str(count))
    return f"{count} {plugin.data_dir == started_in} {plugin.data_dir}"
"#;

#[cfg(feature = "python")]
#[tokio::test]
async fn a_python_plugin_finds_its_data_folder_as_plugin_data_dir() {
    let plugins = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    write(plugins.path(), "pycount.py", PYTHON_COUNTER);
    let host = open_with_data(plugins.path(), data.path(), 1);
    let expected = data_folder(data.path(), plugins.path(), "pycount");
    let (first, failed) = call_once(&host, "pycount").await;
    assert!(!failed, "{first}");
    assert_eq!(first, format!("1 True {}", expected.display()));
    let (second, _) = call_once(&host, "pycount").await;
    assert_eq!(second, format!("2 True {}", expected.display()));
}

#[cfg(feature = "dylib")]
#[tokio::test]
async fn a_dylib_plugin_is_told_its_data_folder_and_keeps_what_it_writes_there() {
    let plugins = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    let library = example_dylib("fixture_keeper");
    write(
        plugins.path(),
        "keeper/plugin.toml",
        &format!("entry = {:?}\n", library.display().to_string()),
    );
    let host = open_with_data(plugins.path(), data.path(), 1);
    let expected = data_folder(data.path(), plugins.path(), "keeper");
    let (first, failed) = call_once(&host, "keep").await;
    assert!(!failed, "{first}");
    assert_eq!(first, format!("x {}", expected.display()));
    let (second, _) = call_once(&host, "keep").await;
    assert_eq!(second, format!("xx {}", expected.display()));
}
