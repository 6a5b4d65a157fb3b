//! Whole runs: an `Agent::prompt` over `MockProvider` whose model calls a
//! no-op tool [`CALLS`] times in a row, timed per tool call, for:
//! - no extension (yoagent alone);
//! - one extension whose hooks do nothing (what yoagent's own extension
//!   machinery costs: its event observer, its checks at each turn);
//! - yohost over an empty plugin directory;
//! - yohost with one allow-all policy in process ([`yohost::NativePlugin`]):
//!   what yohost's own path of a hook costs, with no engine behind it;
//! - yohost with one allow-all policy of each engine (dylib, Wasm,
//!   TypeScript, Python), and the same TypeScript policy in a `node`
//!   process when `node` is on PATH (skipped, saying why, without it).
//!
//! Between two calls the loop does its own work (the model turn, events,
//! the transcript), so unlike the back-to-back micro-benches this shows
//! what a plugin costs when its engine's thread has gone idle in between.
//! The plugins are built or written by the bench itself.
//!
//! How it is measured, so that a few microseconds show through the loop's
//! own cost and a shared machine's noise:
//! - runs are short ([`CALLS`] calls), as an agent's are: every model
//!   request carries the whole conversation, so the loop's own cost per
//!   call grows with the run's length and would drown what a plugin adds;
//! - the configurations are interleaved: each round runs every one once,
//!   starting from a different one each round, so a slower moment of the
//!   machine falls on all of them alike;
//! - each figure is a median over the rounds, and what a configuration adds
//!   is the median of its difference to the run without extension of the
//!   same round.
//!
//! Flags: `--measurement-time SECS` (default 5) and `--warm-up-time SECS`
//! (default 1) as criterion's; a word that is not a flag keeps only the
//! configurations whose label contains it (beside the two baselines).
//! For a profile (`perf stat`, `perf record`) of one configuration:
//! `--alone` leaves the baselines out and `--rounds N` runs exactly `N`
//! rounds after the warm-up; nothing is written then.
//! Without `--bench` (as `cargo test --benches` runs it) every
//! configuration runs once, checked, and nothing is timed.
//!
//! Each host's own figures of its plugin's hook inside the runs
//! (`PluginHost::stats`: median and 99th percentile latency) are printed
//! too. The figures are printed and written as JSON to
//! `<target>/criterion/agent_run.json`, which `scripts/bench-table` reads.

#[path = "../tests/support/wasm_guests.rs"]
mod wasm_guests;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use yoagent::context::ExecutionLimits;
use yoagent::extension::{ClonedHooks, Extension, RunHooks};
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yoagent::provider::{MockProvider, ModelConfig};
use yoagent::{Agent, AgentEvent, AgentTool, Content, ToolContext, ToolError, ToolResult};
use yohost::contract::{BeforeToolReply, Hook, HookReply};
use yohost::PluginHost;

/// Tool calls per run.
const CALLS: u32 = 20;

/// The fewest rounds measured, however short the measurement time.
const MIN_ROUNDS: usize = 30;

/// A tool that does nothing.
struct Noop;

#[async_trait::async_trait]
impl AgentTool for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn label(&self) -> &str {
        "No-op"
    }
    fn description(&self) -> &str {
        "Do nothing"
    }
    fn parameters_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {}})
    }
    async fn execute(
        &self,
        _params: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult {
            content: vec![Content::Text { text: "ok".into() }],
            details: serde_json::Value::Null,
        })
    }
}

/// Run hooks that do nothing: every hook is yoagent's default.
#[derive(Clone)]
struct NothingHooks;

impl RunHooks for NothingHooks {}

