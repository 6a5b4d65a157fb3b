//! MCP's tools and results in yohost's contract.
//!
//! | MCP | yohost |
//! |---|---|
//! | `name`, `description`, `inputSchema` | the tool's name, description and parameters |
//! | `title` (or `annotations.title`) | the tool's label |
//! | `annotations` hints | a line of the description (`read-only`, `destructive`, ...), which the model reads |
//! | text content | text |
//! | image content | an image (the host checks it like every image) |
//! | audio content | text saying what was left out |
//! | an embedded resource | text: its URI, then its text (or what kind of bytes it holds) |
//! | a resource link | text: its name and URI |
//! | `structuredContent` | the result's `details`; and text of its JSON when the result has no content besides (servers are asked to repeat it as text) |
//! | `isError` | `is_error` |

use serde_json::Value;
use yohost::contract::{ContentBlock, ToolReply, ToolSpec};

/// The longest tool name taken, in bytes (the specification's 128
/// characters of ASCII).
const MAX_NAME_BYTES: usize = 128;

/// The longest tool description taken, in bytes; a longer one is cut.
const MAX_DESCRIPTION_BYTES: usize = 16 << 10;

/// The largest input schema taken, in bytes of JSON.
const MAX_SCHEMA_BYTES: usize = 256 << 10;

/// A listed tool as a yohost tool, or why it cannot be one: a name over
/// [`MAX_NAME_BYTES`] or a schema over [`MAX_SCHEMA_BYTES`] leaves it out,
/// and a description over [`MAX_DESCRIPTION_BYTES`] is cut.
pub(crate) fn tool_spec(tool: &Value) -> Result<ToolSpec, String> {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or("a tool without a name")?;
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "a tool whose name is over {MAX_NAME_BYTES} bytes (`{}…`)",
            name.chars().take(32).collect::<String>()
        ));
    }
    let parameters = match tool.get("inputSchema") {
        Some(schema @ Value::Object(_)) => schema.clone(),
        _ => return Err(format!("the tool `{name}` has no `inputSchema` object")),
    };
    if serde_json::to_vec(&parameters).map_or(true, |b| b.len() > MAX_SCHEMA_BYTES) {
        return Err(format!(
            "the tool `{name}`'s `inputSchema` is over {} KiB",
            MAX_SCHEMA_BYTES >> 10
        ));
    }
    let annotations = tool.get("annotations");
    let label = tool
        .get("title")
        .or_else(|| annotations.and_then(|a| a.get("title")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if description.len() > MAX_DESCRIPTION_BYTES {
        let mut cut = MAX_DESCRIPTION_BYTES;
        while !description.is_char_boundary(cut) {
            cut -= 1;
        }
        description.truncate(cut);
        description.push('…');
    }
    let hints = hints(annotations);
    if !hints.is_empty() {
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str(&format!("({})", hints.join(", ")));
    }
    Ok(ToolSpec {
        name: name.to_string(),
        description,
        parameters,
        label,
        prepares_arguments: false,
    })
}

/// The annotation hints that say something, in words.
fn hints(annotations: Option<&Value>) -> Vec<&'static str> {
    let hint = |name: &str| {
        annotations
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
    };
    let mut out = Vec::new();
    if hint("readOnlyHint") == Some(true) {
        out.push("read-only");
    } else if hint("destructiveHint") == Some(true) {
        out.push("destructive");
    }
    if hint("idempotentHint") == Some(true) && hint("readOnlyHint") != Some(true) {
        out.push("idempotent");
    }
    if hint("openWorldHint") == Some(true) {
        out.push("reaches outside systems");
    }
    out
}

/// A `tools/call` result as the tool's reply.
pub(crate) fn tool_reply(result: &Value) -> Result<ToolReply, String> {
    let blocks = match result.get("content") {
        Some(Value::Array(blocks)) => blocks.as_slice(),
        None | Some(Value::Null) => &[],
        Some(_) => return Err("`content` is not an array".into()),
    };
    let mut content = blocks.iter().map(block).collect::<Result<Vec<_>, _>>()?;
    let mut details = Value::Null;
    if let Some(structured) = result.get("structuredContent").filter(|s| !s.is_null()) {
        if content.is_empty() {
            content.push(ContentBlock::text(structured.to_string()));
        }
        details = serde_json::json!({ "structuredContent": structured });
    }
    Ok(ToolReply {
        content,
        details,
        is_error: result.get("isError").and_then(Value::as_bool) == Some(true),
        ..ToolReply::text("")
    })
}

