//! Members read from a Node built-in's namespace (`import * as fs from
//! "node:fs"`, then `fs.realpathSync(…)`) that the embedded engine's
//! stand-in lacks, through a real `yoagent::Agent`:
//! - under `engine = "auto"`, with pi on Node registered, the extension
//!   runs on Node, and the report says which members sent it there;
//! - with no pi adapter on Node, it stays on the embedded engine, warned of
//!   the members and of why, where reading one gives `undefined` (as a
//!   missing member does anywhere): it is not refused for code that may
//!   never run;
//! - with `engine = "embedded"` it loads there, warned of the members.

use crate::package::{open, open_with_node};
use crate::support;

use serde_json::json;
use std::path::Path;
use support::*;
use yohost::{PluginHost, PluginReport, Status};

/// A tool that answers the real path of the folder it is given, through
/// `fs.realpathSync` when its namespace has it.
const REAL_PATH: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import * as fs from "node:fs";
import { Type } from "typebox";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "real_path",
    description: "the real path of a folder",
    parameters: Type.Object({ path: Type.String() }),
    async execute(_id: string, params: { path: string }) {
      const text = typeof fs.realpathSync === "function"
        ? fs.realpathSync(params.path)
        : "no realpathSync here";
      return { content: [{ type: "text", text }], details: {} };
    },
  });
}
"#;

/// The extension in `dir/reader`, with `manifest` as its `plugin.toml`,
/// and the folder it is asked about: its own, through a symbolic link.
fn install(dir: &Path, manifest: &str) -> std::path::PathBuf {
    write(dir, "reader/index.ts", REAL_PATH);
    write(dir, "reader/plugin.toml", manifest);
    let link = dir.join("reader/here");
    std::os::unix::fs::symlink(dir.join("reader"), &link).unwrap();
    link
}

/// What `real_path` answers about `path` behind `host`.
async fn real_path(host: &PluginHost, path: &Path) -> (String, bool) {
    let (agent, _) = scripted(vec![
        call("real_path", json!({ "path": path })),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "where").await);
    assert_eq!(results.len(), 1, "{results:?}");
    (results[0].1.clone(), results[0].2)
}

async fn reader(host: &PluginHost) -> PluginReport {
    let report = host.report().await;
    let entry = reported(&report, "reader").clone();
    assert_eq!(entry.status, Status::Loaded, "{entry:?}");
    entry
}

#[tokio::test]
async fn auto_sends_an_extension_that_reads_a_member_only_node_has_to_node() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    let link = install(dir.path(), "");
    let host = open_with_node(dir.path());
    let entry = reader(&host).await;
    assert_eq!(entry.engine.as_deref(), Some("node"), "{entry:?}");
    let why = entry.routed.clone().unwrap_or_default();
    assert!(why.contains("reads `realpathSync` of \"node:fs\""), "{why}");
    let real = dir.path().join("reader").canonicalize().unwrap();
    assert_eq!(
        real_path(&host, &link).await,
        (real.display().to_string(), false)
    );
}

#[tokio::test]
async fn without_node_for_pi_it_stays_embedded_warned_of_the_members() {
    let dir = plugin_dir();
    let link = install(dir.path(), "");
    let host = open(dir.path()).unwrap();
    let entry = reader(&host).await;
    assert_eq!(entry.engine.as_deref(), Some("js"), "{entry:?}");
    assert_eq!(entry.routed, None);
    let warned = |what: &str| entry.warnings.iter().any(|w| w.contains(what));
    assert!(
        warned("reads `realpathSync` of \"node:fs\"") && warned("each read gives `undefined`"),
        "{:?}",
        entry.warnings
    );
    assert!(
        warned("it stays on the embedded engine: it would run on Node, where no adapter serves pi plugins"),
        "{:?}",
        entry.warnings
    );
    assert_eq!(
        real_path(&host, &link).await,
        ("no realpathSync here".to_string(), false)
    );
}

#[tokio::test]
async fn held_to_the_embedded_engine_it_loads_there_warned_of_the_members() {
    let dir = plugin_dir();
    install(dir.path(), "engine = \"embedded\"\n");
    let host = open_with_node(dir.path());
    let entry = reader(&host).await;
    assert_eq!(entry.engine.as_deref(), Some("js"), "{entry:?}");
    assert!(
        entry
            .warnings
            .iter()
            .any(|w| w.contains("reads `realpathSync` of \"node:fs\"")),
        "{:?}",
        entry.warnings
    );
    assert!(
        !entry
            .warnings
            .iter()
            .any(|w| w.contains("stays on the embedded engine")),
        "{:?}",
        entry.warnings
    );
}
