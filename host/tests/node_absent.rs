//! Without Node (no `node` on PATH), `engine = "auto"` cannot route: a
//! plugin whose import graph needs Node is refused, naming what it needs
//! and saying that installing Node would load it; a plugin that does not
//! need Node still loads on the embedded engine.
//!
//! One test in its own binary: it empties PATH for the whole process, and
//! the host looks for `node` once per process.

mod support;

use support::*;
use yohost::{PluginHost, Status};

#[tokio::test]
async fn without_node_a_plugin_that_needs_it_is_refused_saying_what_would_load_it() {
    let empty = plugin_dir();
    std::env::set_var("PATH", empty.path());
    let dir = plugin_dir();
    write(
        dir.path(),
        "server/index.ts",
        "import { createServer } from \"node:net\";\nexport default { name: typeof createServer };\n",
    );
    write(
        dir.path(),
        "plain/index.ts",
        "import { definePlugin } from \"yohost\";\nexport default definePlugin({ before_tool: () => null });\n",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let server = reported(&report, "server");
    assert_eq!(server.status, Status::Refused, "{report:?}");
    let reason = server.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("imports \"node:net\"")
            && reason.contains("installing Node.js 20 or newer would load it"),
        "{reason}"
    );
    let plain = reported(&report, "plain");
    assert_eq!(plain.status, Status::Loaded, "{report:?}");
    assert_eq!(plain.engine.as_deref(), Some("js"));
}
