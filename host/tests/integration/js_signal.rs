//! `ctx.signal` in JavaScript plugins: the `AbortSignal` of a hook call
//! aborts with an `AbortError` as soon as its run is cancelled (the engine
//! thread is woken, not left asleep until the deadline), and with a
//! `TimeoutError` when the call's deadline passes; the call itself fails
//! as `Cancelled` or `Timeout`.

use crate::support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::*;
use tokio_util::sync::CancellationToken;
use yohost::contract::{CallToolArgs, HookCall, RunInfo};
use yohost::{CallError, CallLimits, PluginHost};

const WAITER: &str = r#"
import { definePlugin } from "yohost";
export default definePlugin({
  tools: [{
    name: "wait",
    run: (_args, ctx) => new Promise((resolve) => {
      ctx.signal.addEventListener("abort", () => {
        ctx.log.info(`aborted: ${ctx.signal.reason.name} after ${Date.now() - started} ms`);
        resolve("stopped");
      });
      const started = Date.now();
    }),
  }],
});
"#;

/// Poll the captured plugin log lines for one starting with `prefix`.
/// Generous, so a loaded machine does not fail it; it returns as soon as the
/// line is there.
async fn logged_soon(logs: &Captured, prefix: &str) -> Option<String> {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        let found = logs.plugin_lines().into_iter().find_map(|l| {
            let message = l["fields"]["message"].as_str()?.to_string();
            message.starts_with(prefix).then_some(message)
        });
        if found.is_some() {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

async fn call_wait(host: &PluginHost, limits: CallLimits) -> Result<serde_json::Value, CallError> {
    call_tool(host, "wait", limits).await
}

/// Call the plugin's tool `tool` in a run of its own.
async fn call_tool(
    host: &PluginHost,
    tool: &str,
    limits: CallLimits,
) -> Result<serde_json::Value, CallError> {
    let plugin = host.plugins()[0].clone();
    let run = RunInfo {
        run_id: format!("signal-{tool}"),
        ..RunInfo::default()
    };
    let opened = plugin.plugin.open_run(&run).await.unwrap();
    let call = HookCall::CallTool(CallToolArgs {
        run,
        tool: tool.into(),
        call_id: "c1".into(),
        args: json!({}),
    });
    opened.call(call, limits).await
}

#[tokio::test]
async fn a_cancelled_run_aborts_the_calls_signal_at_once() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    write(dir.path(), "waiter.ts", WAITER);
    let host = PluginHost::open(dir.path()).unwrap();
    let cancel = CancellationToken::new();
    let limits = CallLimits {
        deadline: Instant::now() + Duration::from_secs(60),
        cancel: cancel.clone(),
        ui: None,
        progress: None,
    };
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = call_wait(&host, limits).await;
    canceller.await.unwrap();
    assert!(matches!(outcome, Err(CallError::Cancelled)), "{outcome:?}");
    // The outcome (cancelled, not timed out) proves it; the bound, half the
    // call's 60 s deadline, is generous so a loaded machine does not fail it.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "not left to its deadline"
    );
    let line = logged_soon(&logs, "aborted: ").await;
    assert!(
        line.as_deref()
            .is_some_and(|l| l.starts_with("aborted: AbortError")),
        "{line:?}"
    );
}

#[tokio::test]
async fn a_passed_deadline_aborts_the_calls_signal_with_a_timeout() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    write(dir.path(), "waiter.ts", WAITER);
    let host = PluginHost::open(dir.path()).unwrap();
    let limits = CallLimits {
        deadline: Instant::now() + Duration::from_millis(200),
        cancel: CancellationToken::new(),
        ui: None,
        progress: None,
    };
    let outcome = call_wait(&host, limits).await;
    assert!(matches!(outcome, Err(CallError::Timeout(_))), "{outcome:?}");
    let line = logged_soon(&logs, "aborted: ").await;
    assert!(
        line.as_deref()
            .is_some_and(|l| l.starts_with("aborted: TimeoutError")),
        "{line:?}"
    );
}

/// A tool that never settles and a second one that reads the first one's
/// `ctx.signal` for the first time, after the first one's deadline.
const LATE_READER: &str = r#"
import { definePlugin } from "yohost";
let late = () => "never called";
export default definePlugin({
  tools: [
    {
      name: "wait",
      run: (_args, ctx) => new Promise(() => {
        late = () => `aborted ${ctx.signal.aborted}, ${ctx.signal.reason?.name}`;
      }),
    },
    { name: "late", run: () => late() },
  ],
});
"#;

#[tokio::test]
async fn a_signal_first_read_after_the_deadline_is_already_aborted() {
    let dir = plugin_dir();
    write(dir.path(), "late.ts", LATE_READER);
    let host = PluginHost::open(dir.path()).unwrap();
    let limits = |after| CallLimits {
        deadline: Instant::now() + after,
        cancel: CancellationToken::new(),
        ui: None,
        progress: None,
    };
    let outcome = call_wait(&host, limits(Duration::from_millis(150))).await;
    assert!(matches!(outcome, Err(CallError::Timeout(_))), "{outcome:?}");
    let reply = call_tool(&host, "late", limits(Duration::from_secs(10))).await;
    let reply = format!("{reply:?}");
    assert!(
        reply.contains("aborted true, TimeoutError"),
        "the signal a late reader gets is aborted, with the reason: {reply}"
    );
}
