//! The built-in scripted model: a JSON array of assistant turns, so
//! `yohost run` works offline.
//!
//! Each turn is `{"text": "..."}`,
//! `{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}`, or
//! `{"list_tools": true}`: a text naming each tool the model was offered,
//! one a line (`NAME: the first line of its description`).

use serde::Deserialize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yoagent::provider::{
    MockProvider, ProviderError, StreamConfig, StreamEvent, StreamProvider, ToolDefinition,
};
use yoagent::{Content, Message};

/// The script used when `--script` is not given.
pub const DEFAULT_SCRIPT: &str = include_str!("default-script.json");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    list_tools: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCall {
    name: String,
    #[serde(default)]
    arguments: serde_json::Value,
}

/// A script: the turns the mock plays, and which turns instead list the
/// tools offered.
pub struct Script {
    played: Vec<MockResponse>,
    /// The indices of the `list_tools` turns.
    listing: Vec<usize>,
}

/// Read a script file, or the default script.
pub fn load(path: Option<&Path>) -> Result<Script, String> {
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

fn parse(text: &str) -> Result<Script, String> {
    let turns: Vec<Turn> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut script = Script {
        played: Vec::new(),
        listing: Vec::new(),
    };
    for (i, turn) in turns.into_iter().enumerate() {
        match (turn.text, turn.tool_calls.is_empty(), turn.list_tools) {
            (Some(text), true, false) => script.played.push(MockResponse::Text(text)),
            (None, false, false) => script.played.push(MockResponse::ToolCalls(
                turn.tool_calls
                    .into_iter()
                    .map(|c| MockToolCall {
                        name: c.name,
                        arguments: c.arguments,
                        provider_metadata: None,
                    })
                    .collect(),
            )),
            (None, true, true) => script.listing.push(i),
            _ => {
                return Err(format!(
                    "turn {i} must have exactly one of `text`, `tool_calls` and `list_tools`"
                ))
            }
        }
    }
    Ok(script)
}

/// The text of a `list_tools` turn: each tool of `tools`, one a line.
fn listed(tools: &[ToolDefinition]) -> String {
    tools
        .iter()
        .map(|t| format!("{}: {}", t.name, t.description.lines().next().unwrap_or("")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The scripted model: yoagent's `MockProvider` playing the turns, with
/// every tool call's id made distinct across the run (`call-T-I`: turn `T`,
/// call `I` in it), as a real model's are; the mock numbers the calls of
/// each turn from 0 again.
pub struct Scripted {
    turns: MockProvider,
    listing: Vec<usize>,
    turn: AtomicUsize,
}

impl Scripted {
    /// A model that plays `script`'s turns in order.
    pub fn new(script: Script) -> Self {
        Self {
            turns: MockProvider::new(script.played),
            listing: script.listing,
            turn: AtomicUsize::new(0),
        }
    }
}

/// The id of call `id` (the mock's `mock-tool-I`) of turn `turn`.
fn renamed(turn: usize, id: &str) -> String {
    let index = id.rsplit('-').next().unwrap_or(id);
    format!("call-{turn}-{index}")
}

#[async_trait::async_trait]
impl StreamProvider for Scripted {
    async fn stream(
        &self,
        config: StreamConfig,
        tx: mpsc::UnboundedSender<StreamEvent>,
        cancel: CancellationToken,
    ) -> Result<Message, ProviderError> {
        let turn = self.turn.fetch_add(1, Ordering::SeqCst);
        let (inner_tx, mut inner_rx) = mpsc::unbounded_channel();
        let result = if self.listing.contains(&turn) {
            let text = listed(&config.tools);
            let once = MockProvider::new(vec![MockResponse::Text(text)]);
            once.stream(config, inner_tx, cancel).await
        } else {
            self.turns.stream(config, inner_tx, cancel).await
        };
        while let Ok(mut event) = inner_rx.try_recv() {
            match &mut event {
                StreamEvent::ToolCallStart { id, .. } => *id = renamed(turn, id),
                StreamEvent::Done { message } => rename_calls(turn, message),
                _ => {}
            }
            let _ = tx.send(event);
        }
        result.map(|mut message| {
            rename_calls(turn, &mut message);
            message
        })
    }
}

/// Give the tool calls of turn `turn`'s message their distinct ids.
fn rename_calls(turn: usize, message: &mut Message) {
    if let Message::Assistant { content, .. } = message {
        for block in content {
            if let Content::ToolCall { id, .. } = block {
                *id = renamed(turn, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_script_parses() {
        assert!(!load(None).unwrap().played.is_empty());
    }

    #[test]
    fn a_turn_needs_text_or_tool_calls() {
        assert!(parse(r#"[{"text": "a", "tool_calls": [{"name": "x"}]}]"#).is_err());
        assert!(parse(r#"[{}]"#).is_err());
        assert!(parse(r#"[{"txt": "a"}]"#).is_err());
        assert!(parse(r#"[{"text": "a", "list_tools": true}]"#).is_err());
        let script =
            parse(r#"[{"text": "a"}, {"tool_calls": [{"name": "ls"}]}, {"list_tools": true}]"#)
                .unwrap();
        assert_eq!(script.played.len(), 2);
        assert_eq!(script.listing, [2]);
    }

    #[test]
    fn a_listing_names_each_tool_with_its_description_s_first_line() {
        let tool = |name: &str, description: &str| ToolDefinition {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({}),
        };
        let tools = [tool("bash", "Runs it.\nMore."), tool("read", "")];
        assert_eq!(listed(&tools), "bash: Runs it.\nread: ");
    }
}