fn block(block: &Value) -> Result<ContentBlock, String> {
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
    Ok(match field("type") {
        "text" => ContentBlock::text(field("text")),
        "image" => ContentBlock::Image {
            data: field("data").to_string(),
            mime_type: field("mimeType").to_string(),
        },
        "audio" => ContentBlock::text(format!(
            "[audio ({}) left out: yohost passes no audio to the model]",
            field("mimeType")
        )),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let inner = |name: &str| resource.get(name).and_then(Value::as_str);
            let uri = inner("uri").unwrap_or("?");
            match (inner("text"), inner("blob")) {
                (Some(text), _) => ContentBlock::text(format!("resource {uri}:\n{text}")),
                (None, Some(blob)) => ContentBlock::text(format!(
                    "resource {uri}: {} bytes of {} (base64), not shown",
                    blob.len() / 4 * 3,
                    inner("mimeType").unwrap_or("binary data")
                )),
                (None, None) => ContentBlock::text(format!("resource {uri}")),
            }
        }
        "resource_link" => {
            let mut text = format!("resource link: {} <{}>", field("name"), field("uri"));
            if !field("description").is_empty() {
                text.push_str(&format!(": {}", field("description")));
            }
            ContentBlock::text(text)
        }
        other => return Err(format!("a content block of unknown type {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_name_or_schema_leaves_a_tool_out_and_a_long_description_is_cut() {
        let tool = |name: &str, description: &str, schema: Value| {
            tool_spec(&json!({"name": name, "description": description, "inputSchema": schema}))
        };
        let object = json!({"type": "object"});
        let long_name = "n".repeat(MAX_NAME_BYTES + 1);
        assert!(tool(&long_name, "", object.clone())
            .unwrap_err()
            .contains("over 128 bytes"));
        let long_schema = json!({"type": "object", "description": "s".repeat(MAX_SCHEMA_BYTES)});
        assert!(tool("t", "", long_schema)
            .unwrap_err()
            .contains("`inputSchema` is over"));
        let cut = tool("t", &"é".repeat(MAX_DESCRIPTION_BYTES), object).unwrap();
        assert!(cut.description.len() <= MAX_DESCRIPTION_BYTES + '…'.len_utf8());
        assert!(cut.description.ends_with('…'));
    }

    #[test]
    fn a_listed_tool_keeps_its_schema_title_and_hints() {
        let spec = tool_spec(&json!({
            "name": "echo", "title": "Echo Tool", "description": "Echoes.",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }))
        .expect("a tool");
        assert_eq!(spec.name, "echo");
        assert_eq!(spec.label.as_deref(), Some("Echo Tool"));
        assert_eq!(spec.description, "Echoes.\n\n(read-only)");
        assert_eq!(spec.parameters["properties"]["message"]["type"], "string");
        let err = tool_spec(&json!({"name": "x"})).unwrap_err();
        assert!(err.contains("inputSchema"), "{err}");
    }

    #[test]
    fn every_kind_of_content_becomes_yoagent_content() {
        let reply = tool_reply(&json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
                {"type": "resource", "resource": {"uri": "file:///b.gz", "blob": "AAAA", "mimeType": "application/gzip"}},
                {"type": "resource_link", "uri": "test://1", "name": "one"}
            ],
            "structuredContent": {"temperature": 20},
            "isError": true
        }))
        .expect("a reply");
        let texts: Vec<String> = reply
            .content
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => text.clone(),
                ContentBlock::Image { mime_type, .. } => format!("image {mime_type}"),
            })
            .collect();
        assert_eq!(
            texts,
            [
                "hi",
                "image image/png",
                "resource file:///a.txt:\nbody",
                "resource file:///b.gz: 3 bytes of application/gzip (base64), not shown",
                "resource link: one <test://1>",
            ]
        );
        assert!(reply.is_error);
        assert_eq!(reply.details["structuredContent"]["temperature"], 20);
        let alone = tool_reply(&json!({"structuredContent": {"a": 1}})).unwrap();
        assert_eq!(
            alone.content,
            [ContentBlock::text("{\"a\":1}")],
            "shown when nothing else is"
        );
        assert!(tool_reply(&json!({"content": [{"type": "video"}]})).is_err());
    }
}
