//! The Wasm engine's costs:
//! - one `before_tool` through a Wasm policy (`guest_policy`), beside the
//!   same call through a native in-process `yohost::Plugin` (the baseline:
//!   everything but the engine), both through the host's `call_hook`;
//! - a warm load of the wasm-redactor example: the compiled artifact comes
//!   from the cache, then the component is linked and probed.
//!
//! Run with `cargo bench -p yohost --bench wasm`.

#[path = "../tests/support/wasm_guests.rs"]
mod wasm_guests;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use yohost::contract::{BeforeToolArgs, BeforeToolReply, Hook, HookCall, HookReply, RunInfo};
use yohost::discovery::{scan, Found};
use yohost::{
    CallError, CallLimits, EngineKind, LoadedPlugin, Manifest, Plugin, PluginHost, PluginRun,
};

/// The baseline: the policy's logic, in process.
struct Native;

#[async_trait::async_trait]
impl Plugin for Native {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(Native))
    }
}

#[async_trait::async_trait]
impl PluginRun for Native {
    async fn call(&self, call: HookCall, _limits: CallLimits) -> Result<HookReply, CallError> {
        let HookCall::BeforeTool(args) = call else {
            return Ok(HookReply::Ignored);
        };
        let text = args.args["text"].as_str().unwrap_or("");
        Ok(HookReply::BeforeTool(if text.contains("forbidden") {
            BeforeToolReply::Deny("forbidden".into())
        } else {
            BeforeToolReply::Allow
        }))
    }
}

fn native_host() -> PluginHost {
    PluginHost::from_plugins(vec![LoadedPlugin {
        name: "native".into(),
        file: "native".into(),
        engine: EngineKind::Dylib,
        ecosystem: Default::default(),
        manifest: Manifest::default(),
        hooks: [Hook::BeforeTool].into(),
        warnings: Vec::new(),
        plugin: Arc::new(Native),
    }])
}

/// A plugin directory with `guest` installed as `name`.
fn plugin_dir(name: &str, guest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(name);
    std::fs::create_dir(&folder).unwrap();
    let entry = wasm_guests::guest(guest);
    std::fs::write(
        folder.join("plugin.toml"),
        format!("entry = {:?}", entry.display().to_string()),
    )
    .unwrap();
    dir
}

fn before_tool() -> HookCall {
    HookCall::BeforeTool(BeforeToolArgs {
        run: RunInfo {
            run_id: "bench".into(),
            ..RunInfo::default()
        },
        tool: "echo".into(),
        call_id: "c1".into(),
        args: json!({"text": "hello there"}),
        user_request: Some("say hello".into()),
        latest_user_text: None,
    })
}

fn bench_before_tool(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = plugin_dir("policy", "guest_policy");
    let wasm_host = PluginHost::open(dir.path()).unwrap();
    let native = native_host();
    let mut group = c.benchmark_group("before_tool");
    for (label, host) in [("native", &native), ("wasm", &wasm_host)] {
        let plugin = host.plugins().remove(0);
        let session = rt
            .block_on(plugin.plugin.open_run(&RunInfo::default()))
            .unwrap();
        let cancel = CancellationToken::new();
        group.bench_function(label, |b| {
            b.to_async(&rt).iter(|| async {
                let reply =
                    yohost::invoke::call_hook(&plugin, &*session, before_tool(), &cancel).await;
                assert_eq!(
                    reply.unwrap(),
                    HookReply::BeforeTool(BeforeToolReply::Allow)
                );
            })
        });
    }
    group.finish();
}

fn bench_warm_load(c: &mut Criterion) {
    let dir = plugin_dir("wasm-redactor", "wasm_redactor");
    let candidate = match scan(dir.path()).unwrap().remove(0) {
        Found::Plugin(candidate) => candidate,
        Found::Refused { reason, .. } => panic!("{reason}"),
    };
    // The first load compiles and fills the cache; the bench measures the rest.
    yohost::engines::wasm::load(&candidate).unwrap();
    c.bench_function("load wasm-redactor (cached)", |b| {
        b.iter(|| yohost::engines::wasm::load(&candidate).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench_before_tool, bench_warm_load
}
criterion_main!(benches);
