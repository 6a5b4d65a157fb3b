//! [`PluginHost`]: a plugin directory, loaded and watched.

use crate::error::HostError;
use crate::extension::{HostExtension, PluginExtension};
use crate::plugin::LoadedPlugin;
use crate::registry::{Refusal, Registry, Snapshot};
use crate::report::PluginReport;
use notify::Watcher;
use std::path::Path;
use std::sync::Arc;

/// A plugin directory, loaded and kept live: a file added, changed or
/// removed takes effect at the next run, while a running run keeps the
/// plugins it started with.
pub struct PluginHost {
    registry: Arc<Registry>,
    _watcher: Option<notify::RecommendedWatcher>,
}

impl PluginHost {
    /// Load every plugin in `dir` and watch it. Plugins that cannot load are
    /// refused (see [`refused`](Self::refused)); they never stop the others.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, HostError> {
        let dir = dir.as_ref();
        let registry = Registry::open(dir)?;
        let weak = Arc::downgrade(&registry);
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok() {
                    if let Some(registry) = weak.upgrade() {
                        registry.mark_dirty();
                    }
                }
            })
            .map_err(|e| HostError::Watch {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })?;
        watcher
            .watch(dir, notify::RecursiveMode::Recursive)
            .map_err(|e| HostError::Watch {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })?;
        Ok(Self {
            registry,
            _watcher: Some(watcher),
        })
    }

    /// A host over plugins built in memory, in place of a directory.
    pub fn from_plugins(plugins: Vec<LoadedPlugin>) -> Self {
        Self {
            registry: Registry::fixed(plugins),
            _watcher: None,
        }
    }

    /// Every plugin as one live yoagent extension. Each run snapshots the
    /// plugins when it starts. Install it with `Agent::with_extension`, or
    /// with `Agent::with_tree_extension` to gate sub-agent runs too.
    pub fn extension(&self) -> HostExtension {
        HostExtension::new(Arc::clone(&self.registry))
    }

    /// One extension per loaded plugin, in running order, each named after
    /// its plugin and in its manifest's mode, then one per refused plugin:
    /// a required one fails every run, naming the plugin and the reason; an
    /// advisory one logs its refusal at the start of every run. These are
    /// fixed: they do not follow later changes to the directory.
    pub fn extensions(&self) -> Vec<PluginExtension> {
        let snapshot = self.snapshot();
        let loaded = snapshot
            .plugins
            .iter()
            .map(|p| PluginExtension::new(Arc::clone(p)));
        let refused = snapshot
            .refused
            .iter()
            .cloned()
            .map(PluginExtension::refused);
        loaded.chain(refused).collect()
    }

    /// The plugins as they are now (rescanning if the directory changed).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.registry.snapshot()
    }

    /// The loaded plugins, in running order.
    pub fn plugins(&self) -> Vec<Arc<LoadedPlugin>> {
        self.snapshot().plugins.clone()
    }

    /// The plugins that could not be loaded, with their reasons.
    pub fn refused(&self) -> Vec<Refusal> {
        self.snapshot().refused.clone()
    }

    /// Rescan the directory at the next snapshot even if nothing seems to
    /// have changed.
    pub fn reload(&self) {
        self.registry.mark_dirty();
    }

    /// The directory this host watches, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.registry.dir()
    }

    /// A report of every plugin, loaded or refused, for `yohost check`.
    pub async fn report(&self) -> Vec<PluginReport> {
        crate::report::report(&self.snapshot()).await
    }
}
