//! A tool's progress, through a real `yoagent::Agent`: what a TypeScript
//! tool tells `ctx.progress` (on the embedded engine and on Node) and what
//! a Python tool tells `yohost.progress` reaches the run as
//! `ProgressMessage` events of that call, in order, before the call ends;
//! a flood is cut to 256 messages of at most 1,024 characters; a message
//! sent after the call ended, or from a hook other than a tool's, is
//! dropped; while a plugin filters tool output (`after_tool`), none passes,
//! in an agent's run or a [`yohost::ToolRun`].

use crate::support;

use serde_json::json;
use support::*;
use yoagent::AgentEvent;
use yohost::PluginHost;

/// A TypeScript tool `steps` that reports three steps, a tool `flood` that
/// reports 1,000 long messages, and a tool `late` that reports after it
/// answered; a `before_tool` that reports too.
const TYPESCRIPT: &str = r#"
import { definePlugin } from "yohost";

export default definePlugin({
  before_tool(_args, ctx) {
    ctx.progress("from a policy");
  },
  tools: [
    {
      name: "steps",
      async run(_args, ctx) {
        for (let n = 1; n <= 3; n++) {
          ctx.progress(`step ${n} of 3`);
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return "stepped";
      },
    },
    {
      name: "flood",
      run(_args, ctx) {
        for (let n = 0; n < 1000; n++) ctx.progress(`${n} ` + "x".repeat(2000));
        return "flooded";
      },
    },
    {
      name: "late",
      run(_args, ctx) {
        setTimeout(() => ctx.progress("too late"), 0);
        return "answered";
      },
    },
  ],
});
"#;

/// The progress messages of each tool call of a run, by tool, in the
/// order they came; each must come before its call's end. (The scripted
/// model gives each turn's calls the same ids: the latest call with an id
/// is the one meant.)
fn progress_by_tool(events: &[AgentEvent]) -> Vec<(String, Vec<String>)> {
    let mut calls: Vec<(String, String, Vec<String>, bool)> = Vec::new();
    for event in events {
        match event {
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                ..
            } => calls.push((tool_call_id.clone(), tool_name.clone(), Vec::new(), false)),
            AgentEvent::ProgressMessage {
                tool_call_id, text, ..
            } => {
                let call = calls
                    .iter_mut()
                    .rfind(|c| c.0 == *tool_call_id)
                    .expect("progress of a started call");
                assert!(!call.3, "progress after its call ended: {text}");
                call.2.push(text.clone());
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                if let Some(call) = calls.iter_mut().rfind(|c| c.0 == *tool_call_id) {
                    call.3 = true;
                }
            }
            _ => {}
        }
    }
    calls.into_iter().map(|c| (c.1, c.2)).collect()
}

/// Run `tools` one after another through the host's plugins; the progress
/// of each call.
async fn progress_of(host: &PluginHost, tools: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut script: Vec<_> = tools.iter().map(|t| call(t, json!({}))).collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    let results = tool_results(&events);
    assert!(results.iter().all(|r| !r.2), "{results:?}");
    progress_by_tool(&events)
}

/// What every JavaScript engine must show: three steps in order, a flood
/// cut to the bounds, nothing from a policy or after the answer.
async fn typescript_progress_reaches_the_run(host: &PluginHost) {
    let got = progress_of(host, &["steps", "flood", "late"]).await;
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0].0, "steps");
    assert_eq!(got[0].1, ["step 1 of 3", "step 2 of 3", "step 3 of 3"]);
    let flood = &got[1].1;
    assert_eq!(flood.len(), 256);
    assert!(flood[0].starts_with("0 x") && flood[255].starts_with("255 x"));
    assert!(flood.iter().all(|m| m.chars().count() == 1024));
    assert_eq!(got[2], ("late".to_string(), Vec::new()));
}

#[tokio::test]
async fn a_typescript_tool_s_progress_reaches_the_run_on_the_embedded_engine() {
    let dir = plugin_dir();
    write(dir.path(), "reporter/index.ts", TYPESCRIPT);
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 1, "{:?}", host.refused());
    typescript_progress_reaches_the_run(&host).await;
}

#[tokio::test]
async fn no_progress_passes_while_a_plugin_filters_tool_output() {
    let dir = plugin_dir();
    write(dir.path(), "reporter/index.ts", TYPESCRIPT);
    write(
        dir.path(),
        "filter/index.ts",
        r#"import { definePlugin } from "yohost";
export default definePlugin({ after_tool() { return null; } });
"#,
    );
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 2, "{:?}", host.refused());
    let got = progress_of(&host, &["steps"]).await;
    assert_eq!(got, [("steps".to_string(), Vec::new())]);
    let run = yohost::ToolRun::open(&host, "served").await.unwrap();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = std::sync::Arc::clone(&heard);
    let cancel = tokio_util::sync::CancellationToken::new();
    let outcome = run
        .call_reporting(
            "steps",
            json!({}),
            &cancel,
            Some(std::sync::Arc::new(move |m| sink.lock().unwrap().push(m))),
        )
        .await;
    assert!(
        matches!(outcome, yohost::ToolCallOutcome::Ran(_)),
        "{outcome:?}"
    );
    assert!(heard.lock().unwrap().is_empty());
}

#[cfg(feature = "node")]
#[tokio::test]
async fn a_typescript_tool_s_progress_reaches_the_run_on_node() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    write(dir.path(), "reporter/index.ts", TYPESCRIPT);
    write(dir.path(), "reporter/plugin.toml", "engine = \"node\"\n");
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 1, "{:?}", host.refused());
    typescript_progress_reaches_the_run(&host).await;
}

/// A Python tool `pysteps` that reports two steps, one of them from a
/// coroutine; a tool `pykept` that keeps the reporting function, which a
/// later call uses after its own call ended.
#[cfg(feature = "python")]
const PYTHON: &str = r#"
import asyncio
import yohost
from yohost import Plugin

plugin = Plugin("pyreporter")
kept = []


@plugin.tool(name="pysteps")
async def pysteps(call):
    yohost.progress("first")
    await asyncio.sleep(0)
    yohost.progress(2)
    return "stepped"


@plugin.tool(name="pykept")
def pykept(call):
    if kept:
        kept[0]("from an ended call")
    else:
        kept.append(yohost._current.get()[2])
    return "kept"
"#;

#[cfg(feature = "python")]
#[tokio::test]
async fn a_python_tool_s_progress_reaches_the_run_and_an_ended_call_s_does_not() {
    let dir = plugin_dir();
    write(dir.path(), "pyreporter.py", PYTHON);
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 1, "{:?}", host.refused());
    let got = progress_of(&host, &["pysteps", "pykept", "pykept"]).await;
    assert_eq!(
        got,
        [
            ("pysteps".to_string(), vec!["first".to_string(), "2".into()]),
            ("pykept".into(), Vec::new()),
            ("pykept".into(), Vec::new()),
        ]
    );
}
