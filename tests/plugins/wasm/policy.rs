//! A Wasm policy and tool:
//! - `before_tool` denies `echo` calls whose text contains `forbidden`, and
//!   rewrites `echo` text starting `shout:` to upper case;
//! - the `pixel` tool returns a text block and a 1×1 PNG image.

use yohost_sdk::*;

#[derive(Default)]
struct Policy;

/// A 1×1 transparent PNG.
const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

#[plugin]
impl Plugin for Policy {
    const NAME: &'static str = "wasm-policy";

    fn tools(&self, _run: &RunInfo) -> Result<Vec<ToolSpec>, String> {
        Ok(vec![ToolSpec {
            name: "pixel".into(),
            description: "Draw a pixel".into(),
            parameters: json!({"type": "object", "properties": {}}),
            label: None,
            prepares_arguments: false,
        }])
    }

    fn call_tool(&self, call: CallToolArgs) -> Result<ToolReply, String> {
        if call.tool != "pixel" {
            return Err(format!("no tool named {}", call.tool));
        }
        info("drawing a pixel");
        Ok(ToolReply {
            content: vec![
                ContentBlock::text("one pixel"),
                ContentBlock::Image {
                    data: PIXEL_PNG.into(),
                    mime_type: "image/png".into(),
                },
            ],
            details: json!({"width": 1, "height": 1}),
            ..ToolReply::default()
        })
    }

    fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        if call.tool != "echo" {
            return Ok(BeforeToolReply::Allow);
        }
        let text = call.args["text"].as_str().unwrap_or("");
        if text.contains("forbidden") {
            warn("denied a forbidden echo");
            return Ok(BeforeToolReply::Deny("wasm-policy: forbidden text".into()));
        }
        if let Some(rest) = text.strip_prefix("shout:") {
            return Ok(BeforeToolReply::Rewrite(json!({"text": rest.to_uppercase()})));
        }
        Ok(BeforeToolReply::Allow)
    }
}

export_plugin!(Policy);
