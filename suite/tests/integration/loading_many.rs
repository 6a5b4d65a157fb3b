//! A directory of many plugins of every engine and pi, which the host
//! loads several at a time:
//! - every plugin loads, in running order (priority, then name), the same
//!   for every host opened over the directory, and each kind's policy
//!   denies `rm -rf` through a real agent run;
//! - loads run side by side: a Python and a TypeScript plugin that each
//!   take a second to load load in well under two seconds together;
//! - refusals among many plugins keep their file-name order, the second of
//!   two plugins with one name is the one refused, and a refused required
//!   plugin fails every run, naming it.

use crate::support;

use crate::wasm_guests;

use crate::plugin_dirs;

use plugin_dirs::{write_mixed, write_plugin, Kind, Libraries};
use serde_json::json;
use std::path::Path;
use support::*;
use yohost::{LoadError, PluginHost};

fn libraries() -> Libraries {
    Libraries {
        dylib: wasm_guests::native_guest("example_policy"),
        wasm: wasm_guests::guest("guest_policy"),
    }
}

fn open(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .open()
        .expect("the host opens")
}

fn names(host: &PluginHost) -> Vec<String> {
    host.plugins().iter().map(|p| p.name.clone()).collect()
}

#[tokio::test]
async fn many_plugins_of_every_engine_load_in_running_order_and_each_kind_denies() {
    let dir = plugin_dir();
    let written = write_mixed(dir.path(), 40, &libraries());
    let host = open(dir.path());
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    assert_eq!(names(&host), written);
    assert_eq!(
        names(&open(dir.path())),
        written,
        "the same order every time"
    );

    for kind in Kind::ALL {
        let plugin = written[Kind::ALL.iter().position(|k| *k == kind).unwrap()].clone();
        let extension = host
            .extensions()
            .into_iter()
            .find(|e| yoagent::extension::Extension::name(e) == plugin)
            .unwrap_or_else(|| panic!("{plugin} has an extension"));
        let (agent, bash) = scripted_bash(vec![
            call("bash", json!({"command": "rm -rf /"})),
            text("done"),
        ]);
        let mut agent = agent.with_extension(extension);
        let results = tool_results(&run(&mut agent, "clean up").await);
        assert!(results[0].2, "{plugin} ({kind:?}) denies: {results:?}");
        assert!(
            results[0].1.contains("rm -rf"),
            "{plugin} ({kind:?}): {results:?}"
        );
        assert!(bash.commands().is_empty(), "{plugin} ({kind:?})");
    }
}

/// A Python plugin whose import sleeps for a second.
const SLOW_PYTHON: &str = "import time\nfrom yohost import Plugin\ntime.sleep(1)\nplugin = Plugin()\n\n@plugin.before_tool\ndef allow(call):\n    return None\n";

/// A TypeScript plugin whose module spins for a second before it is ready.
const SLOW_TS: &str = r#"import { definePlugin } from "yohost";
const until = Date.now() + 1000;
while (Date.now() < until) {}
export default definePlugin({ before_tool() { return null; } });
"#;

#[test]
fn plugins_slow_to_load_load_side_by_side() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return; // one loader: nothing runs side by side
    }
    // Start the interpreter first: the first Python plugin of a process
    // starts it, which is not what this measures.
    let warm = plugin_dir();
    write(
        warm.path(),
        "warm.py",
        &SLOW_PYTHON.replace("time.sleep(1)", ""),
    );
    assert_eq!(PluginHost::open(warm.path()).unwrap().plugins().len(), 1);
    let dir = plugin_dir();
    write(
        dir.path(),
        "slow_a.py",
        &SLOW_PYTHON.replace(
            "time.sleep(1)\n",
            "from yohost import log\nlog.info('a begins')\ntime.sleep(1)\nlog.info('a ends')\n",
        ),
    );
    write(
        dir.path(),
        "slow_b.ts",
        &SLOW_TS
            .replace("const until", "console.log(\"b begins\");\nconst until")
            .replace(
                "while (Date.now() < until) {}\n",
                "while (Date.now() < until) {}\nconsole.log(\"b ends\");\n",
            ),
    );
    let (logs, _guard) = capture_logs();
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(names(&host), ["slow_a", "slow_b"], "{:?}", host.refused());
    // Side by side: each load began before the other ended (a second
    // apart). Shown by the order of the plugins' own lines, not by the
    // clock, which a loaded machine cannot race; one load after the other
    // would log all of one before any of the other.
    let lines = logs.plugin_lines();
    let at = |message: &str| line_index(&lines, message);
    assert!(
        at("a begins") < at("b ends") && at("b begins") < at("a ends"),
        "the two loads of a second each ran one after the other: {lines:?}"
    );
}

#[tokio::test]
async fn refusals_among_many_keep_file_name_order_and_a_required_one_fails_every_run() {
    let dir = plugin_dir();
    let libraries = libraries();
    write_mixed(dir.path(), 20, &libraries);
    // Two plugins named `twin`: the second in file-name order is refused.
    write_plugin(&dir.path().join("a-twin"), "twin", Kind::Python, &libraries);
    write_plugin(
        &dir.path().join("z-twin"),
        "twin",
        Kind::TypeScript,
        &libraries,
    );
    // A required TypeScript policy whose script throws at load.
    write_plugin(
        &dir.path().join("m-broken"),
        "broken",
        Kind::TypeScript,
        &libraries,
    );
    write(
        dir.path(),
        "m-broken/index.ts",
        "throw new Error(\"broken cannot start\");\n",
    );
    write(dir.path(), "b-unknown.bin", "");

    for _ in 0..3 {
        let host = open(dir.path());
        let refused: Vec<String> = host.refused().iter().map(|r| r.name.clone()).collect();
        assert_eq!(refused, ["b-unknown", "broken", "twin"]);
        let twin = &host.refused()[2];
        assert!(
            matches!(&twin.reason, LoadError::DuplicateName { other, .. } if other.ends_with("a-twin")),
            "{:?}",
            twin.reason
        );
        assert_eq!(host.plugins().len(), 21);
    }

    let host = open(dir.path());
    for _ in 0..2 {
        let (agent, bash) =
            scripted_bash(vec![call("bash", json!({"command": "ls"})), text("done")]);
        let mut agent = agent.with_extension(host.extension());
        let events = run(&mut agent, "list").await;
        let (_, error) = final_assistant(&events);
        let error = error.expect("the run fails");
        assert!(
            error.contains("required plugin 'broken' was refused")
                && error.contains("broken cannot start"),
            "{error}"
        );
        assert!(bash.commands().is_empty());
    }
}
