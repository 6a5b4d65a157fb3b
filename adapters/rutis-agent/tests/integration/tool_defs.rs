//! Rust tools with rutis-agent `ToolDef`'s fields as host tools, through a
//! real `yoagent::Agent`:
//! - a tool is offered and called with the model's arguments; a JSON result
//!   reaches the model as its text, a string result as itself;
//! - a runner's `Err` is an error result, and a runner that panics fails
//!   the call closed;
//! - two tools of one name, or a malformed schema, are refused.

use crate::support;

use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;
use support::*;
use yohost::manifest::Manifest;
use yohost::PluginHost;
use yohost_adapter_rutis_agent::tool_defs::{self, RustTool};
use yohost_adapter_rutis_agent::SchemaError;

/// A tool built the way rutis-agent's `ToolDef::new` builds one.
fn tool<F, Fut>(name: &str, run: F) -> RustTool
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, String>> + Send + 'static,
{
    RustTool {
        name: name.into(),
        description: Some(format!("The {name} tool")),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        run: Arc::new(move |args| Box::pin(run(args))),
    }
}

fn defs() -> Vec<RustTool> {
    vec![
        tool("weather", |args: Value| async move {
            Ok(json!({"city": args["city"], "sky": "clear"}))
        }),
        tool("motto", |_| async { Ok(Value::String("ship it".into())) }),
        tool("broken", |_| async {
            Err("the service is down".to_string())
        }),
        tool("panics", |_| async { panic!("the runner panicked") }),
    ]
}

#[tokio::test]
async fn tool_defs_are_called_by_the_model_and_errors_are_errors() {
    let plugin = tool_defs::plugin("rutis-tools", defs(), Manifest::default()).unwrap();
    let host = PluginHost::from_plugins(vec![plugin]);
    let (agent, _) = scripted(vec![
        call("weather", json!({"city": "Oslo"})),
        call("motto", json!({})),
        call("broken", json!({})),
        call("panics", json!({})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(
        results[..2],
        [
            (
                "weather".into(),
                r#"{"city":"Oslo","sky":"clear"}"#.into(),
                false
            ),
            ("motto".into(), "ship it".into(), false),
        ]
    );
    let (name, shown, is_error) = &results[2];
    assert_eq!(name, "broken");
    assert!(
        *is_error && shown.contains("the service is down"),
        "{shown}"
    );
    let (name, shown, is_error) = &results[3];
    assert_eq!(name, "panics");
    assert!(*is_error && shown.contains("[yohost]"), "{shown}");
}

#[test]
fn two_tools_of_one_name_or_a_malformed_schema_are_refused() {
    let mut twice = defs();
    twice.extend(defs().into_iter().take(1));
    let err = tool_defs::plugin("dup", twice, Manifest::default()).err();
    assert!(matches!(
        err,
        Some(SchemaError::Duplicate {
            first: 0,
            second: 4,
            ..
        })
    ));
    let mut stringly = tool("stringly", |_| async { Ok(Value::Null) });
    stringly.parameters = json!("object");
    let err = tool_defs::plugin("bad", vec![stringly], Manifest::default()).err();
    assert!(matches!(
        err,
        Some(SchemaError::BadParameters { index: 0, .. })
    ));
}
