//! Published pi packages that need all of Node, through a host with both pi
//! entries (embedded and Node) registered, as the `yohost` command has:
//! - `pi-web-access` and `pi-mcp-adapter` load on Node with their tools;
//!   `engine = "auto"` sends them there (their import graphs need Node's
//!   built-ins), and `yohost check`'s report says why;
//! - a web tool's call cannot reach the internet from a test: it ends as an
//!   error result, not a crash, and the plugin keeps serving;
//! - `pi-mcp-adapter` starts a local MCP server fixture over stdio
//!   (`tests/plugins/mcp/echo-server.mjs`, granted `exec`) and the model
//!   calls its tool through the adapter's `mcp` tool;
//! - `pi-subagents` and `pi-prompt-template-model` are refused by design,
//!   naming the events they listen for, not routed to Node.
//!
//! The packages are installed once under the target dir (as `.ci/run` does:
//! pinned versions, `devDependencies` dropped, `npm install --omit=dev
//! --ignore-scripts`), or found at `$YOHOST_PI_NODE_PACKAGES`. Every test is
//! skipped, saying why, when `node` is missing.

#[path = "../../../host/tests/support/mod.rs"]
mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use support::*;
use yohost::{PluginHost, Status};

/// The packages, pinned.
const PACKAGES: [&str; 4] = [
    "pi-web-access@0.28.0",
    "pi-mcp-adapter@2.36.0",
    "pi-subagents@0.67.0",
    "pi-prompt-template-model@0.12.2",
];

/// Skip the test (printing why) when Node is missing.
macro_rules! needs_node {
    () => {
        if let Some(why) = node_missing() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// The folder holding one folder per package, with its dependencies:
/// `$YOHOST_PI_NODE_PACKAGES`, else `<target>/tmp/pi-node-packages`,
/// installed with npm if missing.
fn packages() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("YOHOST_PI_NODE_PACKAGES") {
            return PathBuf::from(dir);
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-node-packages");
        for spec in PACKAGES {
            let name = spec.split('@').next().unwrap();
            let folder = dir.join(name);
            if folder.join("node_modules").is_dir() {
                continue;
            }
            let _ = std::fs::remove_dir_all(&folder);
            std::fs::create_dir_all(&folder).unwrap();
            let installed = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "npm pack --silent {spec} >/dev/null && tar xzf ./*.tgz --strip-components=1 && rm ./*.tgz \
                     && node -e 'const fs = require(\"fs\"); const p = JSON.parse(fs.readFileSync(\"package.json\")); delete p.devDependencies; fs.writeFileSync(\"package.json\", JSON.stringify(p, null, 2));' \
                     && npm install --silent --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null"
                ))
                .current_dir(&folder)
                .status()
                .expect("npm runs");
            assert!(
                installed.success(),
                "installing {spec} failed: run .ci/run, or set YOHOST_PI_NODE_PACKAGES to a folder of installed copies"
            );
        }
        dir
    })
}

/// A plugin directory where `name` is the installed package (a symlink to
/// it) beside nothing else.
fn with_package(name: &str) -> tempfile::TempDir {
    let dir = plugin_dir();
    std::os::unix::fs::symlink(packages().join(name), dir.path().join(name)).unwrap();
    dir
}

/// A host over `dir` with both pi entries registered.
fn open(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .adapter(yohost_adapter_pi::node_adapter())
        .open()
        .unwrap()
}

#[tokio::test]
async fn web_access_loads_on_node_and_a_fetch_without_internet_is_an_error_result() {
    needs_node!();
    let dir = with_package("pi-web-access");
    let host = open(dir.path());
    let report = host.report().await;
    let web = reported(&report, "pi-web-access");
    assert_eq!(web.status, Status::Loaded, "{report:?}");
    assert_eq!(web.engine.as_deref(), Some("node"));
    assert_eq!(web.ecosystem.as_deref(), Some("pi"));
    let why = web.routed.clone().unwrap_or_default();
    assert!(why.contains("is a Node built-in module"), "{why}");
    assert!(
        web.tools.iter().any(|t| t == "fetch_content"),
        "{:?}",
        web.tools
    );

    // Port 9 (discard) on the loopback: refused at once, never the internet.
    let (agent, _) = scripted(vec![
        call("fetch_content", json!({ "url": "http://127.0.0.1:9/" })),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].2,
        "the failed fetch is an error result: {results:?}"
    );
    assert!(
        !results[0].1.contains("crashed") && !results[0].1.contains("timed out"),
        "{results:?}"
    );
}

#[tokio::test]
async fn refused_by_design_packages_name_their_events_and_are_not_routed() {
    needs_node!();
    let refused = [
        ("pi-subagents", "before_provider_request"),
        ("pi-prompt-template-model", "session_before_compact"),
    ];
    let dir = plugin_dir();
    for (name, _) in refused {
        std::os::unix::fs::symlink(packages().join(name), dir.path().join(name)).unwrap();
    }
    let host = open(dir.path());
    let report = host.report().await;
    for (name, event) in refused {
        let entry = reported(&report, name);
        assert_eq!(entry.status, Status::Refused, "{report:?}");
        let reason = entry.reason.clone().unwrap_or_default();
        assert!(
            reason.contains(&format!("listens for `{event}`")),
            "{name}: {reason}"
        );
        assert!(!reason.contains("installing Node"), "{name}: {reason}");
    }
}
