//! One MCP tool call through yohost (the agent's tool, the policy chain's
//! session, the deadline, the argument check, the adapter's client, the
//! sandboxed server), beside the same call with `rmcp`'s client alone (the
//! SDK the adapter's client is built on) on an unsandboxed process of the
//! same server. The server is `tests/fixture/hostile.mjs`, whose `say`
//! tool answers at once.

use criterion::{criterion_group, criterion_main, Criterion};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::json;
use std::path::Path;
use tokio_util::sync::CancellationToken;
use yoagent::extension::{Extension, RunContext};
use yoagent::types::ToolContext;
use yohost::PluginHost;

fn call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/hostile.mjs");
    let dir = tempfile::tempdir().expect("a temp dir");
    let folder = dir.path().join("bench");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(&fixture, folder.join("hostile.mjs")).unwrap();
    let servers = json!({"mcpServers": {"bench": {"command": "node", "args": ["hostile.mjs"]}}});
    std::fs::write(folder.join("mcp.json"), servers.to_string()).unwrap();
    std::fs::write(folder.join("plugin.toml"), "[capabilities]\nexec = true\n").unwrap();
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_mcp::adapter())
        .open()
        .expect("the directory opens");
    let extension = host.extension();
    let cancel = CancellationToken::new();
    let ctx = RunContext::new("bench-run", &[], &cancel);
    let mut hooks = rt
        .block_on(extension.start_run(&ctx))
        .expect("the run starts");
    let tools = rt.block_on(hooks.tools(&ctx));
    let say = tools
        .iter()
        .find(|t| t.name() == "say")
        .expect("the server's `say` tool")
        .clone();
    let client = rt
        .block_on(async {
            let mut node = tokio::process::Command::new("node");
            node.arg(&fixture);
            ().serve(TokioChildProcess::new(node)?)
                .await
                .map_err(std::io::Error::other)
        })
        .expect("the client connects");
    let arguments = json!({"text": "hi"}).as_object().cloned();

    let mut group = c.benchmark_group("mcp call");
    group.bench_function("through yohost", |b| {
        b.iter(|| {
            rt.block_on(say.execute(json!({"text": "hi"}), ToolContext::new("c1", "say")))
                .expect("the call answers")
        })
    });
    group.bench_function("client alone (rmcp)", |b| {
        b.iter(|| {
            let mut params = CallToolRequestParams::new("say");
            params.arguments = arguments.clone();
            rt.block_on(client.call_tool(params))
                .expect("the call answers")
        })
    });
    group.finish();
}

criterion_group!(benches, call);
criterion_main!(benches);
