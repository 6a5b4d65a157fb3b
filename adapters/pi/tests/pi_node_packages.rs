//! Published pi packages that need all of Node, through a host with both pi
//! entries (embedded and Node) registered, as the `yohost` command has:
//! `pi-subagents` and `pi-prompt-template-model` are refused by design,
//! naming the events they listen for (`before_provider_request`,
//! `session_before_compact`), and are not routed to Node, whether what
//! stops their load first is an import the embedded engine lacks or a
//! module their code imports while it loads; `pi-web-access` is routed to
//! Node, loads with its tools, and a fetch that fails is an error result.
//!
//! The packages (with `pi-web-access` and `pi-mcp-adapter`) are installed
//! once under the target dir (as `.ci/run` does: pinned versions,
//! `devDependencies` dropped, their pi peers pinned to the pi the adapter
//! follows (1.6.0), `npm install --omit=dev --ignore-scripts`), or found at
//! `$YOHOST_PI_NODE_PACKAGES`. Every test is skipped, saying why, when
//! `node` is missing.

#[path = "../../../host/tests/support/mod.rs"]
mod support;

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
                    "npm pack --silent {spec} >/dev/null && tar xzf ./*.tgz --strip-components=1 && rm -f ./*.tgz package-lock.json \
                     && node -e 'const fs = require(\"fs\"); const p = JSON.parse(fs.readFileSync(\"package.json\")); delete p.devDependencies; for (const k of Object.keys(p.peerDependencies ?? {{}})) if (k.startsWith(\"@earendil-works/\")) p.peerDependencies[k] = \"1.6.0\"; fs.writeFileSync(\"package.json\", JSON.stringify(p, null, 2));' \
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

/// A host over `dir` with both pi entries registered.
fn open(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .adapter(yohost_adapter_pi::node_adapter())
        .open()
        .unwrap()
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

/// `pi-web-access` needs Node (`node:net`, `node:http`, …), so it is routed
/// there and loads with its tools. The tests never reach the internet: a
/// fetch of an address nothing serves ends as the tool's error result, and
/// the run goes on to its end.
#[tokio::test]
async fn pi_web_access_loads_on_node_and_a_failed_fetch_is_an_error_result() {
    needs_node!();
    let dir = plugin_dir();
    std::os::unix::fs::symlink(
        packages().join("pi-web-access"),
        dir.path().join("pi-web-access"),
    )
    .unwrap();
    let host = open(dir.path());
    let report = host.report().await;
    let entry = reported(&report, "pi-web-access");
    assert_eq!(entry.status, Status::Loaded, "{report:?}");
    assert_eq!(entry.engine.as_deref(), Some("node"), "{entry:?}");
    assert!(entry.routed.is_some(), "{entry:?}");
    for tool in ["web_search", "fetch_content"] {
        assert!(entry.tools.iter().any(|t| t == tool), "{tool}: {entry:?}");
    }

    let (agent, _) = scripted(vec![
        call(
            "fetch_content",
            serde_json::json!({"url": "http://127.0.0.1:9/"}),
        ),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "fetch it").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    let (name, _, is_error) = &results[0];
    assert_eq!(name, "fetch_content");
    assert!(*is_error, "{results:?}");
    assert_eq!(
        final_assistant(&events),
        (yoagent::StopReason::Stop, None),
        "the run ends as the model answers"
    );
}
