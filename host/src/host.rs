//! [`PluginHost`]: a plugin directory, loaded and watched.

use crate::adapter::{Adapter, Adapters};
use crate::error::HostError;
use crate::extension::{HostExtension, PluginExtension};
use crate::plugin::LoadedPlugin;
use crate::registry::{Refusal, Registry, Snapshot};
use crate::report::PluginReport;
use notify::Watcher;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A plugin directory, loaded and kept live: a file added, changed or
/// removed takes effect at the next run, while a running run keeps the
/// plugins it started with.
pub struct PluginHost {
    registry: Arc<Registry>,
    _watcher: Option<notify::RecommendedWatcher>,
}

/// Sets up a [`PluginHost`]: which adapters load the directory's plugins.
/// Start with [`PluginHost::builder`].
pub struct PluginHostBuilder {
    dir: PathBuf,
    adapters: Adapters,
}

impl PluginHostBuilder {
    /// Load the plugins of `adapter`'s (engine, ecosystem) pair with it,
    /// replacing whatever served that pair before (the built-in set serves
    /// yohost's own plugins on every engine, and pi extensions).
    pub fn adapter(mut self, adapter: Arc<dyn Adapter>) -> Self {
        self.adapters.register(adapter);
        self
    }

    /// Load every plugin in the directory and watch it, as
    /// [`PluginHost::open`] does.
    pub fn open(self) -> Result<PluginHost, HostError> {
        PluginHost::open_with(&self.dir, self.adapters)
    }
}

impl PluginHost {
    /// Set up a host over `dir` with adapters beyond the built-in set:
    /// `PluginHost::builder(dir).adapter(Arc::new(MyAdapter)).open()`.
    pub fn builder(dir: impl AsRef<Path>) -> PluginHostBuilder {
        PluginHostBuilder {
            dir: dir.as_ref().to_path_buf(),
            adapters: Adapters::default(),
        }
    }

    /// Load every plugin in `dir` with the built-in adapters, and watch it.
    /// Plugins that cannot load are refused (see [`refused`](Self::refused));
    /// they never stop the others.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, HostError> {
        Self::open_with(dir.as_ref(), Adapters::default())
    }

    fn open_with(dir: &Path, adapters: Adapters) -> Result<Self, HostError> {
        let registry = Registry::open(dir, adapters)?;
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
    /// its plugin and in its manifest's mode. These are fixed: they do not
    /// follow later changes to the directory.
    pub fn extensions(&self) -> Vec<PluginExtension> {
        self.snapshot()
            .plugins
            .iter()
            .map(|p| PluginExtension::new(Arc::clone(p)))
            .collect()
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
