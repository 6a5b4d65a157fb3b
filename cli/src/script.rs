//! The built-in scripted model: a JSON array of assistant turns, so
//! `yohost run` works offline.
//!
//! Each turn is `{"text": "..."}` or
//! `{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}`.

use serde::Deserialize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yoagent::provider::{MockProvider, ProviderError, StreamConfig, StreamEvent, StreamProvider};
use yoagent::{Content, Message};

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

/// The scripted model: yoagent's `MockProvider` playing the turns, with
/// every tool call's id made distinct across the run (`call-T-I`: turn `T`,
/// call `I` in it), as a real model's are; the mock numbers the calls of
/// each turn from 0 again.
pub struct Scripted {
    turns: MockProvider,
    turn: AtomicUsize,
}

impl Scripted {
    /// A model that plays `turns` in order.
    pub fn new(turns: Vec<MockResponse>) -> Self {
        Self {
            turns: MockProvider::new(turns),
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
        let result = self.turns.stream(config, inner_tx, cancel).await;
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
