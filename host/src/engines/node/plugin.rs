//! The [`Plugin`] and [`PluginRun`] of a plugin on Node.
//!
//! One process serves every run, as a long-lived process would. A run opens
//! on the live process; when it was killed, died or was retired (a call
//! overran its deadline on it), the run starts a new one, loaded afresh.
//! A run already holding a process that died fails its later calls closed
//! (R1: the rest of that run is unloaded); a run holding a retired one
//! sends its later calls to the plugin's current process (the state the old
//! one held for it is gone, as after a restart), while its calls already in
//! flight on the old one keep their own deadlines.

use super::launch::Launch;
use super::process::Process;
use crate::call::error::CallError;
use crate::call::plugin::{CallLimits, Plugin, PluginRun};
use crate::model::sync::lock;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::Mutex;
use yohost_contract::{HookCall, RunInfo};

/// A loaded plugin on Node.
pub struct NodePlugin {
    serving: Arc<Serving>,
}

/// The plugin's current process, and how to start another.
struct Serving {
    launch: Arc<Launch>,
    current: Mutex<Arc<Process>>,
}

impl Serving {
    /// The process new calls go to, started afresh when the last one no
    /// longer takes calls.
    async fn current(&self) -> Result<Arc<Process>, CallError> {
        let mut current = self.current.lock().await;
        if !current.takes_calls() {
            let launch = Arc::clone(&self.launch);
            let started = tokio::task::spawn_blocking(move || Process::start(&launch))
                .await
                .map_err(|e| CallError::Crashed(format!("restarting node failed: {e}")))?;
            let (process, _) = started
                .map_err(|e| CallError::Crashed(format!("node could not be restarted: {e}")))?;
            *current = Arc::new(process);
        }
        Ok(Arc::clone(&current))
    }
}

impl NodePlugin {
    /// Serve runs with `process`, started from `launch`, and with a new
    /// process from `launch` once it is gone.
    pub fn new(launch: Launch, process: Process) -> Self {
        Self {
            serving: Arc::new(Serving {
                launch: Arc::new(launch),
                current: Mutex::new(Arc::new(process)),
            }),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for NodePlugin {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        let process = self.serving.current().await?;
        Ok(Arc::new(NodeRun {
            serving: Arc::clone(&self.serving),
            process: std::sync::Mutex::new(process),
        }))
    }
}

/// A plugin on Node opened for one run.
struct NodeRun {
    serving: Arc<Serving>,
    process: std::sync::Mutex<Arc<Process>>,
}

#[async_trait::async_trait]
impl PluginRun for NodeRun {
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        let held = Arc::clone(&lock(&self.process));
        let process = if held.is_retired() {
            let current = self.serving.current().await?;
            *lock(&self.process) = Arc::clone(&current);
            current
        } else {
            held
        };
        process.call(call, limits).await
    }
}
