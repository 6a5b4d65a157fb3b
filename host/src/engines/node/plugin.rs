//! The [`Plugin`] and [`PluginRun`] of a plugin on Node.
//!
//! One process serves every run, as a long-lived process would. A run opens
//! on the live process; when it was killed (a call overran its deadline) or
//! died, the run starts a new one, loaded afresh, and a run already holding
//! the old one fails its later calls closed (R1: the rest of that run is
//! unloaded).

use super::process::{Launch, Process};
use crate::error::CallError;
use crate::plugin::{CallLimits, Plugin, PluginRun};
use std::sync::Arc;
use tokio::sync::Mutex;
use yohost_contract::{HookCall, HookReply, RunInfo};

/// A loaded plugin on Node.
pub struct NodePlugin {
    launch: Arc<Launch>,
    current: Mutex<Arc<Process>>,
}

impl NodePlugin {
    /// Serve runs with `process`, started from `launch`, and with a new
    /// process from `launch` once it is gone.
    pub fn new(launch: Launch, process: Process) -> Self {
        Self {
            launch: Arc::new(launch),
            current: Mutex::new(Arc::new(process)),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for NodePlugin {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        let mut current = self.current.lock().await;
        if current.is_dead() {
            let launch = Arc::clone(&self.launch);
            let started = tokio::task::spawn_blocking(move || Process::start(&launch))
                .await
                .map_err(|e| CallError::Crashed(format!("restarting node failed: {e}")))?;
            let (process, _) = started
                .map_err(|e| CallError::Crashed(format!("node could not be restarted: {e}")))?;
            *current = Arc::new(process);
        }
        Ok(Arc::new(NodeRun {
            process: Arc::clone(&current),
        }))
    }
}

/// A plugin on Node opened for one run.
struct NodeRun {
    process: Arc<Process>,
}

#[async_trait::async_trait]
impl PluginRun for NodeRun {
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<HookReply, CallError> {
        self.process.call(call, limits).await
    }
}
