//! yohost's tools and call outcomes as MCP's: a tool's name, description
//! and parameters schema; a call's content (text and images) and whether
//! it failed, or the protocol error it is.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use rmcp::ErrorData;
use serde_json::{json, Value};
use std::sync::Arc;
use yoagent::{AgentTool, Content};
use yohost::ToolCallOutcome;

/// `tool` as MCP lists it. A schema that is not an object (the host only
/// offers tools whose schema is one) is listed as an empty object.
pub fn tool(tool: &dyn AgentTool) -> Tool {
    let schema = match tool.parameters_schema() {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let mut listed = Tool::new(
        tool.name().to_string(),
        tool.description().to_string(),
        Arc::new(schema),
    );
    if tool.label() != tool.name() {
        listed.title = Some(tool.label().to_string());
    }
    listed
}

/// One block of a tool's output as an MCP content block: text and images
/// as they are, anything else (a tool result holds only those) as a note.
fn block(content: &Content) -> Value {
    match content {
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Image { data, mime_type } => {
            json!({"type": "image", "data": data, "mimeType": mime_type})
        }
        _ => json!({"type": "text", "text": "[non-text content omitted]"}),
    }
}

/// A result of `blocks`, an error when `is_error`.
fn result(blocks: Vec<Value>, is_error: bool) -> CallToolResult {
    let result = json!({"content": blocks, "isError": is_error});
    serde_json::from_value(result).expect("text and image blocks are MCP content")
}

/// A result of one text.
fn text(text: String, is_error: bool) -> CallToolResult {
    result(vec![json!({"type": "text", "text": text})], is_error)
}

/// What the client reads of a call's `outcome`: a result, or a protocol
/// error for a tool the run does not offer and for a cancelled call.
pub fn outcome(tool: &str, outcome: ToolCallOutcome) -> Result<CallToolResult, ErrorData> {
    Ok(match outcome {
        ToolCallOutcome::Ran(output) => result(
            output.result.content.iter().map(block).collect(),
            output.is_error,
        ),
        ToolCallOutcome::Denied {
            policy: Some(policy),
            reason,
        } => text(
            format!("Tool call denied by policy `{policy}`: {reason}"),
            true,
        ),
        ToolCallOutcome::Denied {
            policy: None,
            reason,
        } => text(format!("Tool call denied: {reason}"), true),
        ToolCallOutcome::NotStarted(why) => text(format!("Tool call not started: {why}"), true),
        ToolCallOutcome::UnknownTool => {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{tool}`"),
                None,
            ))
        }
        ToolCallOutcome::Cancelled => {
            return Err(ErrorData::internal_error("the call was cancelled", None))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use yoagent::extension::ToolOutput;
    use yoagent::ToolResult;

    #[test]
    fn text_and_images_pass_and_a_deny_names_its_policy() {
        let output = ToolOutput::new(
            ToolResult {
                content: vec![
                    Content::Text { text: "hi".into() },
                    Content::Image {
                        data: "aGk=".into(),
                        mime_type: "image/png".into(),
                    },
                ],
                details: Value::Null,
            },
            false,
        );
        let ran =
            serde_json::to_value(outcome("t", ToolCallOutcome::Ran(output)).unwrap()).unwrap();
        assert_eq!(ran["content"][0]["text"], "hi");
        assert_eq!(ran["content"][1]["mimeType"], "image/png");
        assert_eq!(ran["isError"], false);
        let denied = ToolCallOutcome::Denied {
            policy: Some("guard".into()),
            reason: "no".into(),
        };
        let denied = serde_json::to_value(outcome("t", denied).unwrap()).unwrap();
        assert_eq!(denied["isError"], true);
        assert_eq!(
            denied["content"][0]["text"],
            "Tool call denied by policy `guard`: no"
        );
        assert!(outcome("t", ToolCallOutcome::Cancelled).is_err());
        assert!(outcome("t", ToolCallOutcome::UnknownTool).is_err());
    }
}
