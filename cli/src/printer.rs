//! Printing a run's events as they happen: one line a tool call, a tool's
//! progress (`..`), a denial, a model reply or a run's end, each with the
//! run's id, and the plugin lines [`Held`] holds after the events they
//! follow ([`crate::output`] says in what order).

use crate::output::{clip, escaped, Held};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use yoagent::extension::{Extension, ExtensionError, RunContext, RunHooks};
use yoagent::{AgentEvent, AgentMessage, Content, Message};

/// An extension that prints every event of the runs it is installed on, with
/// the run's id, and the held plugin lines after the events they follow. It
/// decides nothing.
pub struct EventPrinter {
    json: bool,
    held: Held,
    last_error: Arc<Mutex<Option<String>>>,
}

impl EventPrinter {
    /// A printer of events and of the lines `held` holds; `last_error`
    /// receives a failed run's error message.
    pub fn new(json: bool, held: Held, last_error: Arc<Mutex<Option<String>>>) -> Self {
        Self {
            json,
            held,
            last_error,
        }
    }
}

#[async_trait::async_trait]
impl Extension for EventPrinter {
    fn name(&self) -> &str {
        "yohost-printer"
    }

    async fn start_run(&self, run: &RunContext<'_>) -> Result<Box<dyn RunHooks>, ExtensionError> {
        Ok(Box::new(PrintHooks {
            json: self.json,
            held: self.held.clone(),
            run_id: run.run_id.to_string(),
            last_error: Arc::clone(&self.last_error),
            asked: Mutex::default(),
        }))
    }
}

struct PrintHooks {
    json: bool,
    held: Held,
    run_id: String,
    last_error: Arc<Mutex<Option<String>>>,
    /// The arguments the model gave each tool call, by call id: a call's
    /// `->` line shows them, and a rewrite's line then shows what ran.
    asked: Mutex<BTreeMap<String, serde_json::Value>>,
}

impl PrintHooks {
    /// Remember the model's own arguments of the calls in `event`, or take
    /// back those of the call that starts: the line to print for it.
    fn asked_args(&self, event: &AgentEvent) -> Option<serde_json::Value> {
        let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            AgentEvent::MessageEnd {
                message: AgentMessage::Llm(Message::Assistant { content, .. }),
            } => {
                for block in content {
                    if let Content::ToolCall { id, arguments, .. } = block {
                        asked.insert(id.clone(), arguments.clone());
                    }
                }
                None
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => asked.remove(tool_call_id),
            _ => None,
        }
    }
}

impl RunHooks for PrintHooks {
    fn on_event(&self, event: &AgentEvent) {
        if let AgentEvent::AgentEnd { messages, .. } = event {
            if let Some(error) = failed_with(messages) {
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
            }
        }
        let line = if self.json {
            let mut value = serde_json::to_value(event).unwrap_or_default();
            make_errors_readable(&mut value);
            if let Some(object) = value.as_object_mut() {
                object.insert("run_id".into(), self.run_id.clone().into());
            }
            Some(value.to_string())
        } else {
            let asked = self.asked_args(event);
            human(event, &self.run_id, asked.as_ref())
        };
        // What the hooks wrote before the run ended comes before its end;
        // what they wrote about a call, after the call's lines.
        let end = matches!(event, AgentEvent::AgentEnd { .. });
        if end {
            self.held.flush();
        }
        if let Some(line) = line {
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        }
        if !end && follows_held_lines(event) {
            self.held.release(event);
        }
    }
}

/// Whether `event` is one the held lines are printed after.
fn follows_held_lines(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionEnd { .. }
            | AgentEvent::InputRejected { .. }
    )
}

fn failed_with(messages: &[AgentMessage]) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        AgentMessage::Llm(Message::Assistant { error_message, .. }) => error_message.clone(),
        _ => None,
    })
}

/// A failed run's error as a person reads it: yoagent names the loop's
/// internal hook that carried a plugin's failure (`take_failure failed: `),
/// which says nothing to the reader, so it is left out.
fn readable(error: &str) -> String {
    error.replacen("] take_failure failed: ", "] ", 1)
}

/// Every `errorMessage` in an event, as [`readable`] tells it.
fn make_errors_readable(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(object) => {
            for (key, field) in object.iter_mut() {
                match field {
                    serde_json::Value::String(error) if key == "errorMessage" => {
                        *error = readable(error)
                    }
                    _ => make_errors_readable(field),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(make_errors_readable),
        _ => {}
    }
}

fn text_of(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            Content::Image { .. } => Some("[image]"),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The line `event` prints, if any; a tool call's shows the arguments the
/// model `asked` for, when known (a policy may have rewritten them since).
fn human(event: &AgentEvent, run_id: &str, asked: Option<&serde_json::Value>) -> Option<String> {
    Some(match event {
        AgentEvent::AgentStart => format!("run {run_id} started"),
        AgentEvent::MessageEnd {
            message: AgentMessage::Llm(Message::Assistant { content, .. }),
        } => {
            let text = text_of(content);
            if text.is_empty() {
                return None;
            }
            format!("assistant: {}", clip(&text))
        }
        AgentEvent::ToolExecutionStart {
            tool_name, args, ..
        } => {
            let args = asked.unwrap_or(args);
            format!("-> {} {}", escaped(tool_name), clip(&args.to_string()))
        }
        AgentEvent::ToolExecutionEnd {
            tool_name,
            result,
            is_error,
            ..
        } => {
            let mark = if *is_error { "error" } else { "ok" };
            format!(
                "<- {} [{mark}] {}",
                escaped(tool_name),
                clip(&text_of(&result.content))
            )
        }
        AgentEvent::ProgressMessage {
            tool_name, text, ..
        } => format!(".. {} {}", escaped(tool_name), clip(text)),
        AgentEvent::InputRejected { reason } => format!("input rejected: {}", clip(reason)),
        AgentEvent::AgentEnd { messages, .. } => match failed_with(messages) {
            Some(error) => format!("run {run_id} failed: {}", escaped(&readable(&error))),
            None => format!("run {run_id} ended"),
        },
        _ => return None,
    })
}
