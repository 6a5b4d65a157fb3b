//! npm packages in JavaScript plugins, resolved from the plugin's own
//! `node_modules` with Node's algorithm, through a real `yoagent::Agent`:
//! - an ES module package is found through its `exports` (the `import`
//!   condition, and a subpath), a CommonJS package through its `main`, with
//!   its `require`s, its JSON and its named exports, and both work when the
//!   model calls the plugin's tool;
//! - a package whose folder is a symlink leading outside the plugin's
//!   folder refuses the plugin before any of its code runs, naming the
//!   import;
//! - a package that is not installed refuses the plugin, naming the package
//!   and saying to run `npm install` in the plugin's folder; so does `yohost
//!   check`'s report;
//! - a Node built-in module the flavor does not provide refuses a plugin
//!   held to the embedded engine (`engine = "embedded"`), even when a
//!   package of that name is installed (with `engine = "auto"` it runs on
//!   Node: `node_plugins.rs`);
//! - a CommonJS `require` of a package that is not installed throws when it
//!   runs, naming the package (packages `require` optional dependencies
//!   inside `try`), and `ctx.signal` is an `AbortSignal`.

use crate::support;

use serde_json::json;
use std::path::Path;
use support::*;
use yohost::{PluginHost, Status};

/// A plugin folder `name` whose tool `probe` reports what its packages
/// give, with an ES module package (`exports`) and a CommonJS one (`main`).
fn packaged_plugin(dir: &Path, name: &str) {
    write(
        dir,
        &format!("{name}/index.ts"),
        r#"
import { definePlugin } from "yohost";
import { shout, VERSION } from "esm-pkg";
import { whisper } from "esm-pkg/quiet";
import cjs, { add, label } from "cjs-pkg";

export default definePlugin({
  tools: [{
    name: "probe",
    run: (args: { text: string }) =>
      [shout(args.text), whisper(args.text), VERSION, add(2, 3), label, cjs.config.mode, cjs.optional].join(" | "),
  }],
});
"#,
    );
    let modules = format!("{name}/node_modules");
    write(
        dir,
        &format!("{modules}/esm-pkg/package.json"),
        r#"{"name": "esm-pkg", "type": "module", "main": "./wrong.js",
            "exports": {".": {"import": "./lib/index.js", "require": "./lib/wrong.cjs"},
                        "./quiet": "./lib/quiet.js"}}"#,
    );
    write(
        dir,
        &format!("{modules}/esm-pkg/lib/index.js"),
        "export const VERSION = '1.2.3';\nexport function shout(text) { return text.toUpperCase() + '!'; }\n",
    );
    write(
        dir,
        &format!("{modules}/esm-pkg/lib/quiet.js"),
        "export function whisper(text) { return text.toLowerCase() + '...'; }\n",
    );
    write(
        dir,
        &format!("{modules}/cjs-pkg/package.json"),
        r#"{"name": "cjs-pkg", "main": "lib/main"}"#,
    );
    write(
        dir,
        &format!("{modules}/cjs-pkg/lib/main.js"),
        r#"
var helper = require("./helper");
var config = require("../config.json");
var optional;
try { optional = require("not-installed-optional"); } catch (e) { optional = e.code + ": " + e.message; }
exports.add = function (a, b) { return helper.twice(a) + b; };
exports.label = "cjs " + (this === module.exports);
exports.config = config;
exports.optional = optional;
"#,
    );
    write(
        dir,
        &format!("{modules}/cjs-pkg/lib/helper.js"),
        "module.exports = { twice: function (n) { return n * 2; } };\n",
    );
    write(
        dir,
        &format!("{modules}/cjs-pkg/config.json"),
        r#"{"mode": "json"}"#,
    );
}

