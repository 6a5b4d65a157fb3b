//! The host's plugins as yoagent `Extension`s.
//!
//! - [`HostExtension`] is one live extension over the whole directory: each
//!   run takes a snapshot of the plugins when it starts and keeps it to the
//!   end. It is `Required`, so a required plugin's failure fails the run
//!   (the message names the plugin); an advisory plugin's failure is
//!   handled inside it (skipped and logged, or failed closed). A refused
//!   plugin that is required fails every run, naming it and the reason; an
//!   advisory one is logged at the start of every run.
//! - [`PluginExtension`] is one plugin, named after it and in its manifest's
//!   mode, for hosts that want yoagent's own per-extension handling. A
//!   refused plugin gets one too, with the same rule.

use crate::call::ui::UserInterface;
use crate::load::loaded::LoadedPlugin;
use crate::load::registry::{Refusal, Registry, Snapshot};
use crate::model::Mode;
use crate::run::convert::run_info;
use crate::run::runset::RunSet;
use crate::run::session::PluginSession;
use std::sync::Arc;
use yoagent::extension::{Extension, ExtensionError, ExtensionMode, RunContext, RunHooks};
use yohost_contract::Hook;

/// The name the combined extension has in yoagent's logs and messages.
pub const HOST_EXTENSION_NAME: &str = "yohost";

/// Open every plugin of `plugins` for the run `run`, in order, each able
/// to ask `ui`.
async fn open_all(plugins: &[Arc<LoadedPlugin>], run: &RunContext<'_>, ui: &Ui) -> RunSet {
    let info = run_info(run);
    let mut sessions = Vec::with_capacity(plugins.len());
    for plugin in plugins {
        let (plugin, cancel) = (Arc::clone(plugin), run.cancel.clone());
        sessions.push(PluginSession::open(plugin, info.clone(), cancel, ui.clone()).await);
    }
    RunSet::new(sessions, info)
}

/// The refused plugins at the start of run `run_id`: each is logged (an
/// advisory one as a warning, the run goes on without it), and the run
/// cannot start if any of them is required; the error names every required
/// one and why it was refused.
fn refusals_at_start(refused: &[Refusal], run_id: &str) -> Result<(), ExtensionError> {
    let mut required = Vec::new();
    for refusal in refused {
        let (plugin, reason) = (refusal.name.as_str(), &refusal.reason);
        match refusal.mode {
            Mode::Advisory => {
                tracing::warn!(run_id, plugin, %reason, "advisory plugin refused; the run goes on without it")
            }
            Mode::Required => {
                tracing::error!(run_id, plugin, %reason, "required plugin refused; the run fails");
                required.push(format!("required plugin '{plugin}' was refused: {reason}"));
            }
        }
    }
    if required.is_empty() {
        Ok(())
    } else {
        Err(ExtensionError::new(required.join("; ")))
    }
}

/// Every plugin of a [`PluginHost`](crate::PluginHost), as one live extension.
#[derive(Clone)]
pub struct HostExtension {
    registry: Arc<Registry>,
    ui: Ui,
}

/// The app's user interface plugins may ask, if any.
type Ui = Option<Arc<dyn UserInterface>>;

impl HostExtension {
    pub(crate) fn new(registry: Arc<Registry>, ui: Ui) -> Self {
        Self { registry, ui }
    }

    /// Whether any current plugin has `hook`; `first` for the first of the
    /// questions yoagent asks as a run starts, which checks the directory
    /// for changes (the next question and the start reuse that check).
    fn any_plugin_has(&self, hook: Hook, first: bool) -> bool {
        let snapshot = if first {
            self.registry.snapshot()
        } else {
            self.registry.snapshot_again()
        };
        snapshot.plugins.iter().any(|p| p.has(hook))
    }

    /// What [`Extension::start_run`] starts, as its own type, with the
    /// snapshot of the plugins it opened.
    pub(crate) async fn open_run(
        &self,
        run: &RunContext<'_>,
    ) -> Result<(RunSet, Arc<Snapshot>), ExtensionError> {
        let snapshot = self.registry.snapshot_again();
        refusals_at_start(&snapshot.refused, run.run_id)?;
        Ok((open_all(&snapshot.plugins, run, &self.ui).await, snapshot))
    }

    /// The plugins as they are now (rescanning the directory if it changed).
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.registry.snapshot()
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
        self.any_plugin_has(Hook::AfterTool, true)
    }

    /// True when any plugin has `before_tool`: a call an extension outside
    /// yohost rewrote is judged again by yohost's policies.
    fn rechecks_modified_calls(&self) -> bool {
        self.any_plugin_has(Hook::BeforeTool, false)
    }

    async fn start_run(&self, run: &RunContext<'_>) -> Result<Box<dyn RunHooks>, ExtensionError> {
        Ok(Box::new(self.open_run(run).await?.0))
    }
}

/// What a [`PluginExtension`] stands for.
#[derive(Clone)]
enum Source {
    Loaded(Arc<LoadedPlugin>),
    Refused(Arc<Refusal>),
}

/// One plugin as its own extension: a loaded plugin's hooks, or a refused
/// plugin's refusal (a required one fails every run, naming the plugin and
/// the reason; an advisory one is logged at the start of every run and adds
/// nothing).
#[derive(Clone)]
pub struct PluginExtension {
    source: Source,
    ui: Ui,
}

impl PluginExtension {
    /// The extension for `plugin`, headless.
    pub fn new(plugin: Arc<LoadedPlugin>) -> Self {
        Self {
            source: Source::Loaded(plugin),
            ui: None,
        }
    }

    /// The extension for a plugin that was refused at load.
    pub fn refused(refusal: Refusal) -> Self {
        Self {
            source: Source::Refused(Arc::new(refusal)),
            ui: None,
        }
    }

    /// The same extension, whose plugin may ask `ui` (`None`: headless).
    pub fn asking(mut self, ui: Option<Arc<dyn UserInterface>>) -> Self {
        self.ui = ui;
        self
    }

    fn has(&self, hook: Hook) -> bool {
        match &self.source {
            Source::Loaded(plugin) => plugin.has(hook),
            Source::Refused(_) => false,
        }
    }
}

#[async_trait::async_trait]
impl Extension for PluginExtension {
    fn name(&self) -> &str {
        match &self.source {
            Source::Loaded(plugin) => &plugin.name,
            Source::Refused(refusal) => &refusal.name,
        }
    }

    fn mode(&self) -> ExtensionMode {
        let mode = match &self.source {
            Source::Loaded(plugin) => plugin.mode(),
            Source::Refused(refusal) => refusal.mode,
        };
        match mode {
            Mode::Advisory => ExtensionMode::Advisory,
            Mode::Required => ExtensionMode::Required,
        }
    }

    fn filters_tool_output(&self) -> bool {
        self.has(Hook::AfterTool)
    }

    fn rechecks_modified_calls(&self) -> bool {
        self.has(Hook::BeforeTool)
    }

    async fn start_run(&self, run: &RunContext<'_>) -> Result<Box<dyn RunHooks>, ExtensionError> {
        match &self.source {
            Source::Loaded(plugin) => {
                let plugins = std::slice::from_ref(plugin);
                Ok(Box::new(open_all(plugins, run, &self.ui).await))
            }
            Source::Refused(refusal) => {
                refusals_at_start(std::slice::from_ref(refusal.as_ref()), run.run_id)?;
                Ok(Box::new(open_all(&[], run, &None).await))
            }
        }
    }
}
