//! `yohost run --stats` and `yohost bench`:
//! - `run --stats` prints each plugin's figures after the run: a table, or
//!   one `{"stats": …}` JSON line whose counts match the run's calls;
//! - `bench` times each plugin's hooks beside the in-process baseline and
//!   prints what each adds; it never calls a plugin's tools;
//! - a plugin whose hook throws, one that hangs, and a refused file do not
//!   stop `bench`: the throws are counted, the hanging hook is timed no
//!   further after its first timeout, the other plugins are timed, and it
//!   exits 1;
//! - `--calls 0` is refused.
//!
//! The dylib plugins are the example cdylibs of the `yohost` package, which
//! `cargo test --workspace` builds (alone: `cargo build -p yohost --examples`).

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::*;
use serde_json::Value;
use support::*;

/// The entry of `hook` among a plugin's `hooks`.
fn hook<'a>(plugin: &'a Value, hook: &str) -> Option<&'a Value> {
    plugin["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["hook"] == hook)
}

/// The entry of plugin `name` in a list of plugins.
fn plugin<'a>(plugins: &'a Value, name: &str) -> &'a Value {
    plugins
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plugin"] == name)
        .unwrap_or_else(|| panic!("{name} in {plugins}"))
}

#[test]
fn run_stats_prints_each_plugins_calls_failures_and_latencies() {
    let dir = dylib_dir();
    let work = plugin_dir();
    let path = dir.path().to_str().unwrap();
    let (code, stdout, stderr) = yohost(
        &["run", path, "--prompt", "go", "--json", "--stats"],
        work.path(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let stats = &last["stats"];
    // The bundled script makes each of these calls once or more; every one
    // reaches the policy, and the policy answers each.
    let calls_to_tools = stdout
        .lines()
        .filter(|l| l.contains("\"type\":\"toolExecutionStart\""))
        .count() as u64;
    let policy = hook(plugin(stats, "rust-policy"), "before_tool").expect("before_tool figures");
    assert_eq!(policy["calls"].as_u64(), Some(calls_to_tools), "{policy}");
    assert_eq!(policy["failures"], 0);
    assert_eq!(policy["timeouts"], 0);
    assert_eq!(policy["timed"], policy["calls"]);
    let (p50, p99, max) = (
        policy["p50_us"].as_f64().unwrap(),
        policy["p99_us"].as_f64().unwrap(),
        policy["max_us"].as_f64().unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{policy}");
    // The total is every timed call's latency added up, and the mean lies
    // between the fastest and the slowest call.
    let (mean, total) = (
        policy["mean_us"].as_f64().unwrap(),
        policy["total_us"].as_f64().unwrap(),
    );
    let timed = policy["timed"].as_f64().unwrap();
    assert!(0.0 < mean && mean <= max, "{policy}");
    assert!(
        (total - mean * timed).abs() <= timed * 0.001 + 0.01,
        "{policy}"
    );
    let tool = plugin(stats, "rust-tool");
    assert_eq!(hook(tool, "tools").expect("tools figures")["calls"], 1);
    assert!(hook(tool, "call_tool").expect("call_tool figures")["calls"].as_u64() >= Some(1));

    let (code, stdout, _) = yohost(&["run", path, "--prompt", "go", "--stats"], work.path());
    assert_eq!(code, Some(0));
    let table = stdout
        .split_once("PLUGIN ")
        .map(|(_, t)| t)
        .expect("a table after the run");
    for word in "HOOK CALLS FAILED TIMEOUTS MEAN P50 P99 MAX TOTAL rust-policy".split(' ') {
        assert!(table.contains(word), "{word}: {table}");
    }

    let (_, stdout, _) = yohost(&["run", path, "--prompt", "go"], work.path());
    assert!(!stdout.contains("TIMEOUTS"), "no figures unless asked");
}

#[test]
fn bench_times_each_plugins_hooks_beside_the_baseline() {
    let dir = dylib_dir();
    let (code, stdout, stderr) = yohost(
        &[
            "bench",
            dir.path().to_str().unwrap(),
            "--calls",
            "20",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["calls"], 20);
    let base = hook(&doc["baseline"], "before_tool").expect("the baseline's before_tool");
    assert_eq!(base["calls"], 20);
    let policy = plugin(&doc["plugins"], "rust-policy");
    let before = hook(policy, "before_tool").expect("before_tool timed");
    assert_eq!(
        (before["calls"].as_u64(), before["failures"].as_u64()),
        (Some(20), Some(0))
    );
    assert!(before["stopped"].is_null());
    assert!(before["median_us"].as_f64().unwrap() > 0.0);
    assert!(before["p99_us"].as_f64() >= before["median_us"].as_f64());
    let added = before["added_us"].as_f64().expect("what it adds");
    assert_eq!(policy["per_tool_call_us"].as_f64(), Some(added));
    let tool = plugin(&doc["plugins"], "rust-tool");
    assert!(hook(tool, "tools").is_some(), "{tool}");
    assert!(
        hook(tool, "call_tool").is_none(),
        "a plugin's tools are never run: {tool}"
    );
    assert!(
        tool["per_tool_call_us"].is_null(),
        "it has no tool-call hooks"
    );

    let (code, stdout, _) = yohost(
        &["bench", dir.path().to_str().unwrap(), "--calls", "5"],
        dir.path(),
    );
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("rust-policy adds ") && stdout.contains(" to each tool call"),
        "{stdout}"
    );
}

#[test]
fn a_throwing_a_hanging_and_a_refused_plugin_do_not_stop_bench() {
    let dir = dylib_dir();
    write(
        dir.path(),
        "thrower.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  name: "thrower",
  before_tool() { throw new Error("no"); },
});"#,
    );
    write(
        dir.path(),
        "hanger/plugin.toml",
        "[timeouts]\nbefore_tool = 200\n",
    );
    write(
        dir.path(),
        "hanger/index.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({
  name: "hanger",
  before_tool() { return new Promise(() => {}); },
  after_tool() { return null; },
});"#,
    );
    write(dir.path(), "broken.so", "not a library");
    let (code, stdout, stderr) = yohost(
        &[
            "bench",
            dir.path().to_str().unwrap(),
            "--calls",
            "50",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(code, Some(1), "failures and refusals exit 1: {stderr}");
    assert!(stderr.contains("plugin 'broken' refused"), "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let thrower = hook(plugin(&doc["plugins"], "thrower"), "before_tool").unwrap();
    assert_eq!(
        (thrower["calls"].as_u64(), thrower["failures"].as_u64()),
        (Some(50), Some(55)),
        "every call (warm-up too) threw and was counted: {thrower}"
    );
    let hanger = plugin(&doc["plugins"], "hanger");
    let hung = hook(hanger, "before_tool").unwrap();
    assert_eq!(hung["stopped"], "timeout", "{hung}");
    assert_eq!(hung["failures"], 1, "timed no further: {hung}");
    let after = hook(hanger, "after_tool").unwrap();
    assert_eq!(
        (after["calls"].as_u64(), after["failures"].as_u64()),
        (Some(50), Some(0)),
        "its other hook is timed in a fresh run: {after}"
    );
    let policy = hook(plugin(&doc["plugins"], "rust-policy"), "before_tool").unwrap();
    assert_eq!(policy["calls"], 50);
}

#[test]
fn bench_refuses_zero_calls() {
    let dir = plugin_dir();
    let (code, _, stderr) = yohost(
        &["bench", dir.path().to_str().unwrap(), "--calls", "0"],
        dir.path(),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--calls"), "{stderr}");
}

#[test]
fn bench_spaces_its_calls_by_the_gap_asked_for() {
    let dir = dylib_dir();
    let path = dir.path().to_str().unwrap();
    let timed = |extra: &[&str]| {
        let mut args = vec!["bench", path, "--calls", "10", "--json"];
        args.extend_from_slice(extra);
        let started = std::time::Instant::now();
        let (code, stdout, stderr) = yohost(&args, dir.path());
        assert_eq!(code, Some(0), "{stderr}");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        (started.elapsed(), doc)
    };
    let (_, doc) = timed(&[]);
    assert_eq!(doc["gap_us"], 0.0);
    // A gap long enough that the waits (about 5 s in all) outweigh what
    // starting and loading take on an idle machine.
    let (spaced, doc) = timed(&["--gap-us", "50000"]);
    assert_eq!(doc["gap_us"], 50000.0);
    // Every call, timed or warming up (a tenth as many), waits the gap.
    let hooks: usize = std::iter::once(&doc["baseline"])
        .chain(doc["plugins"].as_array().unwrap())
        .map(|p| p["hooks"].as_array().unwrap().len())
        .sum();
    let waited = std::time::Duration::from_millis(50) * (hooks as u32 * 11);
    // Each gap is waited in full, so the spaced run takes at least the sum
    // of the waits: a lower bound that a loaded machine only exceeds, where
    // comparing against the back-to-back run raced the two processes'
    // start-up times (CI beside other builds). A bench that did not wait
    // ends well within it.
    assert!(
        spaced >= waited,
        "{hooks} hooks, 11 calls each: {spaced:?} spaced, under the {waited:?} of waits"
    );
    let policy = hook(plugin(&doc["plugins"], "rust-policy"), "before_tool").unwrap();
    assert!(policy["median_us"].as_f64().unwrap() > 0.0, "{policy}");
}
