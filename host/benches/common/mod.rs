//! Shared by the benches: one `before_tool` through a host's extension, as
//! the agent loop makes it, with an empty conversation or a long one.
#![allow(dead_code)] // each bench uses a different part

use criterion::{measurement::WallTime, BenchmarkGroup, Criterion};
use std::path::Path;
use tokio_util::sync::CancellationToken;
use yoagent::extension::{Extension, RunContext, RunHooks};
use yoagent::{AgentMessage, Message, ToolCallRequest, ToolDecision};
use yohost::contract::{BeforeToolReply, Hook, HookReply};
use yohost::manifest::Manifest;
use yohost::{NativePlugin, PluginHost};

/// A host with one in-process policy that allows every call: the baseline.
pub fn native_baseline() -> PluginHost {
    PluginHost::from_plugins(vec![NativePlugin::loaded(
        "native",
        &[Hook::BeforeTool],
        Manifest::default(),
        |_| Ok(HookReply::BeforeTool(BeforeToolReply::Allow)),
    )])
}

/// A conversation of `n` messages: a user request, then alternating
/// assistant and user turns.
pub fn history(n: usize) -> Vec<AgentMessage> {
    (0..n)
        .map(|i| {
            let text = format!("message {i}: please list the files of the project");
            AgentMessage::Llm(if i % 2 == 0 {
                Message::user(text)
            } else {
                Message::user(format!("reply {text}"))
            })
        })
        .collect()
}

/// Open a run of `host`'s extension.
pub fn start_run(rt: &tokio::runtime::Runtime, host: &PluginHost) -> Box<dyn RunHooks> {
    let extension = host.extension();
    let cancel = CancellationToken::new();
    let ctx = RunContext::new("bench-run", &[], &cancel);
    rt.block_on(extension.start_run(&ctx))
        .expect("the run starts")
}

/// Bench one `before_tool` of a `bash ls` call through `host`, with a
/// conversation of 0 and of 1000 messages, as `<label>/<n> messages`.
pub fn bench_before_tool(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &tokio::runtime::Runtime,
    label: &str,
    host: &PluginHost,
) {
    let hooks = start_run(rt, host);
    let args = serde_json::json!({"command": "ls"});
    for n in [0usize, 1000] {
        let messages = history(n);
        group.bench_function(format!("{label}/{n} messages"), |b| {
            b.iter(|| {
                let call = ToolCallRequest::new("call-1", "bash", &args).with_messages(&messages);
                let decision = rt.block_on(hooks.before_tool(&call));
                assert!(matches!(decision, ToolDecision::Allow));
            })
        });
    }
}

/// A plugin directory holding one file (`file` may name a folder too), and
/// the host over it.
pub fn host_with_file(file: &str, source: &str) -> (tempfile::TempDir, PluginHost) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join(file);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the folder is made");
    std::fs::write(path, source).expect("the plugin file is written");
    let host = PluginHost::open(dir.path()).expect("the host opens");
    assert_eq!(
        host.plugins().len(),
        1,
        "the plugin loads: {:?}",
        host.refused()
    );
    (dir, host)
}

/// The `before_tool` group: the native baseline beside `host`'s plugin,
/// labelled `label`.
pub fn before_tool_group(
    c: &mut criterion::Criterion,
    rt: &tokio::runtime::Runtime,
    label: &str,
    host: &PluginHost,
) {
    let mut group = c.benchmark_group("before_tool");
    group
        .measurement_time(std::time::Duration::from_secs(3))
        .warm_up_time(std::time::Duration::from_secs(1));
    bench_before_tool(&mut group, rt, "native", &native_baseline());
    bench_before_tool(&mut group, rt, label, host);
    group.finish();
}

/// A current-thread runtime, as a host embedding yohost might run.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Bench a cold load of the only plugin in `dir`, named `name` in the
/// `load` group: discovery's candidate, loaded afresh each time.
pub fn cold_load_group(c: &mut Criterion, dir: &Path, name: &str, samples: usize, seconds: u64) {
    let candidate = match yohost::adapter::Adapters::default()
        .scan(dir)
        .unwrap()
        .remove(0)
    {
        yohost::adapter::Found::Plugin(candidate) => candidate,
        yohost::adapter::Found::Refused { reason, .. } => panic!("{reason}"),
    };
    let mut group = c.benchmark_group("load");
    group
        .sample_size(samples)
        .measurement_time(std::time::Duration::from_secs(seconds))
        .warm_up_time(std::time::Duration::from_secs(1));
    group.bench_function(format!("{name} (cold)"), |b| {
        b.iter(|| {
            yohost::adapter::Adapters::default()
                .load(&candidate)
                .unwrap()
        })
    });
    group.finish();
}
