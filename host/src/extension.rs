//! The host's plugins as yoagent `Extension`s.
//!
//! - [`HostExtension`] is one live extension over the whole directory: each
//!   run takes a snapshot of the loaded plugins when it starts and keeps it
//!   to the end. It is `Required`, so a required plugin's failure fails the
//!   run (the message names the plugin); an advisory plugin's failure is
//!   handled inside it (skipped and logged, or failed closed).
//! - [`PluginExtension`] is one plugin, named after it and in its manifest's
//!   mode, for hosts that want yoagent's own per-extension handling.

use crate::convert::run_info;
use crate::manifest::Mode;
use crate::plugin::LoadedPlugin;
use crate::registry::Registry;
use crate::runset::RunSet;
use crate::session::PluginSession;
use std::sync::Arc;
use yoagent::extension::{Extension, ExtensionError, ExtensionMode, RunContext, RunHooks};
use yohost_contract::Hook;

/// The name the combined extension has in yoagent's logs and messages.
pub const HOST_EXTENSION_NAME: &str = "yohost";

/// Open every plugin of `plugins` for the run `run`, in order.
async fn open_all(plugins: &[Arc<LoadedPlugin>], run: &RunContext<'_>) -> RunSet {
    let info = run_info(run);
    let mut sessions = Vec::with_capacity(plugins.len());
    for plugin in plugins {
        sessions
            .push(PluginSession::open(Arc::clone(plugin), info.clone(), run.cancel.clone()).await);
    }
    RunSet::new(sessions, info)
}

/// Every plugin of a [`PluginHost`](crate::PluginHost), as one live extension.
#[derive(Clone)]
pub struct HostExtension {
    registry: Arc<Registry>,
}

impl HostExtension {
    pub(crate) fn new(registry: Arc<Registry>) -> Self {
        Self { registry }
    }
}

#[async_trait::async_trait]
impl Extension for HostExtension {
    fn name(&self) -> &str {
        HOST_EXTENSION_NAME
    }

    fn mode(&self) -> ExtensionMode {
        ExtensionMode::Required
    }

    fn filters_tool_output(&self) -> bool {
        self.registry
            .snapshot()
            .plugins
            .iter()
            .any(|p| p.has(Hook::AfterTool))
    }

    async fn start_run(&self, run: &RunContext<'_>) -> Result<Box<dyn RunHooks>, ExtensionError> {
        let snapshot = self.registry.snapshot();
        Ok(Box::new(open_all(&snapshot.plugins, run).await))
    }
}

/// One plugin as its own extension.
#[derive(Clone)]
pub struct PluginExtension {
    plugin: Arc<LoadedPlugin>,
}

impl PluginExtension {
    /// The extension for `plugin`.
    pub fn new(plugin: Arc<LoadedPlugin>) -> Self {
        Self { plugin }
    }
}

#[async_trait::async_trait]
impl Extension for PluginExtension {
    fn name(&self) -> &str {
        &self.plugin.name
    }

    fn mode(&self) -> ExtensionMode {
        match self.plugin.mode() {
            Mode::Advisory => ExtensionMode::Advisory,
            Mode::Required => ExtensionMode::Required,
        }
    }

    fn filters_tool_output(&self) -> bool {
        self.plugin.has(Hook::AfterTool)
    }

    fn rechecks_modified_calls(&self) -> bool {
        self.plugin.has(Hook::BeforeTool)
    }

    async fn start_run(&self, run: &RunContext<'_>) -> Result<Box<dyn RunHooks>, ExtensionError> {
        Ok(Box::new(
            open_all(std::slice::from_ref(&self.plugin), run).await,
        ))
    }
}
