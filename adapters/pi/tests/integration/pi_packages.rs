//! pi packages as people publish them, on both engines:
//! - pi's own packages (`@earendil-works/pi-*`, `/compat` too) are the
//!   adapter's, the pi it follows (1.6.0), whatever version npm put in the
//!   extension's `node_modules` as a peer; a path of them the adapter does
//!   not serve (`pi-ai/oauth`) refuses the extension, naming it, and is
//!   not taken from that copy;
//! - every extension a package lists loads (files, folders, globs), as do
//!   those of a bare `extensions/` folder;
//! - a package that depends on pi's packages is a pi extension without a
//!   `pi` field;
//! - on Node, what jiti gives the extensions pi loads holds: `__dirname`
//!   and `__filename` in ES modules, and JSON imports.

use crate::support;

use crate::package;

use package::open_with_node;
use serde_json::json;
use support::*;
use yohost::PluginHost;

/// The engines a package is tried on: the embedded one, and Node when it
/// is installed (`engine = "node"` in the package's `plugin.toml`).
fn engines() -> Vec<&'static str> {
    match node_missing() {
        None => vec!["embedded", "node"],
        Some(why) => {
            eprintln!("Node skipped: {why}");
            vec!["embedded"]
        }
    }
}

/// The engine a report names for `engine`.
fn engine_name(engine: &str) -> Option<&'static str> {
    Some(if engine == "node" { "node" } else { "js" })
}

/// What calling `tool` answers, through a real agent over `host`.
async fn answer(host: &PluginHost, tool: &str) -> (String, bool) {
    let (agent, _) = scripted(vec![call(tool, json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    let (name, text, error) = results.into_iter().next().expect("the tool ran");
    assert_eq!(name, tool);
    (text, error)
}

/// A tool named `name` answering `text`, as a pi extension's source.
fn extension(name: &str, text: &str) -> String {
    format!(
        r#"export default function (pi) {{
  pi.registerTool({{ name: "{name}", label: "{name}", description: "{name}", parameters: {{ type: "object", properties: {{}} }},
    execute: async () => ({{ content: [{{ type: "text", text: {text} }}] }}) }});
}}
"#
    )
}

#[tokio::test]
async fn pi_packages_are_the_adapters_whatever_node_modules_holds() {
    for engine in engines() {
        let dir = plugin_dir();
        let package = dir.path().join("peer");
        write(
            &package,
            "package.json",
            r#"{"name": "peer", "type": "module", "pi": {"extensions": ["./index.ts"]},
                "peerDependencies": {"@earendil-works/pi-ai": "*"}}"#,
        );
        // What npm installs as the peer: an older pi-ai, without `./compat`.
        write(
            &package,
            "node_modules/@earendil-works/pi-ai/package.json",
            r#"{"name": "@earendil-works/pi-ai", "version": "0.74.2", "type": "module", "exports": {".": "./index.js"}}"#,
        );
        write(
            &package,
            "node_modules/@earendil-works/pi-ai/index.js",
            "export const PI_AI_VERSION = \"0.74.2\";\n",
        );
        write(
            &package,
            "index.ts",
            &format!(
                "import {{ getModel, PI_AI_VERSION }} from \"@earendil-works/pi-ai/compat\";\n\
                 import {{ VERSION }} from \"@earendil-works/pi-coding-agent\";\n{}",
                extension(
                    "versions",
                    "`${PI_AI_VERSION} ${VERSION} ${typeof getModel}`"
                )
            ),
        );
        if engine == "node" {
            write(&package, "plugin.toml", "engine = \"node\"\n");
        }
        let host = open_with_node(dir.path());
        let report = host.report().await;
        assert_eq!(
            reported(&report, "peer").reason,
            None,
            "{engine}: {report:?}"
        );
        assert_eq!(
            reported(&report, "peer").engine.as_deref(),
            engine_name(engine)
        );
        let (text, error) = answer(&host, "versions").await;
        assert_eq!(
            (text.as_str(), error),
            ("1.6.0 1.6.0 function", false),
            "{engine}"
        );
    }
}

