//! The built-in scripted model: a JSON array of assistant turns, so
//! `yohost run` works offline.
//!
//! Each turn is `{"text": "..."}` or
//! `{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}`.

use serde::Deserialize;
use std::path::Path;
use yoagent::provider::mock::{MockResponse, MockToolCall};

/// The script used when `--script` is not given.
pub const DEFAULT_SCRIPT: &str = include_str!("default-script.json");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCall {
    name: String,
    #[serde(default)]
    arguments: serde_json::Value,
}

/// Read a script file, or the default script.
pub fn load(path: Option<&Path>) -> Result<Vec<MockResponse>, String> {
    let text = match path {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read script {}: {e}", path.display()))?,
        None => DEFAULT_SCRIPT.to_string(),
    };
    parse(&text).map_err(|e| match path {
        Some(path) => format!("script {}: {e}", path.display()),
        None => format!("the default script: {e}"),
    })
}

fn parse(text: &str) -> Result<Vec<MockResponse>, String> {
    let turns: Vec<Turn> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    turns
        .into_iter()
        .enumerate()
        .map(|(i, turn)| match (turn.text, turn.tool_calls.is_empty()) {
            (Some(text), true) => Ok(MockResponse::Text(text)),
            (None, false) => Ok(MockResponse::ToolCalls(
                turn.tool_calls
                    .into_iter()
                    .map(|c| MockToolCall {
                        name: c.name,
                        arguments: c.arguments,
                        provider_metadata: None,
                    })
                    .collect(),
            )),
            _ => Err(format!(
                "turn {i} must have either `text` or `tool_calls`, not both or neither"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_script_parses() {
        assert!(!load(None).unwrap().is_empty());
    }

    #[test]
    fn a_turn_needs_text_or_tool_calls() {
        assert!(parse(r#"[{"text": "a", "tool_calls": [{"name": "x"}]}]"#).is_err());
        assert!(parse(r#"[{}]"#).is_err());
        assert!(parse(r#"[{"txt": "a"}]"#).is_err());
        assert_eq!(
            parse(r#"[{"text": "a"}, {"tool_calls": [{"name": "ls"}]}]"#)
                .unwrap()
                .len(),
            2
        );
    }
}