/// An agent whose model calls `noop` [`CALLS`] times, then answers, with
/// `extension` if any.
fn agent(extension: Option<Arc<dyn Extension>>) -> Agent {
    let mut script: Vec<MockResponse> = (0..CALLS)
        .map(|n| {
            // Arguments differ per call: yoagent stops a run that repeats a
            // call with identical arguments.
            MockResponse::ToolCalls(vec![MockToolCall {
                name: "noop".into(),
                arguments: serde_json::json!({ "n": n }),
                provider_metadata: None,
            }])
        })
        .collect();
    script.push(MockResponse::Text("done".into()));
    let agent = Agent::from_provider(MockProvider::new(script), ModelConfig::mock())
        .with_tools(vec![Box::new(Noop)])
        .with_execution_limits(ExecutionLimits::default());
    match extension {
        Some(extension) => agent.with_extension(extension),
        None => agent,
    }
}

/// Prompt the agent and return once the run has ended (`Agent::prompt`
/// returns as soon as the run has started), with its events.
async fn whole_run(agent: &mut Agent) -> mpsc::UnboundedReceiver<AgentEvent> {
    let (tx, events) = mpsc::unbounded_channel();
    agent.prompt_with_sender("go", tx).await;
    events
}

/// Panics unless every tool call of the run ran and succeeded (a policy
/// that failed closed would deny them, and be fast for the wrong reason).
fn check(mut events: mpsc::UnboundedReceiver<AgentEvent>) {
    let mut ran = 0;
    while let Ok(event) = events.try_recv() {
        if let AgentEvent::ToolExecutionEnd { is_error, .. } = event {
            assert!(!is_error, "a tool call failed: is the policy allowing?");
            ran += 1;
        }
    }
    assert_eq!(ran, CALLS, "every tool call ran");
}

/// A plugin directory holding `file` with `source` (and, unless empty,
/// `manifest` as the `plugin.toml` beside it), and the host over it
/// (`None`: an empty directory).
fn host_with(file: Option<(&str, String)>, manifest: &str) -> (tempfile::TempDir, PluginHost) {
    let dir = tempfile::tempdir().expect("a temp dir");
    if let Some((file, source)) = &file {
        let path = dir.path().join(file);
        let folder = path.parent().expect("a parent");
        std::fs::create_dir_all(folder).expect("a folder");
        std::fs::write(&path, source).expect("the plugin is written");
        if !manifest.is_empty() {
            std::fs::write(folder.join("plugin.toml"), manifest).expect("the manifest is written");
        }
    }
    let host = PluginHost::open(dir.path()).expect("the host opens");
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    assert_eq!(host.plugins().len(), usize::from(file.is_some()));
    (dir, host)
}

const TYPESCRIPT: &str = r#"
import { definePlugin } from "yohost";
export default definePlugin({ name: "allow-all", before_tool() { return null; } });
"#;

const PYTHON: &str = r#"
from yohost import Plugin

plugin = Plugin("allow-all")

@plugin.before_tool
def allow(call):
    return None
"#;

/// The manifest that runs a TypeScript plugin in a `node` process.
const NODE_MANIFEST: &str = "engine = \"node\"\n";

fn entry(path: PathBuf) -> String {
    format!("entry = {:?}", path.display().to_string())
}

/// The label of the configuration every other is compared with.
const NO_EXTENSION: &str = "no extension";
/// The label of the extension that does nothing.
const NOTHING: &str = "an extension that does nothing";
/// The label of yohost with one policy in process.
const IN_PROCESS: &str = "yohost + in-process policy";

/// One configuration: its label, the extension it runs with, and what
/// keeps that extension's plugin directory alive.
struct Config {
    label: &'static str,
    extension: Option<Arc<dyn Extension>>,
    _dir: Option<tempfile::TempDir>,
    /// The host, for the figures it measured of its plugin's calls.
    host: Option<PluginHost>,
    /// Time per tool call of each round's run.
    per_call: Vec<f64>,
}

impl Config {
    fn new(label: &'static str, extension: Option<Arc<dyn Extension>>) -> Self {
        Self {
            label,
            extension,
            _dir: None,
            host: None,
            per_call: Vec::new(),
        }
    }

    fn host(label: &'static str, (dir, host): (tempfile::TempDir, PluginHost)) -> Self {
        Self {
            _dir: Some(dir),
            ..Self::new(label, Some(Arc::new(host.extension())))
        }
        .with_host(host)
    }

