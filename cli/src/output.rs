//! How `yohost` prints: log setup, and the run's events as they happen.
//!
//! Plugin log lines (target `yohost::plugin`) go to standard output with the
//! run's events; the host's own warnings go to standard error (`RUST_LOG`
//! sets their level, `warn` by default).

use std::io::Write;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};
use yoagent::extension::{Extension, ExtensionError, RunContext, RunHooks};
use yoagent::{AgentEvent, AgentMessage, Content, Message};
use yohost::logging::PLUGIN_LOG_TARGET;

/// The host's log level unless `RUST_LOG` says otherwise. yoagent's own
/// warning for each denied call is left out: the run's output shows it.
const DEFAULT_FILTER: &str = "warn,yoagent::agent_loop=error";

/// Host logs to standard error, for commands that print no run.
pub fn init_stderr_logs() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER)),
        )
        .try_init();
}

/// Host logs to standard error and plugin log lines to standard output.
pub fn init_run_logs(json: bool) {
    let host_logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER)),
        )
        .with_filter(tracing_subscriber::filter::filter_fn(|m| {
            m.target() != PLUGIN_LOG_TARGET
        }));
    let _ = tracing_subscriber::registry()
        .with(host_logs)
        .with(PluginLines { json })
        .try_init();
}

/// Prints each plugin log line on standard output.
struct PluginLines {
    json: bool,
}

#[derive(Default)]
struct LineFields {
    run_id: String,
    plugin: String,
    level: String,
    message: String,
}

impl Visit for LineFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "run_id" => self.run_id = value.to_string(),
            "plugin" => self.plugin = value.to_string(),
            "level" => self.level = value.to_string(),
            "message" => self.message = value.to_string(),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> Layer<S> for PluginLines {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != PLUGIN_LOG_TARGET {
            return;
        }
        let mut line = LineFields::default();
        event.record(&mut line);
        let text = if self.json {
            serde_json::json!({"log": {
                "run_id": line.run_id, "plugin": line.plugin, "level": line.level, "message": line.message,
            }})
            .to_string()
        } else {
            format!(
                "  [{} {} run {}] {}",
                line.plugin,
                line.level,
                short(&line.run_id),
                line.message
            )
        };
        let _ = writeln!(std::io::stdout().lock(), "{text}");
    }
}

fn short(run_id: &str) -> &str {
    run_id.get(..8).unwrap_or(run_id)
}

/// An extension that prints every event of the runs it is installed on, with
/// the run's id. It decides nothing.
pub struct EventPrinter {
    json: bool,
    last_error: Arc<Mutex<Option<String>>>,
}

impl EventPrinter {
    /// A printer; `last_error` receives a failed run's error message.
    pub fn new(json: bool, last_error: Arc<Mutex<Option<String>>>) -> Self {
        Self { json, last_error }
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
            run_id: run.run_id.to_string(),
            last_error: Arc::clone(&self.last_error),
        }))
    }
}

struct PrintHooks {
    json: bool,
    run_id: String,
    last_error: Arc<Mutex<Option<String>>>,
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
            if let Some(object) = value.as_object_mut() {
                object.insert("run_id".into(), self.run_id.clone().into());
            }
            Some(value.to_string())
        } else {
            human(event, &self.run_id)
        };
        if let Some(line) = line {
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        }
    }
}

fn failed_with(messages: &[AgentMessage]) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        AgentMessage::Llm(Message::Assistant { error_message, .. }) => error_message.clone(),
        _ => None,
    })
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

fn clip(text: &str) -> String {
    const MAX: usize = 300;
    let one_line = text.replace('\n', " ⏎ ");
    match one_line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

fn human(event: &AgentEvent, run_id: &str) -> Option<String> {
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
            format!("-> {tool_name} {}", clip(&args.to_string()))
        }
        AgentEvent::ToolExecutionEnd {
            tool_name,
            result,
            is_error,
            ..
        } => {
            let mark = if *is_error { "error" } else { "ok" };
            format!(
                "<- {tool_name} [{mark}] {}",
                clip(&text_of(&result.content))
            )
        }
        AgentEvent::InputRejected { reason } => format!("input rejected: {reason}"),
        AgentEvent::AgentEnd { messages, .. } => match failed_with(messages) {
            Some(error) => format!("run {run_id} failed: {error}"),
            None => format!("run {run_id} ended"),
        },
        _ => return None,
    })
}
