//! What the engine thread receives: hook calls, the replies of the
//! processes a plugin started, and wake-ups.

use crate::call::error::CallError;
use crate::call::plugin::CallLimits;
use crate::engines::js::glue::Caller;
use serde_json::Value;
use tokio::sync::oneshot;
use yohost_contract::Hook;

/// What the engine thread receives.
pub(super) enum Message {
    /// A hook call.
    Call(Box<Request>),
    /// A process the plugin started ended: its id and reply (JSON text).
    Exec(u64, String),
    /// A run was cancelled: look at the calls in flight.
    Wake,
    /// File-watch events wait for the plugin ([`watch`](crate::engines::js::watch)).
    Watched,
    /// Every [`Instance`](super::Instance) is gone.
    Closed,
}

/// A hook call, as the engine thread receives it.
pub(super) struct Request {
    pub(super) hook: Hook,
    pub(super) run_id: String,
    /// The call's argument as JSON text, encoded by the caller: the only
    /// copy of it the engine holds.
    pub(super) args: String,
    pub(super) limits: CallLimits,
    pub(super) reply: oneshot::Sender<Result<Value, CallError>>,
    pub(super) caller: Caller,
}
