//! The [`Plugin`] and [`PluginRun`] of a JavaScript plugin.
//!
//! One engine instance serves every run: module state is shared between
//! runs, as a long-lived process's would be. A run only carries the handle.

use super::runtime::Instance;
use crate::call::error::CallError;
use crate::call::plugin::{CallLimits, Plugin, PluginRun};
use serde_json::Value;
use std::sync::Arc;
use yohost_contract::{HookCall, RunInfo};

/// A loaded JavaScript plugin.
pub struct JsPlugin {
    instance: Instance,
}

impl JsPlugin {
    /// Wrap a started engine instance.
    pub fn new(instance: Instance) -> Self {
        Self { instance }
    }
}

#[async_trait::async_trait]
impl Plugin for JsPlugin {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(JsRun {
            instance: self.instance.clone(),
        }))
    }
}

/// A JavaScript plugin opened for one run.
struct JsRun {
    instance: Instance,
}

#[async_trait::async_trait]
impl PluginRun for JsRun {
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        self.instance.call(call, limits).await
    }
}
