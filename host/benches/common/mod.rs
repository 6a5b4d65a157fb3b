//! Shared by the benches: one `before_tool` through a host's extension, as
//! the agent loop makes it, with an empty conversation or a long one.
#![allow(dead_code)] // each bench uses a different part

use criterion::{measurement::WallTime, BenchmarkGroup};
use tokio_util::sync::CancellationToken;
use yoagent::extension::{Extension, RunContext, RunHooks};
use yoagent::{AgentMessage, Message, ToolCallRequest, ToolDecision};
use yohost::contract::{BeforeToolReply, Hook, HookReply};
use yohost::{Manifest, NativePlugin, PluginHost};

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
