//! Per-plugin figures, through a real `yoagent::Agent`:
//! - every call of a hook is counted for its plugin and hook, with the
//!   failures, the timeouts, and latency quantiles of the calls that
//!   reached the plugin;
//! - a call that fails closed because the plugin is unloaded for the run
//!   is counted as a failed call, never timed;
//! - plugins' figures are their own, and a cancelled run's abandoned call
//!   is not a failure.

use crate::support;

use serde_json::json;
use std::time::Duration;
use support::*;
use yohost::contract::*;
use yohost::manifest::Manifest;
use yohost::{CallError, HookFigures, NativePlugin, PluginHost};

fn figures(host: &PluginHost, plugin: &str, hook: Hook) -> HookFigures {
    host.stats()
        .into_iter()
        .find(|p| p.plugin == plugin)
        .unwrap_or_else(|| panic!("figures for {plugin}"))
        .hooks
        .into_iter()
        .find(|h| h.hook == hook)
        .unwrap_or_else(|| panic!("figures for {plugin}'s {hook}"))
}

fn allow(_: HookCall) -> Result<HookReply, CallError> {
    Ok(HookReply::BeforeTool(BeforeToolReply::Allow))
}

#[tokio::test]
async fn calls_failures_and_latencies_are_counted_per_plugin_and_hook() {
    let slow = Duration::from_millis(20);
    let host = PluginHost::from_plugins(vec![
        NativePlugin::loaded("open", &[Hook::BeforeTool], Manifest::default(), allow),
        NativePlugin::loaded(
            "picky",
            &[Hook::BeforeTool, Hook::AfterTool],
            Manifest::default(),
            move |call| match call {
                HookCall::BeforeTool(a) if a.args["text"] == "bad" => {
                    Err(CallError::Guest("no".into()))
                }
                HookCall::BeforeTool(_) => {
                    std::thread::sleep(slow);
                    Ok(HookReply::BeforeTool(BeforeToolReply::Allow))
                }
                _ => Ok(HookReply::AfterTool(AfterToolReply::default())),
            },
        ),
    ]);
    let (agent, _) = scripted(vec![
        call("echo", json!({"text": "a"})),
        call("echo", json!({"text": "bad"})),
        call("echo", json!({"text": "b"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results.len(), 3, "{results:?}");

    let open = figures(&host, "open", Hook::BeforeTool);
    assert_eq!((open.calls, open.failures, open.timeouts), (3, 0, 0));
    assert_eq!(open.timed, 3);
    let picky = figures(&host, "picky", Hook::BeforeTool);
    assert_eq!((picky.calls, picky.failures, picky.timeouts), (3, 1, 0));
    let (p50, p99, max) = (picky.p50.unwrap(), picky.p99.unwrap(), picky.max.unwrap());
    assert!(
        p50 >= slow,
        "two of three calls slept {slow:?}: p50 {p50:?}"
    );
    assert!(p50 <= p99 && p99 <= max, "{picky:?}");
    let after = figures(&host, "picky", Hook::AfterTool);
    assert_eq!(
        after.calls, 2,
        "the denied call produced no output to filter"
    );
    let stats = host.stats();
    assert_eq!(stats[0].engine, yohost::EngineKind::NATIVE);
    assert_eq!(
        stats
            .iter()
            .find(|p| p.plugin == "open")
            .unwrap()
            .hooks
            .len(),
        1,
        "only hooks that were called"
    );
}

#[tokio::test]
async fn a_timeout_is_a_failure_and_the_unloaded_calls_after_it_are_counted_untimed() {
    // A native plugin runs inline, so it reports its own timeout, as an
    // engine that noticed the deadline first does.
    let host = PluginHost::from_plugins(vec![NativePlugin::loaded(
        "sleepy",
        &[Hook::BeforeTool],
        Manifest::default(),
        |_| Err(CallError::Timeout(Duration::from_millis(30))),
    )]);
    let (agent, _) = scripted(vec![
        call("echo", json!({"text": "a"})),
        call("echo", json!({"text": "b"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    run(&mut agent, "go").await;
    let f = figures(&host, "sleepy", Hook::BeforeTool);
    assert_eq!((f.calls, f.failures, f.timeouts), (2, 2, 1), "{f:?}");
    assert_eq!(f.timed, 1, "the unloaded call never reached the plugin");
}

#[tokio::test]
async fn a_plugin_never_called_has_no_figures() {
    let host = PluginHost::from_plugins(vec![NativePlugin::loaded(
        "idle",
        &[Hook::OnStop],
        Manifest::default(),
        |_| Ok(HookReply::OnStop(OnStopReply::Accept)),
    )]);
    let stats = host.stats();
    assert_eq!(stats.len(), 1);
    assert!(stats[0].hooks.is_empty(), "{stats:?}");
}
