//! A tool result with `terminate: true` ends the run once the turn's tools
//! are done, before the next model request (pi's semantics), for every
//! engine that speaks the contract, through a real `yoagent::Agent`:
//! - a TypeScript tool and a Python tool that answer `terminate` end the
//!   run: the model's follow-up turn is never requested;
//! - a turn where one result does not ask it (the built-in `echo`) goes on;
//! - a terminating result that a later turn follows (the model was asked
//!   again) does not end that later turn's run early.

use crate::support;

use serde_json::json;
use support::*;
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yohost::PluginHost;

const TS_TOOL: &str = r#"import { definePlugin, text } from "yohost";
export default definePlugin({
  tools: [
    {
      name: "finish",
      description: "Give the final answer",
      parameters: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
      execute: (args: { answer: string }) => ({ content: [text(args.answer)], terminate: true }),
    },
  ],
});
"#;

const PY_TOOL: &str = r#"from yohost import CallTool, Plugin, ToolResult

plugin = Plugin("py-finish")


@plugin.tool(
    name="py_finish",
    description="Give the final answer",
    parameters={"type": "object", "properties": {"answer": {"type": "string"}}},
)
def py_finish(call: CallTool) -> ToolResult:
    return ToolResult(call["args"]["answer"], terminate=True)
"#;

fn host() -> (tempfile::TempDir, PluginHost) {
    let dir = plugin_dir();
    write(dir.path(), "finish.ts", TS_TOOL);
    write(dir.path(), "finish.py", PY_TOOL);
    let host = PluginHost::open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    (dir, host)
}

/// One turn calling each of `calls`.
fn batch(calls: &[(&str, serde_json::Value)]) -> MockResponse {
    MockResponse::ToolCalls(
        calls
            .iter()
            .map(|(name, arguments)| MockToolCall {
                name: (*name).into(),
                arguments: arguments.clone(),
                provider_metadata: None,
            })
            .collect(),
    )
}

#[tokio::test]
async fn a_terminating_result_ends_the_run_before_the_next_request() {
    let (_dir, host) = host();
    for tool in ["finish", "py_finish"] {
        let (agent, requests) = scripted(vec![
            call(tool, json!({"answer": "42"})),
            text("never requested"),
        ]);
        let mut agent = agent.with_extension(host.extension());
        let events = run(&mut agent, "answer").await;
        assert_eq!(tool_results(&events), [(tool.into(), "42".into(), false)]);
        assert_eq!(requests.lock().unwrap().len(), 1, "{tool}");
    }
}

#[tokio::test]
async fn a_batch_ends_the_run_only_when_every_result_asks_it() {
    let (_dir, host) = host();
    // Both plugin tools terminate: the run ends.
    let (agent, requests) = scripted(vec![
        batch(&[
            ("finish", json!({"answer": "a"})),
            ("py_finish", json!({"answer": "b"})),
        ]),
        text("never requested"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    run(&mut agent, "answer").await;
    assert_eq!(requests.lock().unwrap().len(), 1);

    // `echo` (yoagent's own tool) does not: the model is asked to follow
    // up, and a later turn's request is not ended by the earlier result.
    let (agent, requests) = scripted(vec![
        batch(&[
            ("finish", json!({"answer": "a"})),
            ("echo", json!({"text": "b"})),
        ]),
        call("echo", json!({"text": "c"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "answer").await;
    assert_eq!(requests.lock().unwrap().len(), 3);
    assert_eq!(tool_results(&events).len(), 3);
}
