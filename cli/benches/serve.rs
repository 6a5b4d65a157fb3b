//! A tool call through `yohost serve` (the built command, as a client
//! reaches it) beside the same call in process: one TypeScript tool that
//! says its argument back, no policy.
//!
//! - `serve_call`: one call after another, from one caller: through
//!   [`ToolRun::call`] in this process, and through rmcp's client to
//!   `yohost serve` over streamable HTTP (one session) and over stdio;
//! - `serve_concurrent`: calls from `SESSIONS` callers at once, each with a
//!   run of its own: `SESSIONS` [`ToolRun`]s in process, and `SESSIONS`
//!   HTTP sessions with one server. Criterion's time per call is the
//!   inverse of the throughput of them all together.

#[path = "../tests/common/serve.rs"]
mod serve;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;
use serve::{call, http_server, http_session, stdio_session, text, Client, Session};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yohost::{PluginHost, ToolCallOutcome, ToolRun};

/// Callers at once in `serve_concurrent`.
const SESSIONS: usize = 8;

const TOOL: &str = r#"import { definePlugin, defineTool } from "yohost";
const echo = defineTool<{ text: string }>({
  name: "echo", description: "Say it back.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  run(args) { return { content: [{ type: "text", text: args.text }] }; },
});
export default definePlugin({ name: "tools", tools: [echo] });
"#;

/// One call of `echo` through `run`, checked.
async fn in_process(run: &ToolRun) {
    let args = json!({"text": "hello"});
    match run.call("echo", args, &CancellationToken::new()).await {
        ToolCallOutcome::Ran(output) => assert!(!output.is_error),
        other => panic!("{other:?}"),
    }
}

/// One call of `echo` through `session`, checked.
async fn through(session: &Session) {
    let result = session
        .call_tool(call("echo", json!({"text": "hello"})))
        .await
        .expect("the call is answered");
    assert_eq!(text(&result), "hello");
}

/// Make `iters` calls spread over `SESSIONS` tasks at once, the `n`th
/// calling through `one(n)`: the time they took together.
async fn spread<F, Fut>(iters: u64, one: F) -> Duration
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let workers = SESSIONS as u64;
    let start = Instant::now();
    let tasks: Vec<_> = (0..SESSIONS)
        .map(|n| {
            let one = one.clone();
            let share = iters / workers + u64::from((n as u64) < iters % workers);
            tokio::spawn(async move {
                for _ in 0..share {
                    one(n).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("the caller's task");
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir(dir.path().join("tools")).unwrap();
    std::fs::write(dir.path().join("tools/index.ts"), TOOL).unwrap();
    let host = PluginHost::open(dir.path()).expect("the host opens");
    let runs: Arc<Vec<ToolRun>> = Arc::new(rt.block_on(async {
        let mut runs = Vec::new();
        for n in 0..SESSIONS {
            runs.push(ToolRun::open(&host, format!("bench-{n}")).await.unwrap());
        }
        runs
    }));
    let server = rt.block_on(http_server(dir.path(), &[]));
    let sessions: Arc<Vec<Session>> = Arc::new(rt.block_on(async {
        let mut sessions = Vec::new();
        for _ in 0..SESSIONS {
            sessions.push(http_session(&server.url).await.unwrap());
        }
        sessions
    }));
    let (stdio, _stderr) = rt.block_on(stdio_session(dir.path(), Client::default()));

    let mut group = c.benchmark_group("serve_call");
    group
        .throughput(Throughput::Elements(1))
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(2));
    group.bench_function("in process (ToolRun::call)", |b| {
        b.to_async(&rt).iter(|| in_process(&runs[0]))
    });
    group.bench_function("HTTP, one session", |b| {
        b.to_async(&rt).iter(|| through(&sessions[0]))
    });
    group.bench_function("stdio, one session", |b| {
        b.to_async(&rt).iter(|| through(&stdio))
    });
    group.finish();

    let mut group = c.benchmark_group("serve_concurrent");
    group
        .throughput(Throughput::Elements(1))
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(2));
    group.bench_function(format!("in process, {SESSIONS} runs"), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let runs = Arc::clone(&runs);
            spread(iters, move |n| {
                let runs = Arc::clone(&runs);
                async move { in_process(&runs[n]).await }
            })
        })
    });
    group.bench_function(format!("HTTP, {SESSIONS} sessions"), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let sessions = Arc::clone(&sessions);
            spread(iters, move |n| {
                let sessions = Arc::clone(&sessions);
                async move { through(&sessions[n]).await }
            })
        })
    });
    group.finish();

    rt.block_on(async {
        for run in runs.iter() {
            run.finish().await;
        }
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
