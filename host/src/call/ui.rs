//! What a plugin may ask the person using an embedding app: a
//! confirmation, a choice, a line or a text, a notification, or a message
//! to send as theirs. The app implements [`UserInterface`]; without one the
//! host is headless, and every answer is the one a person who is not there
//! gives: no, nothing, not sent.
//!
//! The JavaScript engines carry a request as JSON to the host
//! (`ui_requests`), which asks the app's interface.

use crate::call::logging::{plugin_log, LogLevel};
use serde::Deserialize;

/// Who is asking: the plugin, and the run (or command) it asks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asker<'a> {
    /// The plugin's name.
    pub plugin: &'a str,
    /// The `run_id` of the run or command the request belongs to.
    pub run_id: &'a str,
}

/// How much a notification matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyLevel {
    /// For information.
    Info,
    /// Something the person should look at.
    Warning,
    /// Something failed.
    Error,
}

/// The person using an embedding app, as plugins may ask them things (pi's
/// `ctx.ui` and `pi.sendUserMessage`). Every method is called off the async
/// runtime and may block until the person answers; the time it takes counts
/// towards the deadline of the hook that asked. The defaults are the
/// headless answers: a confirmation is refused, a choice, line or text is
/// not given, a notification is a log line, and a message is not sent.
pub trait UserInterface: Send + Sync {
    /// Ask a yes-or-no question; `true` is yes.
    fn confirm(&self, asker: Asker<'_>, title: &str, message: &str) -> bool {
        let _ = (asker, title, message);
        false
    }

    /// Ask for one of `options`; `None` when the person declines.
    fn select(&self, asker: Asker<'_>, title: &str, options: &[String]) -> Option<String> {
        let _ = (asker, title, options);
        None
    }

    /// Ask for a line of text; `None` when the person declines.
    fn input(&self, asker: Asker<'_>, title: &str, placeholder: Option<&str>) -> Option<String> {
        let _ = (asker, title, placeholder);
        None
    }

    /// Ask for a longer text, starting from `prefill`; `None` when the
    /// person declines.
    fn editor(&self, asker: Asker<'_>, title: &str, prefill: Option<&str>) -> Option<String> {
        let _ = (asker, title, prefill);
        None
    }

    /// Tell the person something. Called on the plugin's engine thread, in
    /// order with its call: it should not block. The default writes a
    /// plugin log line at `level`, with the run's id, as the plugin's own
    /// lines are written.
    fn notify(&self, asker: Asker<'_>, message: &str, level: NotifyLevel) {
        let level = match level {
            NotifyLevel::Info => LogLevel::Info,
            NotifyLevel::Warning => LogLevel::Warn,
            NotifyLevel::Error => LogLevel::Error,
        };
        plugin_log(asker.run_id, asker.plugin, level, message);
    }

    /// A plugin asks to send `text` as the person's next message (pi's
    /// `sendUserMessage`). Return whether the app will send it: the host
    /// itself never adds to a run's history. Called on the plugin's engine
    /// thread, in order with its call: it should not block (queue the
    /// message).
    fn send_user_message(&self, asker: Asker<'_>, text: &str) -> bool {
        let _ = (asker, text);
        false
    }
}

/// No person to ask: every answer is [`UserInterface`]'s default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Headless;

impl UserInterface for Headless {}
