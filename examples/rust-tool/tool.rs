//! A Rust tool: counts the words, lines and characters of a text.

use yohost_sdk::*;

#[derive(Default)]
struct WordCount;

#[plugin]
impl Plugin for WordCount {
    const NAME: &'static str = "rust-tool";

    fn tools(&self, _run: &RunInfo) -> Result<Vec<ToolSpec>, String> {
        Ok(vec![ToolSpec {
            name: "word_count".into(),
            description: "Count the words, lines and characters of a text.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to count"}},
                "required": ["text"]
            }),
            label: Some("Word count".into()),
            prepares_arguments: false,
        }])
    }

    fn call_tool(&self, call: CallToolArgs) -> Result<ToolReply, String> {
        let text = call.args["text"]
            .as_str()
            .ok_or("word_count needs a `text` string")?;
        info(&format!("counting {} characters", text.chars().count()));
        Ok(ToolReply {
            content: vec![ContentBlock::text(format!(
                "{} words, {} lines, {} characters",
                text.split_whitespace().count(),
                text.lines().count(),
                text.chars().count()
            ))],
            details: json!({"words": text.split_whitespace().count()}),
            ..ToolReply::default()
        })
    }
}

export_plugin!(WordCount);
