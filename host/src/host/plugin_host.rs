//! [`PluginHost`]: a plugin directory, loaded and watched.

use crate::call::stats::PluginFigures;
use crate::call::ui::UserInterface;
use crate::host::report::PluginReport;
use crate::load::adapter::{Adapter, Adapters};
use crate::load::error::HostError;
use crate::load::listing::scan_folders;
use crate::load::loaded::LoadedPlugin;
use crate::load::registry::{Refusal, Registry, Snapshot};
use crate::run::extension::{HostExtension, PluginExtension};
use notify::{RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A plugin directory, loaded and kept live: a file added, changed or
/// removed takes effect at the next run, while a running run keeps the
/// plugins it started with.
///
/// Dropping it waits for the unloads under way in the process (pi's
/// `session_shutdown`, at most about 6 s each), its own plugins' included
/// when nothing else holds them: a plugin dropped elsewhere (a run ending,
/// a changed plugin replaced) unloads on its own thread and never blocks
/// the thread that dropped it.
pub struct PluginHost {
    registry: Arc<Registry>,
    /// The app's user interface, which plugins may ask in runs and
    /// commands; `None`: headless.
    ui: Option<Arc<dyn UserInterface>>,
    /// Counts the changes the watcher saw ([`PluginHost::changes`]).
    changed: tokio::sync::watch::Sender<u64>,
    _watcher: Option<notify::RecommendedWatcher>,
    /// Last, so that it waits after the plugins above were released.
    _unloads: WaitForUnloads,
}

/// Waits, when dropped, for the unloads under way.
struct WaitForUnloads;

impl Drop for WaitForUnloads {
    fn drop(&mut self) {
        crate::call::unloads::wait_for_unloads();
    }
}

/// Sets up a [`PluginHost`]: which adapters load the directory's plugins.
/// Start with [`PluginHost::builder`].
pub struct PluginHostBuilder {
    dir: PathBuf,
    adapters: Adapters,
    dry_run: bool,
    locked: bool,
    data_root: Option<PathBuf>,
    ui: Option<Arc<dyn UserInterface>>,
}

impl PluginHostBuilder {
    /// Load the plugins of `adapter`'s (engine, ecosystem) pair with it,
    /// replacing whatever served that pair before (the built-in set serves
    /// yohost's own plugins on every engine; the adapter crates serve pi,
    /// DSH and rutis-agent plugins).
    pub fn adapter(mut self, adapter: Arc<dyn Adapter>) -> Self {
        self.adapters.register(adapter);
        self
    }

    /// Load the plugins for a check (`yohost check`): on the JS engine
    /// (yohost's own TypeScript and pi extensions), the processes and file
    /// writes a plugin asks for while it loads, unloads or runs a hook are
    /// not performed but reported as its warnings (processes answer exit
    /// code 0 with no output; writes succeed). Each is judged against the
    /// manifest as a run would: a write outside `capabilities.write`, or a
    /// process without `capabilities.exec`, is reported as denied and fails
    /// as it would in a run. Python's import and the
    /// Node engine run the plugin's code with the access their sandbox
    /// gives, so a check there runs it for real.
    pub fn dry_run(mut self, on: bool) -> Self {
        self.dry_run = on;
        self
    }

    /// Load only what the directory's `yohost.lock` records (see
    /// [`lockfile`](crate::lockfile)): a plugin that is not in it, or whose
    /// files differ from it, is refused, naming each file that differs; a
    /// plugin that matches loads from a private copy of the very bytes that
    /// were hashed. Live reload goes on: a changed plugin is loaded again
    /// only if it matches the lock.
    pub fn locked(mut self, on: bool) -> Self {
        self.locked = on;
        self
    }

    /// Keep the plugins' data folders under `root` instead of the default
    /// (`$YOHOST_DATA_DIR`, `$XDG_DATA_HOME/yohost`,
    /// `$HOME/.local/share/yohost`): each plugin still gets a folder of its
    /// own there, keyed by the plugin directory and its name (see
    /// [`data_dir`](crate::adapter::data_dir)).
    pub fn data_dir(mut self, root: impl AsRef<Path>) -> Self {
        self.data_root = Some(root.as_ref().to_path_buf());
        self
    }

    /// Let plugins ask the app's user through `ui` (pi's `ctx.ui` and
    /// `pi.sendUserMessage`), in runs and in commands
    /// ([`PluginHost::run_command`]). Without it the host is headless: a
    /// confirmation is refused, a choice or text is not given, and a
    /// message is not sent ([`Headless`](crate::Headless)).
    pub fn user_interface(mut self, ui: Arc<dyn UserInterface>) -> Self {
        self.ui = Some(ui);
        self
    }

    /// Load every plugin in the directory and watch it, as
    /// [`PluginHost::open`] does.
    pub fn open(self) -> Result<PluginHost, HostError> {
        let mut host = PluginHost::open_with(
            &self.dir,
            self.adapters,
            self.dry_run,
            self.locked,
            self.data_root,
        )?;
        host.ui = self.ui;
        Ok(host)
    }
}

impl PluginHost {
    /// Set up a host over `dir` with adapters beyond the built-in set:
    /// `PluginHost::builder(dir).adapter(Arc::new(MyAdapter)).open()`.
    pub fn builder(dir: impl AsRef<Path>) -> PluginHostBuilder {
        PluginHostBuilder {
            dir: dir.as_ref().to_path_buf(),
            adapters: Adapters::default(),
            dry_run: false,
            locked: false,
            data_root: None,
            ui: None,
        }
    }

    /// Load every plugin in `dir` with the built-in adapters, and watch it.
    /// Plugins that cannot load are refused (see [`refused`](Self::refused));
    /// they never stop the others. Only a directory that cannot be read
    /// stops the host: a watcher that cannot watch it, or some folder in it,
    /// is logged as a warning, and changes are still seen at the next run
    /// through the directory's top-level fingerprint (see `watch.rs`).
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, HostError> {
        Self::open_with(dir.as_ref(), Adapters::default(), false, false, None)
    }

    fn open_with(
        dir: &Path,
        adapters: Adapters,
        dry_run: bool,
        locked: bool,
        data_root: Option<PathBuf>,
    ) -> Result<Self, HostError> {
        let registry = Registry::open(dir, adapters, dry_run, locked, data_root)?;
        let weak = Arc::downgrade(&registry);
        let changed = tokio::sync::watch::Sender::new(0);
        let seen = changed.clone();
        // Symlinks are never followed: a link in a plugin's folder (to
        // `/usr`, `/proc`, a home directory) would cost a watch for every
        // folder below where it leads.
        let watcher = notify::RecommendedWatcher::new(
            move |event: notify::Result<notify::Event>| {
                if event.is_ok_and(|event| marks_dirty(&event)) {
                    if let Some(registry) = weak.upgrade() {
                        registry.mark_dirty();
                    }
                    seen.send_modify(|count| *count += 1);
                }
            },
            notify::Config::default().with_follow_symlinks(false),
        );
        let watcher = match watcher {
            Ok(mut watcher) => {
                for warning in watch(&mut watcher, dir) {
                    tracing::warn!(dir = %dir.display(), "{warning}");
                }
                Some(watcher)
            }
            Err(e) => {
                tracing::warn!(dir = %dir.display(), "cannot watch the plugin directory, changes are seen through its top level only: {e}");
                None
            }
        };
        Ok(Self {
            registry,
            ui: None,
            changed,
            _watcher: watcher,
            _unloads: WaitForUnloads,
        })
    }

    /// A host over plugins built in memory, in place of a directory.
    pub fn from_plugins(plugins: Vec<LoadedPlugin>) -> Self {
        Self {
            registry: Registry::fixed(plugins),
            ui: None,
            changed: tokio::sync::watch::Sender::new(0),
            _watcher: None,
            _unloads: WaitForUnloads,
        }
    }

    /// Every plugin as one live yoagent extension. Each run snapshots the
    /// plugins when it starts. Install it with `Agent::with_extension`, or
    /// with `Agent::with_tree_extension` to gate sub-agent runs too.
    pub fn extension(&self) -> HostExtension {
        HostExtension::new(Arc::clone(&self.registry), self.ui.clone())
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
            .map(|p| PluginExtension::new(Arc::clone(p)).asking(self.ui.clone()));
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

    /// A receiver that changes each time the directory's watcher sees a
    /// file added, changed or removed in it (the count of such events): take
    /// a [`snapshot`](Self::snapshot) then to see whether the plugins
    /// changed. Never changes for a host over plugins built in memory, or
    /// one whose watcher could not start.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
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
    /// have changed, and load refused plugins again (loaded plugins whose
    /// files did not change are kept).
    pub fn reload(&self) {
        self.registry.reload();
    }

    /// The directory this host watches, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.registry.dir()
    }

    /// What the host measured of each loaded plugin's calls since it was
    /// loaded (calls, failures, timeouts, latency quantiles, per hook), in
    /// running order. A plugin whose file changed is loaded again and starts
    /// with fresh figures.
    pub fn stats(&self) -> Vec<PluginFigures> {
        self.plugins()
            .iter()
            .map(|p| PluginFigures {
                plugin: p.name.clone(),
                engine: p.engine,
                hooks: p.stats.figures(),
            })
            .collect()
    }

    /// The app's user interface plugins may ask (`None`: headless).
    pub(crate) fn ui(&self) -> Option<Arc<dyn UserInterface>> {
        self.ui.clone()
    }

    /// A report of every plugin, loaded or refused, for `yohost check`.
    pub async fn report(&self) -> Vec<PluginReport> {
        crate::host::report::report(&self.snapshot()).await
    }
}

/// Whether a watcher's event means the directory may have changed. Access
/// events (a file opened, read or closed) are the host's own reads when it
/// loads plugins: they change nothing, and counting them would rescan the
/// directory after every load.
fn marks_dirty(event: &notify::Event) -> bool {
    !event.kind.is_access()
}

/// Watch `dir` and every folder in it, and return warnings for what could
/// not be watched. The whole tree is watched at once when it can be; when a
/// folder in it cannot be watched (no permission, the system's limit on
/// watches), the top level and each plugin folder are watched one by one,
/// so one bad folder costs only its own changes. A change the watcher
/// misses is still seen at the next run when the directory's top level
/// changed, or after [`PluginHost::reload`].
///
/// No symlink is descended through (the watcher is made with
/// `follow_symlinks(false)`, and a top-level folder that is a link is not
/// watched one by one either): a link is a name in its folder, and a
/// change where it leads is not the plugin directory's.
fn watch(watcher: &mut impl Watcher, dir: &Path) -> Vec<String> {
    let Err(whole) = watcher.watch(dir, RecursiveMode::Recursive) else {
        return Vec::new();
    };
    let mut warnings = vec![format!(
        "cannot watch the plugin directory as a whole ({whole}); watching its folders one by one"
    )];
    if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
        warnings.push(format!(
            "cannot watch the plugin directory's top level ({e}); changes are seen through its top-level fingerprint at the next run"
        ));
    }
    let real_folders = scan_folders(dir)
        .into_iter()
        .filter(|f| f.symlink_metadata().is_ok_and(|m| m.is_dir()));
    for folder in real_folders {
        if let Err(e) = watcher.watch(&folder, RecursiveMode::Recursive) {
            warnings.push(format!(
                "cannot watch {} ({e}); changes inside it are seen after a reload",
                folder.display()
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, AccessMode, CreateKind, EventKind, ModifyKind};
    use std::path::PathBuf;

    #[test]
    fn the_hosts_own_reads_do_not_mark_the_directory_changed() {
        let event = |kind| notify::Event::new(kind);
        assert!(!marks_dirty(&event(EventKind::Access(AccessKind::Open(
            AccessMode::Any
        )))));
        assert!(!marks_dirty(&event(EventKind::Access(AccessKind::Close(
            AccessMode::Read
        )))));
        assert!(marks_dirty(&event(EventKind::Modify(ModifyKind::Any))));
        assert!(marks_dirty(&event(EventKind::Create(CreateKind::File))));
    }

    /// A watcher that cannot watch one folder, and records what it watches.
    struct Refusing {
        refuse: PathBuf,
        watched: Vec<(PathBuf, RecursiveMode)>,
    }

    impl Watcher for Refusing {
        fn new<F: notify::EventHandler>(_: F, _: notify::Config) -> notify::Result<Self> {
            unreachable!("built directly")
        }
        fn watch(&mut self, path: &Path, mode: RecursiveMode) -> notify::Result<()> {
            if path == self.refuse
                || (mode == RecursiveMode::Recursive && self.refuse.starts_with(path))
            {
                return Err(notify::Error::generic("permission denied"));
            }
            self.watched.push((path.to_path_buf(), mode));
            Ok(())
        }
        fn unwatch(&mut self, _: &Path) -> notify::Result<()> {
            Ok(())
        }
        fn kind() -> notify::WatcherKind {
            notify::WatcherKind::NullWatcher
        }
    }

    #[test]
    fn a_folder_that_cannot_be_watched_is_a_warning_and_the_rest_is_watched() {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["good", "locked"] {
            std::fs::create_dir(dir.path().join(folder)).unwrap();
        }
        let mut watcher = Refusing {
            refuse: dir.path().join("locked"),
            watched: Vec::new(),
        };
        let warnings = watch(&mut watcher, dir.path());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[1].contains("locked"), "{warnings:?}");
        assert_eq!(
            watcher.watched,
            [
                (dir.path().to_path_buf(), RecursiveMode::NonRecursive),
                (dir.path().join("good"), RecursiveMode::Recursive),
            ]
        );
    }
}
