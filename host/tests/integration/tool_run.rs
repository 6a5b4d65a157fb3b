//! `ToolRun`: the plugins' tools without a model, with in-process plugins:
//! - a call passes `before_tool` (a deny names its policy, a rewrite runs)
//!   and `after_tool` (the output is filtered), as in an agent's run;
//! - a tool the run does not offer, and a cancelled call, say so;
//! - observers see each call's start and end; `finish` runs every plugin's
//!   `finish` with the run's id, and no call starts after it.

use crate::support;

use serde_json::json;
use std::sync::{Arc, Mutex};
use support::*;
use tokio_util::sync::CancellationToken;
use yohost::contract::*;
use yohost::manifest::Manifest;
use yohost::{NativePlugin, PluginHost, ToolCallOutcome, ToolRun};

fn plugin(
    name: &str,
    priority: i64,
    hooks: &[Hook],
    handler: impl Fn(HookCall) -> Result<HookReply, yohost::CallError> + Send + Sync + 'static,
) -> yohost::LoadedPlugin {
    let manifest = Manifest::parse(&format!("priority = {priority}")).unwrap();
    NativePlugin::loaded(name, hooks, manifest, handler)
}

/// The text of a ran call's output.
fn ran(outcome: ToolCallOutcome) -> String {
    match outcome {
        ToolCallOutcome::Ran(output) => texts(&output.result.content),
        other => panic!("not ran: {other:?}"),
    }
}

#[tokio::test]
async fn a_tool_run_passes_each_call_through_the_policies_and_filters() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let record = Arc::clone(&seen);
    let host = PluginHost::from_plugins(vec![
        plugin("guard", 1, &[Hook::BeforeTool], |call| match call {
            HookCall::BeforeTool(a) if a.args["text"] == "no" => Ok(HookReply::BeforeTool(
                BeforeToolReply::Deny("`no` is not allowed".into()),
            )),
            HookCall::BeforeTool(a) if a.args["text"] == "old" => Ok(HookReply::BeforeTool(
                BeforeToolReply::Rewrite(json!({"text": "new"})),
            )),
            _ => Ok(HookReply::BeforeTool(BeforeToolReply::Allow)),
        }),
        plugin("redact", 2, &[Hook::AfterTool], |call| match call {
            HookCall::AfterTool(a) => {
                let text = match &a.output.content[0] {
                    ContentBlock::Text { text } => text.replace("secret", "[r]"),
                    _ => String::new(),
                };
                Ok(HookReply::AfterTool(AfterToolReply {
                    content: Some(vec![ContentBlock::text(text)]),
                    ..Default::default()
                }))
            }
            _ => unreachable!(),
        }),
        plugin(
            "tools",
            3,
            &[Hook::Tools, Hook::CallTool],
            |call| match call {
                HookCall::Tools(_) => Ok(HookReply::Tools(vec![ToolSpec {
                    name: "echo".into(),
                    description: "Say it back.".into(),
                    parameters: json!({"type": "object"}),
                    label: None,
                    prepares_arguments: false,
                }])),
                HookCall::CallTool(a) => Ok(HookReply::CallTool(ToolReply::text(
                    a.args["text"].as_str().unwrap_or(""),
                ))),
                _ => unreachable!(),
            },
        ),
        plugin("observer", 4, &[Hook::OnEvent, Hook::Finish], move |call| {
            let line = match call {
                HookCall::OnEvent(a) => a.event["type"].as_str().unwrap_or("").to_string(),
                HookCall::Finish(a) => format!("finish {} {}", a.run.run_id, a.end),
                _ => unreachable!(),
            };
            record.lock().unwrap().push(line);
            Ok(HookReply::Ignored)
        }),
    ]);
    let run = ToolRun::open(&host, "job-1").await.unwrap();
    assert_eq!(run.run_id(), "job-1");
    let names: Vec<&str> = run.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["echo"]);
    let none = CancellationToken::new();

    let said = ran(run.call("echo", json!({"text": "a secret"}), &none).await);
    assert_eq!(said, "a [r]");
    match run.call("echo", json!({"text": "no"}), &none).await {
        ToolCallOutcome::Denied { policy, reason } => {
            assert_eq!(policy.as_deref(), Some("guard"));
            assert_eq!(reason, "`no` is not allowed");
        }
        other => panic!("not denied: {other:?}"),
    }
    assert_eq!(
        ran(run.call("echo", json!({"text": "old"}), &none).await),
        "new"
    );
    assert!(matches!(
        run.call("missing", json!({}), &none).await,
        ToolCallOutcome::UnknownTool
    ));
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    assert!(matches!(
        run.call("echo", json!({"text": "x"}), &cancelled).await,
        ToolCallOutcome::Cancelled
    ));

    run.finish().await;
    assert!(matches!(
        run.call("echo", json!({"text": "late"}), &none).await,
        ToolCallOutcome::NotStarted(_)
    ));
    let seen = seen.lock().unwrap().clone();
    let starts = seen.iter().filter(|l| *l == "toolExecutionStart").count();
    let ends = seen.iter().filter(|l| *l == "toolExecutionEnd").count();
    assert_eq!((starts, ends), (3, 3), "{seen:?}");
    assert_eq!(
        seen.last().map(String::as_str),
        Some("finish job-1 completed"),
        "{seen:?}"
    );
}
