//! The cost of the JS engine: one `before_tool` through a TypeScript plugin
//! beside a native in-process plugin on the same host path
//! (`invoke::call_hook`), and a cold load of a plugin file.

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use yohost::contract::{BeforeToolArgs, BeforeToolReply, Hook, HookCall, HookReply, RunInfo};
use yohost::discovery::{scan, Found};
use yohost::{CallError, CallLimits, LoadedPlugin, Plugin, PluginHost, PluginRun};

const POLICY: &str = r#"
import { definePlugin } from "yohost";
export default definePlugin({
  before_tool({ tool, args }) {
    if (tool === "bash" && String(args.command ?? "").includes("rm -rf")) return { deny: "no" };
    return null;
  },
});
"#;

/// The same policy, in Rust, in process.
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
        let command = args.args["command"].as_str().unwrap_or("");
        Ok(HookReply::BeforeTool(
            if args.tool == "bash" && command.contains("rm -rf") {
                BeforeToolReply::Deny("no".into())
            } else {
                BeforeToolReply::Allow
            },
        ))
    }
}

fn before_tool() -> HookCall {
    HookCall::BeforeTool(BeforeToolArgs {
        run: RunInfo {
            run_id: "bench".into(),
            ..RunInfo::default()
        },
        tool: "bash".into(),
        call_id: "c1".into(),
        args: json!({"command": "ls -la"}),
        user_request: None,
        latest_user_text: None,
    })
}

fn native_host() -> PluginHost {
    let plugin = LoadedPlugin {
        name: "native".into(),
        file: "native".into(),
        engine: yohost::EngineKind::Dylib,
        ecosystem: yohost::Ecosystem::Yohost,
        manifest: yohost::Manifest::default(),
        hooks: BTreeSet::from([Hook::BeforeTool]),
        warnings: Vec::new(),
        plugin: Arc::new(Native),
    };
    PluginHost::from_plugins(vec![plugin])
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.ts"), POLICY).unwrap();
    let ts_host = PluginHost::open(dir.path()).unwrap();
    let native = native_host();
    let cancel = CancellationToken::new();

    let mut group = c.benchmark_group("before_tool");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for (name, host) in [("native", &native), ("typescript", &ts_host)] {
        let plugin = host.plugins().remove(0);
        let session = rt
            .block_on(plugin.plugin.open_run(&RunInfo::default()))
            .unwrap();
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let reply =
                    yohost::invoke::call_hook(&plugin, session.as_ref(), before_tool(), &cancel)
                        .await
                        .unwrap();
                assert_eq!(reply, HookReply::BeforeTool(BeforeToolReply::Allow));
            })
        });
    }
    group.finish();

    let candidate = match scan(dir.path()).unwrap().remove(0) {
        Found::Plugin(candidate) => candidate,
        Found::Refused { reason, .. } => panic!("{reason}"),
    };
    let mut group = c.benchmark_group("load");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    group.bench_function("typescript_cold", |b| {
        b.iter(|| yohost::engines::js::load(&candidate).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