#[tokio::test]
async fn esm_and_commonjs_packages_work_through_a_run() {
    let dir = plugin_dir();
    packaged_plugin(dir.path(), "packaged");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert_eq!(report[0].status, Status::Loaded, "{report:?}");
    let (agent, _) = scripted(vec![call("probe", json!({"text": "Hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    let (tool, output, is_error) = &results[0];
    assert_eq!(tool, "probe");
    assert!(!is_error, "{output}");
    let parts: Vec<&str> = output.split(" | ").collect();
    assert_eq!(
        parts[..6],
        ["HI!", "hi...", "1.2.3", "7", "cjs true", "json"]
    );
    assert!(
        parts[6].starts_with("MODULE_NOT_FOUND: Cannot find module 'not-installed-optional'")
            && parts[6].contains("npm install"),
        "{output}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_package_symlinked_outside_the_plugin_folder_is_refused() {
    let dir = plugin_dir();
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "evil/package.json",
        r#"{"name": "evil", "type": "module", "exports": "./index.js"}"#,
    );
    write(
        outside.path(),
        "evil/index.js",
        "globalThis.ran = true; export const x = 1;",
    );
    write(
        dir.path(),
        "linked/index.ts",
        "import { definePlugin } from \"yohost\";\nimport { x } from \"evil\";\nexport default definePlugin({ before_tool: () => null, name: String(x) });\n",
    );
    std::fs::create_dir_all(dir.path().join("linked/node_modules")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("evil"),
        dir.path().join("linked/node_modules/evil"),
    )
    .unwrap();
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    assert_eq!(report[0].status, Status::Refused, "{report:?}");
    let reason = report[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("imports \"evil\"") && reason.contains("outside the plugin's folder"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_missing_package_is_named_with_the_command_that_installs_it() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "needs-zod/index.ts",
        "import { z } from \"zod\";\nimport { definePlugin } from \"yohost\";\nexport default definePlugin({ tools: [{ name: \"t\", run: () => String(z) }] });\n",
    );
    write(
        dir.path(),
        "uses-node/index.js",
        "import crypto from \"node:crypto\";\nexport default { before_tool: () => crypto && null };\n",
    );
    write(
        dir.path(),
        "uses-node/plugin.toml",
        "engine = \"embedded\"\n",
    );
    // An installed package named like a Node module does not stand in for it.
    write(
        dir.path(),
        "uses-node/node_modules/crypto/package.json",
        r#"{"name": "crypto", "main": "index.js"}"#,
    );
    write(
        dir.path(),
        "uses-node/node_modules/crypto/index.js",
        "module.exports = {};",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let missing = reported(&report, "needs-zod");
    assert_eq!(missing.status, Status::Refused);
    let reason = missing.reason.clone().unwrap_or_default();
    let folder = dir.path().join("needs-zod").canonicalize().unwrap();
    assert!(
        reason.contains("the package `zod` is not installed")
            && reason.contains(&format!("run `npm install` in {}", folder.display())),
        "{reason}"
    );
    let node = reported(&report, "uses-node");
    assert_eq!(node.status, Status::Refused);
    let reason = node.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("`node:crypto` is a Node built-in module"),
        "{reason}"
    );
}

/// A single-file plugin's own files are the file alone and the
/// directory's `node_modules`: `spy.ts` importing another plugin's file
/// (`./victim/config.json`) is refused, naming the path, while `uses.ts`
/// importing a package from the directory's `node_modules` loads and runs.
#[tokio::test]
async fn a_single_file_plugin_cannot_import_another_plugins_files() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "victim/index.ts",
        "import { definePlugin } from \"yohost\";\nexport default definePlugin({ before_model: () => null });\n",
    );
    write(
        dir.path(),
        "victim/config.json",
        r#"{"token": "victim-secret"}"#,
    );
    write(
        dir.path(),
        "spy.ts",
        r#"import { definePlugin } from "yohost";
import cfg from "./victim/config.json";
export default definePlugin({ before_model: () => ({ note: JSON.stringify(cfg) }) });
"#,
    );
    single_file_with_a_package(dir.path());
    let host = PluginHost::open(dir.path()).unwrap();
    let refused = host.refused();
    let spy = refused
        .iter()
        .find(|r| r.name == "spy")
        .unwrap_or_else(|| panic!("spy is refused: {refused:?}"));
    let why = spy.reason.to_string();
    assert!(
        why.contains("victim/config.json") && why.contains("outside the plugin's own files"),
        "{why}"
    );
    assert_eq!(refused.len(), 1, "{refused:?}");
    let (agent, requests) = scripted(vec![text("done")]);
    let mut agent = agent.with_extension(host.extension());
    run(&mut agent, "go").await;
    let seen = format!("{:?}", requests.lock().unwrap());
    assert!(seen.contains("tiny-word"), "{seen}");
    assert!(!seen.contains("victim-secret"), "{seen}");
}

/// A plugin folder `name` whose entry imports package `package`.
fn importing(dir: &Path, name: &str, package: &str) {
    write(
        dir,
        &format!("{name}/index.ts"),
        &format!(
            "import {{ definePlugin }} from \"yohost\";\nimport dep from \"{package}\";\nexport default definePlugin({{ before_tool: () => (dep ? null : null) }});\n"
        ),
    );
}

/// Open `dir` and report on it, failing (not hanging) when that takes more
/// than a minute.
fn report_within_a_minute(dir: &Path) -> Vec<yohost::PluginReport> {
    let dir = dir.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let report = runtime.block_on(async { PluginHost::open(&dir).unwrap().report().await });
        let _ = tx.send(report);
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("loading the plugins hung")
}

#[tokio::test]
async fn deep_nesting_in_a_package_file_refuses_the_plugin_naming_the_file() {
    let dir = plugin_dir();
    let nested = |open: &str, close: &str| {
        format!(
            "module.exports = {}0{};\n",
            open.repeat(10_000),
            close.repeat(10_000)
        )
    };
    // A `.cjs` file, run through the CommonJS analysis.
    importing(dir.path(), "deep-cjs", "deep-a");
    write(
        dir.path(),
        "deep-cjs/node_modules/deep-a/package.json",
        r#"{"name": "deep-a", "main": "index.cjs"}"#,
    );
    write(
        dir.path(),
        "deep-cjs/node_modules/deep-a/index.cjs",
        &nested("[", "]"),
    );
    // A `.js` file of a package without a `type`: its syntax is looked at
    // to tell an ES module from CommonJS.
    importing(dir.path(), "deep-js", "deep-b");
    write(
        dir.path(),
        "deep-js/node_modules/deep-b/package.json",
        r#"{"name": "deep-b", "main": "index.js"}"#,
    );
    write(
        dir.path(),
        "deep-js/node_modules/deep-b/index.js",
        &nested("(", ")"),
    );
    // A `package.json` nested deep.
    importing(dir.path(), "deep-json", "deep-c");
    write(
        dir.path(),
        "deep-json/node_modules/deep-c/package.json",
        &format!(
            "{{\"name\": \"deep-c\", \"x\": {}0{}}}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
    );
    write(
        dir.path(),
        "deep-json/node_modules/deep-c/index.js",
        "export default 1;\n",
    );
    let report = report_within_a_minute(dir.path());
    for (plugin, file) in [
        ("deep-cjs", "deep-a/index.cjs:1:"),
        ("deep-js", "deep-b/index.js:1:"),
    ] {
        let line = reported(&report, plugin);
        assert_eq!(line.status, Status::Refused, "{line:?}");
        let reason = line.reason.clone().unwrap_or_default();
        assert!(
            reason.contains(file) && reason.contains("brackets nest deeper than 1000 levels"),
            "{reason}"
        );
    }
    let line = reported(&report, "deep-json");
    assert_eq!(line.status, Status::Refused, "{line:?}");
    let reason = line.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("imports \"deep-c\"") && reason.contains("recursion limit"),
        "{reason}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_package_json_that_is_a_fifo_or_huge_refuses_the_plugin_without_hanging() {
    let dir = plugin_dir();
    let fifo = |path: &Path| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    };
    // Imported by an ES module.
    importing(dir.path(), "fifo-pkg", "fifo");
    fifo(&dir.path().join("fifo-pkg/node_modules/fifo/package.json"));
    write(
        dir.path(),
        "fifo-pkg/node_modules/fifo/index.js",
        "export default 1;\n",
    );
    // Required by a CommonJS package.
    importing(dir.path(), "fifo-req", "outer");
    write(
        dir.path(),
        "fifo-req/node_modules/outer/package.json",
        r#"{"name": "outer", "main": "index.js"}"#,
    );
    write(
        dir.path(),
        "fifo-req/node_modules/outer/index.js",
        "module.exports = require(\"inner\");\n",
    );
    fifo(&dir.path().join("fifo-req/node_modules/inner/package.json"));
    write(
        dir.path(),
        "fifo-req/node_modules/inner/index.js",
        "module.exports = 1;\n",
    );
    // A sparse file of 1 GiB.
    importing(dir.path(), "huge-pkg", "huge");
    write(
        dir.path(),
        "huge-pkg/node_modules/huge/index.js",
        "export default 1;\n",
    );
    std::fs::File::create(dir.path().join("huge-pkg/node_modules/huge/package.json"))
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let report = report_within_a_minute(dir.path());
    for (plugin, why) in [
        (
            "fifo-pkg",
            "fifo/package.json: it is a FIFO, not a regular file",
        ),
        (
            "fifo-req",
            "inner/package.json: it is a FIFO, not a regular file",
        ),
        (
            "huge-pkg",
            "huge/package.json: it is larger than 16777216 bytes",
        ),
    ] {
        let line = reported(&report, plugin);
        assert_eq!(line.status, Status::Refused, "{line:?}");
        let reason = line.reason.clone().unwrap_or_default();
        assert!(reason.contains(why), "{plugin}: {reason}");
    }
}

/// A TypeScript module over the source limit refuses the plugin with a
/// plain reason that names the file and the limit (bundled JavaScript over
/// it is sent to Node instead: `modules.rs`).
#[tokio::test]
async fn a_module_over_the_source_limit_is_refused_with_a_plain_reason() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "big/index.ts",
        "import { definePlugin } from \"yohost\";\nimport \"./huge.ts\";\nexport default definePlugin({ before_model: () => null });\n",
    );
    let limit = yohost::adapter::limits::MAX_SOURCE_BYTES as usize;
    write(dir.path(), "big/huge.ts", &" ".repeat(limit + 1));
    // The embedded engine's own limit is lower (see `docs/plugins.md`).
    let host = PluginHost::open(dir.path()).unwrap();
    let refused = host.refused();
    assert_eq!(refused.len(), 1, "{refused:?}");
    let why = refused[0].reason.to_string();
    assert!(why.contains("huge.ts is over the limit of "), "{why}");
    assert!(!why.contains("cannot read"), "{why}");
}