#[tokio::test]
async fn every_extension_of_a_package_loads_as_pi_reads_its_layout() {
    for engine in engines() {
        let dir = plugin_dir();
        let listed = dir.path().join("listed");
        write(
            &listed,
            "package.json",
            r#"{"name": "listed", "pi": {"extensions": ["./tools", "./more/*.ts", "!**/off.ts"]}}"#,
        );
        write(&listed, "tools/alpha.ts", &extension("alpha", "\"a\""));
        write(&listed, "tools/beta/index.ts", &extension("beta", "\"b\""));
        write(&listed, "more/gamma.ts", &extension("gamma", "\"c\""));
        write(&listed, "more/off.ts", &extension("off", "\"x\""));
        let bare = dir.path().join("bare");
        write(&bare, "package.json", r#"{"name": "bare"}"#);
        write(
            &bare,
            "extensions/one.ts",
            &format!(
                "import type {{ ExtensionAPI }} from \"@earendil-works/pi-coding-agent\";\n{}",
                extension("one", "\"1\"")
            ),
        );
        write(&bare, "extensions/two.ts", &extension("two", "\"2\""));
        if engine == "node" {
            write(&listed, "plugin.toml", "engine = \"node\"\n");
            write(&bare, "plugin.toml", "engine = \"node\"\n");
        }
        let host = open_with_node(dir.path());
        let report = host.report().await;
        let listed = reported(&report, "listed");
        assert_eq!(
            listed.tools,
            ["alpha", "beta", "gamma"],
            "{engine}: {listed:?}"
        );
        let bare = reported(&report, "bare");
        assert_eq!(bare.ecosystem.as_deref(), Some("pi"), "{engine}: {bare:?}");
        assert_eq!(bare.engine.as_deref(), engine_name(engine), "{bare:?}");
        assert_eq!(bare.tools, ["one", "two"], "{engine}: {bare:?}");
        assert_eq!(answer(&host, "gamma").await, ("c".to_string(), false));
    }
}

#[tokio::test]
async fn a_package_that_depends_on_pi_is_pi_without_a_pi_field() {
    let dir = plugin_dir();
    let package = dir.path().join("compiled");
    // Compiled from TypeScript: the `import type` of pi is gone.
    write(
        &package,
        "package.json",
        r#"{"name": "compiled", "type": "module", "main": "dist/index.js",
            "peerDependencies": {"@earendil-works/pi-coding-agent": "*"}}"#,
    );
    write(&package, "dist/index.js", &extension("compiled", "\"ok\""));
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let compiled = reported(&report, "compiled");
    assert_eq!(compiled.ecosystem.as_deref(), Some("pi"), "{compiled:?}");
    assert_eq!(answer(&host, "compiled").await, ("ok".to_string(), false));
}

#[tokio::test]
async fn a_path_of_pis_packages_the_adapter_does_not_serve_is_refused_by_name() {
    for engine in engines() {
        let dir = plugin_dir();
        let package = dir.path().join("oauth");
        write(
            &package,
            "package.json",
            r#"{"name": "oauth", "type": "module", "pi": {"extensions": ["./index.ts"]},
                "peerDependencies": {"@earendil-works/pi-ai": "*"}}"#,
        );
        write(
            &package,
            "node_modules/@earendil-works/pi-ai/package.json",
            r#"{"name": "@earendil-works/pi-ai", "version": "1.6.0", "type": "module", "exports": {"./oauth": "./oauth.js"}}"#,
        );
        write(
            &package,
            "node_modules/@earendil-works/pi-ai/oauth.js",
            "export const login = () => \"the copy in node_modules\";\n",
        );
        write(
            &package,
            "index.ts",
            &format!(
                "import {{ login }} from \"@earendil-works/pi-ai/oauth\";\n{}",
                extension("login", "login()")
            ),
        );
        if engine == "node" {
            write(&package, "plugin.toml", "engine = \"node\"\n");
        }
        let host = open_with_node(dir.path());
        let report = host.report().await;
        let refused = reported(&report, "oauth");
        let reason = refused.reason.clone().unwrap_or_default();
        assert!(
            reason.contains("imports \"@earendil-works/pi-ai/oauth\": `@earendil-works/pi-ai` is served by the host")
                && reason.contains("@earendil-works/pi-ai/compat"),
            "{engine}: {reason}"
        );
        assert_eq!(refused.engine.as_deref(), engine_name(engine), "{engine}");
    }
}

/// pi loads TypeScript with jiti, so extensions written for it use
/// CommonJS's `__dirname` and `__filename` in ES modules, and import JSON
/// files (`with { type: "json" }`): on Node, a module that uses the names
/// without declaring them gets them from its `import.meta`, one that
/// declares its own keeps them, and a JSON import is the file's value.
#[tokio::test]
async fn jiti_s_file_names_and_json_imports_work_on_node() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    let package = dir.path().join("jiti-style");
    write(
        &package,
        "package.json",
        r#"{"name": "jiti-style", "version": "1.2.3", "pi": {"extensions": ["./index.ts"]}}"#,
    );
    write(&package, "plugin.toml", "engine = \"node\"\n");
    write(
        &package,
        "own.ts",
        "import { dirname } from \"node:path\";\nimport { fileURLToPath } from \"node:url\";\nconst __dirname = dirname(fileURLToPath(import.meta.url));\nexport const own = __dirname;\n",
    );
    write(
        &package,
        "index.ts",
        &extension(
            "names",
            "[pkg.version, __dirname === import.meta.dirname, __filename === import.meta.filename, own === __dirname].join(\" \")",
        )
        .replace(
            "export default",
            "import pkg from \"./package.json\" with { type: \"json\" };\nimport { own } from \"./own.ts\";\nexport default",
        ),
    );
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let entry = reported(&report, "jiti-style");
    assert_eq!(entry.engine.as_deref(), Some("node"), "{entry:?}");
    assert_eq!(
        answer(&host, "names").await,
        ("1.2.3 true true true".to_string(), false)
    );
}
