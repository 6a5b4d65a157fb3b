//! The engine-neutral plugin interface.
//!
//! Every engine (dylib, Wasm, JS, Python) and every adapter turns a file into
//! a [`Plugin`]. The host never looks inside: it opens a [`PluginRun`] per
//! agent run and sends it [`HookCall`]s. Deadlines, reply checks and spans
//! (`invoke.rs`) and the fail-closed rules (`session.rs`) live in
//! the host, once, for all engines. An engine maps its failures to
//! [`CallError`] the same way as every other: the plugin's own error (a JS
//! throw, a Python exception, an error a dylib or Wasm plugin returns) is
//! `Guest`; a panic, a trap or a broken engine is `Crashed`.

use crate::call::error::CallError;
use crate::call::ui::UserInterface;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use yohost_contract::{HookCall, RunInfo};

/// What bounds one hook call, and whom it may ask.
#[derive(Clone)]
pub struct CallLimits {
    /// When the host stops waiting and reports a timeout
    /// (the host enforces it, once). An
    /// engine that can interrupt running code (epochs, interrupt handlers,
    /// async exceptions) stops it here; none times the call itself.
    pub deadline: Instant,
    /// Cancelled when the run is cancelled.
    pub cancel: CancellationToken,
    /// The embedding app's user interface, which the call may ask
    /// ([`UserInterface`]); `None`: headless.
    pub ui: Option<Arc<dyn UserInterface>>,
    /// Where a tool call may report progress, as messages for the user
    /// (yoagent's `ToolContext::on_progress`); `None` for every other hook
    /// and when no one listens. An engine that cannot report progress
    /// ignores it.
    pub progress: Option<yoagent::ProgressFn>,
}

impl std::fmt::Debug for CallLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallLimits")
            .field("deadline", &self.deadline)
            .field("cancel", &self.cancel)
            .field("ui", &self.ui.as_ref().map(|_| "an app's"))
            .field("progress", &self.progress.as_ref().map(|_| "a listener"))
            .finish()
    }
}

/// A loaded plugin, ready to serve runs.
#[async_trait::async_trait]
pub trait Plugin: Send + Sync {
    /// Open the plugin for one run. Engines that keep per-run state (a fresh
    /// Wasm instance) create it here; stateless ones share themselves.
    async fn open_run(&self, run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError>;
}

/// A plugin opened for one run.
#[async_trait::async_trait]
pub trait PluginRun: Send + Sync {
    /// Run one hook. The host wraps this in the deadline, the run's cancel
    /// and a span; the engine returns the plugin's reply decoded to the
    /// contract's JSON form (within the reply size limit), or why it failed.
    /// The host reads the value once, strictly, into the hook's reply type.
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError>;

    /// The run ended: release per-run state. Called once, after `finish`.
    async fn close(&self) {}
}
