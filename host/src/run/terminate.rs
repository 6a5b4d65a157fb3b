//! Tool results that end the run (`terminate`, as in pi): once every
//! result of a turn's tool calls asked it, the run stops before the next
//! model request instead of asking the model to follow up.

use crate::model::sync::lock;
use std::collections::HashSet;
use std::sync::Mutex;
use yoagent::Message;

/// The call ids, within one run, whose result asked to end the run.
#[derive(Default)]
pub(crate) struct Terminations {
    calls: Mutex<HashSet<String>>,
}

impl Terminations {
    /// Note that call `call_id`'s result asked to end the run.
    pub(crate) fn record(&self, call_id: &str) {
        lock(&self.calls).insert(call_id.to_string());
    }

    /// Whether the request about to be sent follows a turn whose tool
    /// results all asked to end the run: the messages after the last
    /// assistant message are tool results, at least one, every one
    /// recorded. A batch with one result that did not ask (another
    /// plugin's tool, a built-in tool, an error) or a message queued
    /// after it (steering) lets the run go on, as in pi.
    ///
    /// Each request forgets the calls recorded before it: call ids are
    /// only unique within a turn (a provider may count them from zero).
    pub(crate) fn ends_before(&self, messages: &[Message]) -> bool {
        let calls = std::mem::take(&mut *lock(&self.calls));
        if calls.is_empty() {
            return false;
        }
        let mut batch = messages
            .iter()
            .rev()
            .take_while(|m| !matches!(m, Message::Assistant { .. }))
            .peekable();
        batch.peek().is_some()
            && batch.all(|m| {
                matches!(m, Message::ToolResult { tool_call_id, .. } if calls.contains(tool_call_id))
            })
    }
}
