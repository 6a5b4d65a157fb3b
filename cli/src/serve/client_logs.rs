//! Plugin log lines to the MCP client: each line a plugin writes in a
//! session's run (target `yohost::plugin`, with the session's `run_id`)
//! goes to that session's client as `notifications/message`, its logger
//! the plugin's name and its data `{"message": …}`, at or above the level
//! the client set with `logging/setLevel` (`info` until it sets one).
//!
//! Lines are queued as they are written (a tracing layer) and sent in
//! order by one task per session; a call's result waits until the lines
//! its plugins wrote before it are sent ([`ClientLogs::flush`]), so a
//! client reads them first. A session holds at most [`QUEUE`] unsent
//! lines: more are dropped (the host already bounds a plugin's lines per
//! call and per run). The lines still go to standard error as well.
//!
//! MCP's logging is deprecated by SEP-2577 in favour of the transport's
//! own logs, but it is part of every protocol version yohost serves
//! (`2025-11-25` and before), so it is used here.
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use yohost::adapter::logging::PLUGIN_LOG_TARGET;

/// The most lines a session may have waiting to be sent.
const QUEUE: usize = 1024;

/// The longest a call's result waits for its lines to be sent.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// What a session's sender task is given.
enum Queued {
    /// A line to send.
    Line(LoggingMessageNotificationParam),
    /// Answered once every line queued before it was sent.
    Flush(oneshot::Sender<()>),
}

/// Where one session's lines go, and the least level its client wants.
struct Sink {
    queue: mpsc::Sender<Queued>,
    least: LoggingLevel,
}

/// The sessions whose clients get their plugins' log lines, by `run_id`.
#[derive(Clone, Default)]
pub struct ClientLogs {
    sinks: Arc<Mutex<HashMap<String, Sink>>>,
}

impl ClientLogs {
    /// The tracing layer that queues each plugin log line for the client of
    /// its run's session, if it has one.
    pub fn layer<S: Subscriber>(&self) -> impl Layer<S> {
        Forward(self.clone())
    }

    /// Send the lines of the run `run_id` to `peer` while the returned
    /// guard lives.
    pub fn attach(&self, run_id: &str, peer: Peer<RoleServer>) -> Attached {
        let (queue, mut lines) = mpsc::channel(QUEUE);
        tokio::spawn(async move {
            while let Some(queued) = lines.recv().await {
                match queued {
                    Queued::Line(line) => {
                        if peer.notify_logging_message(line).await.is_err() {
                            return;
                        }
                    }
                    Queued::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        let sink = Sink {
            queue,
            least: LoggingLevel::Info,
        };
        self.sinks().insert(run_id.to_string(), sink);
        Attached {
            logs: self.clone(),
            run_id: run_id.to_string(),
        }
    }

    /// Send the client of `run_id` only lines at `least` or above.
    pub fn set_level(&self, run_id: &str, least: LoggingLevel) {
        if let Some(sink) = self.sinks().get_mut(run_id) {
            sink.least = least;
        }
    }

    /// Wait (at most [`FLUSH_WAIT`]) until the lines of `run_id` queued so
    /// far are sent.
    pub async fn flush(&self, run_id: &str) {
        let queue = self.sinks().get(run_id).map(|sink| sink.queue.clone());
        let Some(queue) = queue else {
            return;
        };
        let (done, sent) = oneshot::channel();
        if queue.send(Queued::Flush(done)).await.is_ok() {
            let _ = tokio::time::timeout(FLUSH_WAIT, sent).await;
        }
    }

    fn sinks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Sink>> {
        self.sinks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// While it lives, a session's client gets its run's lines.
pub struct Attached {
    logs: ClientLogs,
    run_id: String,
}

impl Drop for Attached {
    fn drop(&mut self) {
        self.logs.sinks().remove(&self.run_id);
    }
}

/// The layer of [`ClientLogs::layer`].
struct Forward(ClientLogs);

impl<S: Subscriber> Layer<S> for Forward {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if meta.target() != PLUGIN_LOG_TARGET {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let (Some(run_id), Some(plugin)) = (fields.run_id, fields.plugin) else {
            return;
        };
        let level = level_of(meta.level());
        let sinks = self.0.sinks();
        let Some(sink) = sinks.get(&run_id) else {
            return;
        };
        if rank(level) < rank(sink.least) {
            return;
        }
        let data = serde_json::json!({ "message": fields.message.unwrap_or_default() });
        let line = LoggingMessageNotificationParam::new(level, data).with_logger(plugin);
        // A full queue drops the line: the client is not reading.
        let _ = sink.queue.try_send(Queued::Line(line));
    }
}

/// The fields of a plugin log line.
#[derive(Default)]
struct Fields {
    run_id: Option<String>,
    plugin: Option<String>,
    message: Option<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "run_id" => self.run_id = Some(value.to_string()),
            "plugin" => self.plugin = Some(value.to_string()),
            "message" => self.message = Some(value.to_string()),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = Some(format!("{value:?}")),
            "run_id" | "plugin" => self.record_str(field, &format!("{value:?}")),
            _ => {}
        }
    }
}

/// MCP's level for a tracing level (plugins log error, warn, info and
/// debug).
fn level_of(level: &tracing::Level) -> LoggingLevel {
    match *level {
        tracing::Level::ERROR => LoggingLevel::Error,
        tracing::Level::WARN => LoggingLevel::Warning,
        tracing::Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// How severe a level is: higher is more.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_ranks_below_every_more_severe_one() {
        let order = [
            LoggingLevel::Debug,
            LoggingLevel::Info,
            LoggingLevel::Notice,
            LoggingLevel::Warning,
            LoggingLevel::Error,
            LoggingLevel::Critical,
            LoggingLevel::Alert,
            LoggingLevel::Emergency,
        ];
        for pair in order.windows(2) {
            assert!(rank(pair[0]) < rank(pair[1]), "{pair:?}");
        }
        assert_eq!(level_of(&tracing::Level::WARN), LoggingLevel::Warning);
        assert_eq!(level_of(&tracing::Level::TRACE), LoggingLevel::Debug);
    }
}
