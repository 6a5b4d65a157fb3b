//! Whole runs: an `Agent::prompt` over `MockProvider` whose model calls a
//! no-op tool [`CALLS`] times in a row, timed per tool call, for:
//! - no extension (yoagent alone);
//! - yohost over an empty plugin directory;
//! - yohost with one allow-all policy of each engine (dylib, Wasm,
//!   TypeScript, Python), and the same TypeScript policy in a `node`
//!   process when `node` is on PATH (skipped, saying why, without it).
//!
//! Between two calls the loop does its own work (the model turn, events,
//! the transcript), so unlike the back-to-back micro-benches this shows
//! what a plugin costs when its engine's thread has gone idle in between.
//! The plugins are built or written by the bench itself.

#[path = "../tests/support/wasm_guests.rs"]
mod wasm_guests;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use yoagent::context::ExecutionLimits;
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yoagent::provider::{MockProvider, ModelConfig};
use yoagent::{Agent, AgentEvent, AgentTool, Content, ToolContext, ToolError, ToolResult};
use yohost::PluginHost;

/// Tool calls per run.
const CALLS: u64 = 200;

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

/// An agent whose model calls `noop` [`CALLS`] times, then answers, with
/// `host`'s extension if any.
fn agent(host: Option<&PluginHost>) -> Agent {
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
    // yoagent's default limits end a run at 50 turns.
    let mut limits = ExecutionLimits::default();
    limits.max_turns = CALLS as usize + 1;
    let agent = Agent::from_provider(MockProvider::new(script), ModelConfig::mock())
        .with_tools(vec![Box::new(Noop)])
        .with_execution_limits(limits);
    match host {
        Some(host) => agent.with_extension(host.extension()),
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

/// One run; panics unless every tool call ran and succeeded (a policy that
/// failed closed would deny them, and be fast for the wrong reason).
async fn checked_run(mut agent: Agent) {
    let mut events = whole_run(&mut agent).await;
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

fn entry(path: std::path::PathBuf) -> String {
    format!("entry = {:?}", path.display().to_string())
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut hosts = vec![
        ("yohost, no plugins", host_with(None, "")),
        (
            "yohost + dylib",
            host_with(
                Some((
                    "allow-all/plugin.toml",
                    entry(wasm_guests::native_guest("allow_all")),
                )),
                "",
            ),
        ),
        (
            "yohost + wasm",
            host_with(
                Some((
                    "allow-all/plugin.toml",
                    entry(wasm_guests::guest("guest_allow_all")),
                )),
                "",
            ),
        ),
        (
            "yohost + typescript",
            host_with(Some(("allow-all.ts", TYPESCRIPT.into())), ""),
        ),
        (
            "yohost + python",
            host_with(Some(("allow-all.py", PYTHON.into())), ""),
        ),
    ];
    match yohost::engines::node::node() {
        Ok(_) => hosts.push((
            "yohost + node",
            host_with(
                Some(("allow-all/index.ts", TYPESCRIPT.into())),
                NODE_MANIFEST,
            ),
        )),
        Err(why) => eprintln!("yohost + node skipped: {why}"),
    }
    let configs = std::iter::once(("no extension", None))
        .chain(hosts.iter().map(|(label, (_, host))| (*label, Some(host))));

    let mut group = c.benchmark_group("agent_run per tool call");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (label, host) in configs {
        rt.block_on(checked_run(agent(host)));
        group.bench_function(label, |b| {
            b.iter_custom(|iters| {
                // Whole runs until `iters` tool calls were made; the time is
                // scaled to exactly `iters` calls.
                let (mut total, mut calls) = (Duration::ZERO, 0);
                while calls < iters {
                    let mut agent = agent(host);
                    let started = Instant::now();
                    let events = rt.block_on(whole_run(&mut agent));
                    total += started.elapsed();
                    drop(events);
                    calls += CALLS;
                }
                total.mul_f64(iters as f64 / calls as f64)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
