//! One `before_tool` through a Python plugin, beside the same call through
//! a native in-process plugin (a Rust `yohost::Plugin`): the difference is
//! what the Python engine adds per call.

use criterion::{criterion_group, criterion_main, Criterion};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use yoagent::extension::{Extension, RunContext, RunHooks};
use yoagent::types::ToolCallRequest;
use yohost::contract::{BeforeToolReply, Hook, HookCall, HookReply, RunInfo};
use yohost::{CallError, CallLimits, EngineKind, LoadedPlugin, Plugin, PluginHost, PluginRun};

/// Allows every call, in process.
struct Native;

#[async_trait::async_trait]
impl Plugin for Native {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(Native))
    }
}

#[async_trait::async_trait]
impl PluginRun for Native {
    async fn call(&self, _call: HookCall, _limits: CallLimits) -> Result<HookReply, CallError> {
        Ok(HookReply::BeforeTool(BeforeToolReply::Allow))
    }
}

const PYTHON_POLICY: &str = r#"
from yohost import Plugin, Deny

plugin = Plugin("policy")

@plugin.before_tool
def check(call):
    if "rm -rf" in call["args"].get("command", ""):
        return Deny("no")
"#;

fn native_host() -> PluginHost {
    PluginHost::from_plugins(vec![LoadedPlugin {
        name: "native".into(),
        file: "native".into(),
        engine: EngineKind::Dylib,
        ecosystem: yohost::Ecosystem::Yohost,
        manifest: yohost::Manifest::default(),
        hooks: BTreeSet::from([Hook::BeforeTool]),
        warnings: Vec::new(),
        plugin: Arc::new(Native),
    }])
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.py"), PYTHON_POLICY).unwrap();
    let python = PluginHost::open(dir.path()).unwrap();
    assert_eq!(python.plugins().len(), 1, "{:?}", python.refused());
    let native = native_host();
    let cancel = tokio_util::sync::CancellationToken::new();
    let args = serde_json::json!({"command": "ls -la"});

    let mut group = c.benchmark_group("python_before_tool");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (label, host) in [("native", &native), ("python", &python)] {
        let hooks: Box<dyn RunHooks> = rt.block_on(async {
            let prompts = [];
            let run = RunContext::new("bench-run", &prompts, &cancel);
            host.extension().start_run(&run).await.unwrap()
        });
        group.bench_function(label, |b| {
            b.to_async(&rt).iter(|| async {
                let request = ToolCallRequest::new("call-1", "bash", &args);
                hooks.before_tool(&request).await
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
