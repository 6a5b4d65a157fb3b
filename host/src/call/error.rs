//! Why a hook call failed: [`CallError`], what an engine reports, and
//! [`HookError`], a failed call with the plugin and hook it belongs to.
//! Messages name the plugin or the hook, and the cause; nothing in the
//! host matches on message text.

use std::time::Duration;
use yohost_contract::{Hook, ReplyError};

/// Why one hook call failed. Every variant fails closed (see the crate docs).
///
/// The message holds the detail (an engine's words, a plugin's own error
/// text): it goes to the log only. What the model may see is
/// [`HookError`]'s fixed text.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The hook ran past its deadline; the host stopped waiting and, where
    /// the engine can, interrupted it.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The plugin's code panicked or trapped, or its engine failed.
    #[error("crashed: {0}")]
    Crashed(String),
    /// The plugin's own answer was an error: a JS throw, a Python exception,
    /// an error a dylib or Wasm plugin returns.
    #[error("returned an error: {0}")]
    Guest(String),
    /// The reply did not fit the hook's contract.
    #[error("{0}")]
    BadReply(#[from] ReplyError),
    /// The reply was larger than [`MAX_REPLY_BYTES`](crate::model::limits::MAX_REPLY_BYTES).
    #[error("replied with {0} bytes, over the limit of {limit}", limit = crate::model::limits::MAX_REPLY_BYTES)]
    ReplyTooLarge(usize),
    /// The plugin went over its memory limit.
    #[error("ran out of memory (limit {0} bytes)")]
    OutOfMemory(u64),
    /// The plugin reached for something it was not granted.
    #[error("was denied a capability: {0}")]
    CapabilityDenied(String),
    /// The plugin was unloaded for the rest of this run (after a crash, a
    /// timeout or running out of memory, or it could not open for the run);
    /// the call never reached it.
    #[error("is unloaded for the rest of this run: {0}")]
    Unloaded(String),
    /// The run was cancelled while the hook ran.
    #[error("was abandoned: the run was cancelled")]
    Cancelled,
    /// The host could not encode the hook's argument, so the plugin was not
    /// called (it never receives empty input in its place).
    #[error("was not called: its argument could not be encoded: {0}")]
    Encode(String),
}

impl CallError {
    /// The failure's stable snake_case name, the `error_kind` field of every
    /// log line about a failed hook: `timeout`, `crashed`, `guest`,
    /// `bad_reply`, `reply_too_large`, `out_of_memory`, `capability_denied`,
    /// `unloaded` or `cancelled`.
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::Timeout(_) => "timeout",
            CallError::Crashed(_) => "crashed",
            CallError::Guest(_) => "guest",
            CallError::BadReply(_) => "bad_reply",
            CallError::ReplyTooLarge(_) => "reply_too_large",
            CallError::OutOfMemory(_) => "out_of_memory",
            CallError::CapabilityDenied(_) => "capability_denied",
            CallError::Unloaded(_) => "unloaded",
            CallError::Cancelled => "cancelled",
            CallError::Encode(_) => "encode",
        }
    }

    /// The failure in fixed words, without any detail: what the model may
    /// read about it.
    fn summary(&self) -> &'static str {
        match self {
            CallError::Timeout(_) => "timed out",
            CallError::Crashed(_) => "crashed",
            CallError::Guest(_) => "returned an error",
            CallError::BadReply(_) => "returned a reply the host cannot use",
            CallError::ReplyTooLarge(_) => "returned a reply over the size limit",
            CallError::OutOfMemory(_) => "ran out of memory",
            CallError::CapabilityDenied(_) => "was denied a capability",
            CallError::Unloaded(_) => "is unloaded for the rest of this run",
            CallError::Cancelled => "was abandoned: the run was cancelled",
            CallError::Encode(_) => "could not be sent its input",
        }
    }

    /// Whether the plugin is unloaded for the rest of the run after this
    /// error, so every later call of the run fails closed without reaching
    /// it: a crash or trap, running out of memory, or a timeout (code that
    /// was stopped half-way leaves no state worth trusting).
    pub fn discards_instance(&self) -> bool {
        matches!(
            self,
            CallError::Crashed(_) | CallError::OutOfMemory(_) | CallError::Timeout(_)
        )
    }
}

/// A failed hook call, with the plugin and hook it belongs to.
///
/// It displays as a fixed text that names the plugin, the kind of failure
/// and the hook (`plugin 'guard' timed out in before_tool`), never the
/// plugin's own error text, which can hold secrets: this is what the model
/// and the run's error message may carry. The detail is [`HookError::error`],
/// for the log.
#[derive(Debug, Clone, thiserror::Error)]
#[error("plugin '{plugin}' {} in {hook}", .error.summary())]
pub struct HookError {
    /// The plugin's name.
    pub plugin: String,
    /// The hook that failed.
    pub hook: Hook,
    /// What went wrong, with the detail.
    pub error: CallError,
}