    fn with_host(mut self, host: PluginHost) -> Self {
        self.host = Some(host);
        self
    }
}

/// The configurations whose label contains `filter` (all without one),
/// with the two baselines first unless `alone`.
fn configs(filter: Option<&str>, alone: bool) -> Vec<Config> {
    let wanted = |label: &str| filter.is_none_or(|f| label.contains(f));
    let mut configs = Vec::new();
    if !alone {
        let nothing = ClonedHooks::new("nothing", NothingHooks).required();
        configs.push(Config::new(NO_EXTENSION, None));
        configs.push(Config::new(NOTHING, Some(Arc::new(nothing))));
    }
    type Make = fn() -> (tempfile::TempDir, PluginHost);
    let hosts: [(&'static str, Make); 5] = [
        ("yohost, no plugins", || host_with(None, "")),
        ("yohost + dylib", || {
            host_with(
                Some((
                    "allow-all/plugin.toml",
                    entry(wasm_guests::native_guest("allow_all")),
                )),
                "",
            )
        }),
        ("yohost + wasm", || {
            host_with(
                Some((
                    "allow-all/plugin.toml",
                    entry(wasm_guests::guest("guest_allow_all")),
                )),
                "",
            )
        }),
        ("yohost + typescript", || {
            host_with(Some(("allow-all.ts", TYPESCRIPT.into())), "")
        }),
        ("yohost + python", || {
            host_with(Some(("allow-all.py", PYTHON.into())), "")
        }),
    ];
    for (label, make) in hosts {
        if wanted(label) {
            configs.push(Config::host(label, make()));
        }
    }
    if wanted(IN_PROCESS) {
        let host = PluginHost::from_plugins(vec![yohost::NativePlugin::loaded(
            "allow-all",
            &[Hook::BeforeTool],
            yohost::manifest::Manifest::default(),
            |_| Ok(HookReply::BeforeTool(BeforeToolReply::Allow)),
        )]);
        let extension: Arc<dyn Extension> = Arc::new(host.extension());
        configs.push(Config::new(IN_PROCESS, Some(extension)).with_host(host));
    }
    if wanted("yohost + node") {
        match yohost::adapter::node::node() {
            Ok(_) => configs.push(Config::host(
                "yohost + node",
                host_with(
                    Some(("allow-all/index.ts", TYPESCRIPT.into())),
                    NODE_MANIFEST,
                ),
            )),
            Err(why) => eprintln!("yohost + node skipped: {why}"),
        }
    }
    configs
}

/// The flags the bench takes (see the module docs).
struct Flags {
    timed: bool,
    warm_up: Duration,
    measurement: Duration,
    filter: Option<String>,
    alone: bool,
    rounds: Option<usize>,
}

fn flags() -> Flags {
    let mut flags = Flags {
        timed: false,
        warm_up: Duration::from_secs(1),
        measurement: Duration::from_secs(5),
        filter: None,
        alone: false,
        rounds: None,
    };
    let mut args = std::env::args().skip(1);
    let secs = |value: Option<String>| {
        let value = value.expect("a number of seconds after the flag");
        Duration::from_secs_f64(value.parse().expect("a number of seconds"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bench" => flags.timed = true,
            "--warm-up-time" => flags.warm_up = secs(args.next()),
            "--measurement-time" => flags.measurement = secs(args.next()),
            "--alone" => flags.alone = true,
            "--rounds" => {
                let n = args.next().expect("a number of rounds after --rounds");
                flags.rounds = Some(n.parse().expect("a number of rounds"));
            }
            // Criterion's other flags mean nothing here.
            flag if flag.starts_with('-') => {}
            word => flags.filter = Some(word.to_string()),
        }
    }
    flags
}

/// One run of `config`, checked, and its time per tool call in ns.
fn timed_run(rt: &tokio::runtime::Runtime, config: &Config) -> f64 {
    let mut agent = agent(config.extension.clone());
    let started = Instant::now();
    let events = rt.block_on(whole_run(&mut agent));
    let elapsed = started.elapsed();
    check(events);
    elapsed.as_nanos() as f64 / f64::from(CALLS)
}

/// The median of `values` (which it sorts).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The median of the round-by-round differences `a - b`.
fn median_difference(a: &[f64], b: &[f64]) -> f64 {
    let mut differences: Vec<f64> = a.iter().zip(b).map(|(a, b)| a - b).collect();
    median(&mut differences)
}

fn main() {
    let flags = flags();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut configs = configs(flags.filter.as_deref(), flags.alone);
    if !flags.timed {
        for config in &configs {
            timed_run(&rt, config);
            println!("agent_run: {}: ok", config.label);
        }
        return;
    }
    let started = Instant::now();
    while started.elapsed() < flags.warm_up {
        for config in &configs {
            timed_run(&rt, config);
        }
    }
    let started = Instant::now();
    let mut rounds = 0;
    let more = |rounds: usize| match flags.rounds {
        Some(n) => rounds < n,
        None => rounds < MIN_ROUNDS || started.elapsed() < flags.measurement,
    };
    while more(rounds) {
        for i in 0..configs.len() {
            let at = (i + rounds) % configs.len();
            let time = timed_run(&rt, &configs[at]);
            configs[at].per_call.push(time);
        }
        rounds += 1;
    }
    print_hook_latencies(&configs);
    if flags.alone || flags.rounds.is_some() {
        println!("agent_run: {rounds} rounds, not written (a profile's run)");
        return;
    }
    report(&configs, rounds);
}

/// Print what each host measured of its plugin's hooks inside the runs
/// (warm-up included): the hand-off as a run pays it, which the per-call
/// figures include along with the loop's own work.
fn print_hook_latencies(configs: &[Config]) {
    for config in configs {
        for plugin in config.host.iter().flat_map(PluginHost::stats) {
            for hook in plugin.hooks {
                let micros = |d: Option<Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1e6);
                println!(
                    "  {:<32} {}: {} calls, the host's latency mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs",
                    config.label,
                    hook.hook.as_str(),
                    hook.calls,
                    micros(hook.mean()),
                    micros(hook.p50),
                    micros(hook.p99),
                );
            }
        }
    }
}

/// Print the figures and write them where `scripts/bench-table` reads them.
fn report(configs: &[Config], rounds: usize) {
    let none = &configs[0].per_call;
    let nothing = &configs[1].per_call;
    println!(
        "agent_run: {rounds} rounds of {CALLS} tool calls a run, per tool call (medians; added: the median of round-by-round differences)"
    );
    let mut rows = Vec::new();
    for config in configs {
        let mut sorted = config.per_call.clone();
        let per_call = median(&mut sorted);
        let quartile = |q: usize| sorted[(sorted.len() - 1) * q / 4];
        let added = median_difference(&config.per_call, none);
        let over_nothing = median_difference(&config.per_call, nothing);
        println!(
            "  {:<32} {:>9.2} µs (quartiles {:.2}–{:.2})  added {:>7.2} µs  over the extension that does nothing {:>7.2} µs",
            config.label,
            per_call / 1e3,
            quartile(1) / 1e3,
            quartile(3) / 1e3,
            added / 1e3,
            over_nothing / 1e3,
        );
        rows.push(serde_json::json!({
            "label": config.label,
            "per_call_ns": per_call,
            "quartiles_ns": [quartile(1), quartile(3)],
            "added_ns": added,
            "added_over_nothing_ns": over_nothing,
        }));
    }
    let summary = serde_json::json!({
        "calls_per_run": CALLS,
        "rounds": rounds,
        "configurations": rows,
    });
    // The bench executable is <target>/release/deps/<name>.
    let exe = std::env::current_exe().expect("the bench executable");
    let criterion = exe.ancestors().nth(3).expect("<target>").join("criterion");
    std::fs::create_dir_all(&criterion).expect("the criterion folder");
    let path = criterion.join("agent_run.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary).expect("json"))
        .expect("the figures are written");
    println!("agent_run: written to {}", path.display());
}
