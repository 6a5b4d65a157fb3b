//! Tool arguments are checked against the tool's JSON Schema before the
//! plugin sees them, for every engine's tools, through a real
//! `yoagent::Agent`:
//! - a TypeScript tool and a Python tool called with arguments that do not
//!   match answer an error result naming each field (`Validation failed
//!   for tool "…"`), and their code never runs;
//! - the same tools called with matching arguments run.

use crate::support;

use serde_json::json;
use support::*;
use yohost::PluginHost;

const TS_TOOL: &str = r#"import { definePlugin, text } from "yohost";
export default definePlugin({
  tools: [
    {
      name: "repeat",
      description: "Repeat a word",
      parameters: {
        type: "object",
        properties: { word: { type: "string" }, times: { type: "integer", minimum: 1 } },
        required: ["word", "times"],
      },
      execute: (args: { word: string; times: number }) => ({ content: [text(args.word.repeat(args.times))] }),
    },
  ],
});
"#;

const PY_TOOL: &str = r#"from yohost import CallTool, Plugin, ToolReply

plugin = Plugin("py-count")


@plugin.tool(
    name="count",
    description="Count the letters of a word",
    parameters={
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": False,
    },
)
def count(call: CallTool) -> ToolReply:
    return str(len(call["args"]["word"]))
"#;

#[tokio::test]
async fn arguments_that_do_not_match_the_schema_never_reach_the_tool() {
    let dir = plugin_dir();
    write(dir.path(), "repeat.ts", TS_TOOL);
    write(dir.path(), "count.py", PY_TOOL);
    let host = PluginHost::open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![
        call("repeat", json!({"word": 3, "times": 0})),
        call("repeat", json!({})),
        call("count", json!({"word": "abc", "extra": true})),
        call("repeat", json!({"word": "ab", "times": 2})),
        call("count", json!({"word": "abc"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    let failed = |i: usize, fields: &[&str]| {
        let (tool, text, is_error) = &results[i];
        assert!(is_error, "{results:?}");
        assert!(
            text.starts_with(&format!("Validation failed for tool \"{tool}\":")),
            "{text}"
        );
        for field in fields {
            assert!(
                text.contains(&format!("  - {field}: ")),
                "{field} in {text}"
            );
        }
    };
    failed(0, &["word", "times"]);
    failed(1, &["root"]);
    assert!(results[1].1.contains("\"word\""), "{results:?}");
    failed(2, &["root"]);
    assert!(results[2].1.contains("extra"), "{results:?}");
    assert_eq!(results[3], ("repeat".into(), "abab".into(), false));
    assert_eq!(results[4], ("count".into(), "3".into(), false));
}

/// A schema whose `$ref`/`allOf` graph fans out (40 levels, two references
/// each) would keep the validator busy for ever: the tool is refused when
/// the run loads its tools, with a warning naming the tool and the budget,
/// the model's call finds no such tool, the plugin is never called, and
/// the run ends at once.
#[test]
fn a_tool_whose_schema_fans_out_is_refused_at_load_and_never_hangs_the_host() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use yohost::contract::*;
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d40".into(), json!({"type": "object"}));
    let schema = json!({"type": "object", "$defs": defs, "$ref": "#/$defs/d0"});
    let called = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&called);
    let plugin = yohost::NativePlugin::loaded(
        "fanout",
        &[Hook::Tools, Hook::CallTool],
        yohost::manifest::Manifest::default(),
        move |call| match call {
            HookCall::Tools(_) => Ok(HookReply::Tools(vec![ToolSpec {
                name: "fan".into(),
                description: "fans out".into(),
                parameters: schema.clone(),
                label: None,
                prepares_arguments: false,
            }])),
            _ => {
                flag.store(true, Ordering::Relaxed);
                Ok(HookReply::CallTool(ToolReply::text("ran")))
            }
        },
    );
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (logs, _guard) = capture_logs();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let results = runtime.block_on(async {
            let host = PluginHost::from_plugins(vec![plugin]);
            let (agent, _) = scripted(vec![call("fan", json!({})), text("done")]);
            let mut agent = agent.with_extension(host.extension());
            tool_results(&run(&mut agent, "go").await)
        });
        let _ = done.send((results, logs.lines()));
    });
    let (results, lines) = finished
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the run ends: the host's own validation is bounded");
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].2, "{results:?}");
    assert!(
        !called.load(Ordering::Relaxed),
        "the plugin is never called"
    );
    let warned = lines.iter().any(|line| {
        line["fields"]["tool"] == "fan"
            && line["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("tool \"fan\" is refused") && m.contains("budget"))
    });
    assert!(warned, "a warning names the tool and the budget: {lines:?}");
}
