//! The set of loaded plugins, kept current with the directory.
//!
//! A run takes a [`Snapshot`] when it starts and keeps it to its end. When
//! the directory changed (the watcher said so, or its top level looks
//! different), the next snapshot rescans it first. yoagent asks the
//! extension two questions and then starts the run: the first question
//! reads the top level ([`Registry::snapshot`]), the second and the start
//! reuse that read when it is under [`TOP_LEVEL_FRESH`] old
//! ([`Registry::snapshot_again`]). With a thousand plugins one read takes a
//! millisecond or more. A plugin whose files did
//! not change is never loaded again: what loading it gave, the plugin or the
//! refusal, is kept by the fingerprint of its files (loading runs a
//! plugin's top-level code, which may be slow or have effects). An explicit
//! reload ([`PluginHost::reload`](crate::PluginHost::reload)) tries refused
//! plugins again, since what refused them may lie outside their files (a
//! granted folder, the private folder for library copies).

use crate::call::logging::LOAD_LOG_TARGET;
use crate::call::stats::PluginStats;
use crate::load::adapter::Adapters;
use crate::load::data_dir;
use crate::load::discovery::{Candidate, Found};
use crate::load::error::{HostError, LoadError};
use crate::load::fingerprint::{stat, Fingerprint};
use crate::load::listing::{entries, hidden_entries, IGNORE_FILE};
use crate::load::loaded::LoadedPlugin;
use crate::load::lockfile::{snapshot, FromCopy, Lockfile};
use crate::load::manifest::{check_name, intended_mode, Manifest, MANIFEST_FILE};
use crate::load::source::read_text;
use crate::model::limits::MAX_SOURCE_BYTES;
use crate::model::sync::{lock, read, write};
use crate::model::EngineKind;
use crate::model::{Ecosystem, Mode};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// A plugin that could not be loaded, and why.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The name it would have had.
    pub name: String,
    /// Its file or folder.
    pub file: PathBuf,
    /// Its engine, if the file kind was known.
    pub engine: Option<EngineKind>,
    /// Its ecosystem, if known.
    pub ecosystem: Option<Ecosystem>,
    /// The mode it would have had: its manifest's; advisory when it has no
    /// manifest; when its manifest has problems, the mode it asks for
    /// ([`intended_mode`]); required when it cannot be read or is not TOML
    /// (it may be a required policy's). A required refusal fails every run.
    pub mode: Mode,
    /// Why it was refused.
    pub reason: LoadError,
}

/// The plugins as they were when a run started.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Loaded plugins in the order they run: priority, then name.
    pub plugins: Vec<Arc<LoadedPlugin>>,
    /// Plugins that could not be loaded.
    pub refused: Vec<Refusal>,
}

/// What loading a candidate gave, and the files it was loaded from.
struct Kept {
    loaded: Result<Arc<LoadedPlugin>, LoadError>,
    /// Its ecosystem as the adapter table classified it.
    ecosystem: Ecosystem,
    fingerprint: Fingerprint,
}

pub(crate) struct Registry {
    dir: Option<PathBuf>,
    adapters: Adapters,
    /// Plugins load for a check (see [`Candidate::dry_run`]).
    dry_run: bool,
    /// Plugins load only as the directory's lock file records them (see
    /// [`lockfile`](crate::lockfile)).
    locked: bool,
    /// Where plugins' data folders are kept, if not the default
    /// ([`data_dir::root`]).
    data_root: Option<PathBuf>,
    current: RwLock<Arc<Snapshot>>,
    /// By entry and name: one MCP file holds several plugins.
    kept: Mutex<HashMap<(PathBuf, String), Kept>>,
    top_level: Mutex<TopLevel>,
    dirty: AtomicBool,
    retry_refused: AtomicBool,
}

/// How long a read of the directory's top level stands for the snapshots
/// of the same run's start ([`Registry::snapshot_again`]).
const TOP_LEVEL_FRESH: Duration = Duration::from_millis(1);

/// The directory's top level as last read, and when that read began.
#[derive(Default)]
struct TopLevel {
    fingerprint: Fingerprint,
    read_at: Option<Instant>,
    /// How many times it was read (for the tests).
    #[cfg(test)]
    reads: usize,
}

impl Registry {
    /// A registry over `dir` whose plugins load through `adapters`, loaded
    /// now; for a check when `dry_run`; with their data folders under
    /// `data_root`, else the default root.
    pub(crate) fn open(
        dir: &Path,
        adapters: Adapters,
        dry_run: bool,
        locked: bool,
        data_root: Option<PathBuf>,
    ) -> Result<Arc<Self>, HostError> {
        std::fs::read_dir(dir).map_err(|source| HostError::Directory {
            path: dir.to_path_buf(),
            source,
        })?;
        let registry = Arc::new(Self {
            dir: Some(dir.to_path_buf()),
            adapters,
            dry_run,
            locked,
            data_root,
            current: RwLock::default(),
            kept: Mutex::default(),
            top_level: Mutex::default(),
            dirty: AtomicBool::new(true),
            retry_refused: AtomicBool::new(false),
        });
        registry.snapshot();
        Ok(registry)
    }

    /// A registry over plugins built in memory (for embedding and tests).
    pub(crate) fn fixed(plugins: Vec<LoadedPlugin>) -> Arc<Self> {
        let mut plugins: Vec<Arc<LoadedPlugin>> = plugins.into_iter().map(Arc::new).collect();
        sort_for_running(&mut plugins);
        Arc::new(Self {
            dir: None,
            adapters: Adapters::default(),
            dry_run: false,
            locked: false,
            data_root: None,
            current: RwLock::new(Arc::new(Snapshot {
                plugins,
                refused: Vec::new(),
            })),
            kept: Mutex::default(),
            top_level: Mutex::default(),
            dirty: AtomicBool::new(false),
            retry_refused: AtomicBool::new(false),
        })
    }

    /// The directory, if the registry watches one.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Mark the directory as changed: the next snapshot rescans it.
    pub(crate) fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    /// Rescan at the next snapshot, and load refused plugins again even if
    /// their files did not change.
    pub(crate) fn reload(&self) {
        self.retry_refused.store(true, Ordering::SeqCst);
        self.mark_dirty();
    }

    /// The current plugins, rescanning first if the directory changed.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot_checked(false)
    }

    /// The same as [`snapshot`](Self::snapshot), for a call that follows
    /// one at once (the same run's start): a read of the top level under
    /// [`TOP_LEVEL_FRESH`] old stands. A change the watcher reported is
    /// still seen.
    pub(crate) fn snapshot_again(&self) -> Arc<Snapshot> {
        self.snapshot_checked(true)
    }

    fn snapshot_checked(&self, recent_read_stands: bool) -> Arc<Snapshot> {
        if let Some(dir) = &self.dir {
            let moved = self.top_level_moved(dir, recent_read_stands);
            if self.dirty.swap(false, Ordering::SeqCst) || moved {
                self.rescan(dir);
            }
        }
        read(&self.current).clone()
    }

    /// Whether the directory's top level changed since it was last read;
    /// false without reading it when `recent_read_stands` and that read is
    /// under [`TOP_LEVEL_FRESH`] old.
    fn top_level_moved(&self, dir: &Path, recent_read_stands: bool) -> bool {
        let mut last = lock(&self.top_level);
        if recent_read_stands
            && last
                .read_at
                .is_some_and(|at| at.elapsed() < TOP_LEVEL_FRESH)
        {
            return false;
        }
        let read_at = Instant::now();
        let top = top_level_fingerprint(dir);
        #[cfg(test)]
        {
            last.reads += 1;
        }
        let moved = last.fingerprint != top;
        last.fingerprint = top;
        last.read_at = Some(read_at);
        moved
    }

    fn rescan(&self, dir: &Path) {
        let mut found = match self.adapters.scan(dir) {
            Ok(found) => found,
            Err(e) => {
                tracing::error!(dir = %dir.display(), "cannot read the plugin directory; keeping the plugins loaded: {e}");
                return;
            }
        };
        let mut kept = lock(&self.kept);
        let retry_refused = self.retry_refused.swap(false, Ordering::SeqCst);
        // What each candidate gave: kept from before when its files did not
        // change, else loaded now (all of those at once, in `load_all`).
        let mut outcomes: Vec<Option<Result<Arc<LoadedPlugin>, LoadError>>> = Vec::new();
        let mut to_load: Vec<(usize, &mut Candidate)> = Vec::new();
        let data_root = self.data_root.clone().unwrap_or_else(data_dir::root);
        let data = data_dir::directory_folder(&data_root, dir);
        for (index, entry) in found.iter_mut().enumerate() {
            outcomes.push(None);
            let Found::Plugin(candidate) = entry else {
                continue;
            };
            candidate.dry_run = self.dry_run;
            match kept.remove(&(candidate.root.clone(), candidate.name.clone())) {
                Some(old)
                    if old.fingerprint == candidate.fingerprint
                        && (old.loaded.is_ok() || !retry_refused) =>
                {
                    candidate.ecosystem = old.ecosystem;
                    outcomes[index] = Some(old.loaded);
                }
                _ => {
                    candidate.data_dir = data
                        .as_ref()
                        .map(|d| data_dir::plugin_folder(d, &candidate.name));
                    to_load.push((index, candidate))
                }
            }
        }
        let lock = self.locked.then(|| Lockfile::read(dir));
        for (index, loaded) in load_all(&self.adapters, lock.as_ref(), to_load) {
            match &loaded {
                Ok(plugin) => {
                    tracing::debug!(target: LOAD_LOG_TARGET, plugin = %plugin.name, file = %plugin.file.display(), "plugin loaded")
                }
                Err(reason) => {
                    tracing::warn!(target: LOAD_LOG_TARGET, plugin = %found[index].name(), "plugin refused: {reason}")
                }
            }
            outcomes[index] = Some(loaded);
        }
        let mut next_kept = HashMap::new();
        let mut plugins: Vec<Arc<LoadedPlugin>> = Vec::new();
        let mut refused = Vec::new();
        for (entry, outcome) in found.into_iter().zip(outcomes) {
            let candidate = match entry {
                Found::Plugin(candidate) => candidate,
                Found::Refused { name, file, reason } => {
                    refused.push(Refusal {
                        name,
                        mode: mode_on_disk(&file),
                        file,
                        engine: None,
                        ecosystem: None,
                        reason,
                    });
                    continue;
                }
            };
            let loaded = outcome.expect("every candidate was kept or loaded");
            next_kept.insert(
                (candidate.root.clone(), candidate.name.clone()),
                Kept {
                    loaded: loaded.clone(),
                    ecosystem: candidate.ecosystem,
                    fingerprint: candidate.fingerprint.clone(),
                },
            );
            let plugin =
                loaded.and_then(
                    |plugin| match plugins.iter().find(|p| p.name == plugin.name) {
                        Some(other) => Err(LoadError::DuplicateName {
                            path: candidate.root.clone(),
                            name: plugin.name.clone(),
                            other: other.file.clone(),
                        }),
                        None => Ok(plugin),
                    },
                );
            match plugin {
                Ok(plugin) => plugins.push(plugin),
                Err(reason) => refused.push(Refusal {
                    name: candidate.name.clone(),
                    file: candidate.root.clone(),
                    engine: Some(match reason {
                        LoadError::RefusedOnNode { .. } => EngineKind::NODE,
                        _ => candidate.engine,
                    }),
                    ecosystem: Some(candidate.ecosystem),
                    mode: candidate.manifest.mode,
                    reason,
                }),
            }
        }
        *kept = next_kept;
        sort_for_running(&mut plugins);
        *write(&self.current) = Arc::new(Snapshot { plugins, refused });
    }
}

/// The mode of an entry refused before it became a candidate: a lone file
/// has no manifest (advisory); a folder has its manifest's mode, advisory
/// without one; a manifest that does not parse has the mode it asks for
/// ([`intended_mode`]), and one that cannot be read is required.
fn mode_on_disk(entry: &Path) -> Mode {
    if !entry.is_dir() {
        return Mode::Advisory;
    }
    match read_text(&entry.join(MANIFEST_FILE), MAX_SOURCE_BYTES) {
        Ok(text) => Manifest::parse(&text).map_or_else(|_| intended_mode(&text), |m| m.mode),
        Err(e) if e.is_not_found() => Mode::Advisory,
        Err(_) => Mode::Required,
    }
}

/// The most plugins loaded at once.
const MAX_LOADERS: usize = 8;

/// Each loader thread's stack, as much as a main thread's: a load runs on
/// the loader as it would on the caller.
const LOADER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Classify and load each candidate (given with its index in the scan),
/// several at once: the caller and up to [`MAX_LOADERS`] − 1 scoped
/// threads (no more in all than the machine has cores) take jobs from one
/// queue in turn, so a plugin slow to load holds up only its own loader
/// while the others drain the queue. Each plugin is a job of its own,
/// except Python plugins: they are one job, loaded one after another in
/// file-name order, as their imports share one interpreter (a plugin that
/// holds it refuses the Python plugins after it, the same way every time).
/// Each load stays bounded by its own engine's limit. Returns each index
/// with what loading gave, in the order given, whatever order the loads
/// finished in. Log lines of the loads go to the caller's tracing
/// subscriber and span.
fn load_all(
    adapters: &Adapters,
    locked_by: Option<&Result<Lockfile, String>>,
    candidates: Vec<(usize, &mut Candidate)>,
) -> Vec<(usize, Result<Arc<LoadedPlugin>, LoadError>)> {
    let (python, others): (Vec<_>, Vec<_>) = candidates
        .into_iter()
        .partition(|(_, candidate)| candidate.engine == EngineKind::PYTHON);
    // The Python job first: it is likely the longest.
    let jobs: Vec<Vec<_>> = std::iter::once(python)
        .filter(|job| !job.is_empty())
        .chain(others.into_iter().map(|one| vec![one]))
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let loaders = jobs.len().min(cores).min(MAX_LOADERS);
    let queue = Mutex::new(jobs.into_iter());
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    let span = tracing::Span::current();
    let drain = || {
        let mut done = Vec::new();
        loop {
            // The lock is held only to take the next job.
            let next = lock(&queue).next();
            let Some(job) = next else {
                return done;
            };
            for (index, candidate) in job {
                let loaded = adapters
                    .classify(candidate)
                    .and_then(|()| load(adapters, locked_by, candidate));
                done.push((index, loaded.map(Arc::new)));
            }
        }
    };
    let mut loaded = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..loaders)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("yohost-load".into())
                    .stack_size(LOADER_STACK_BYTES)
                    .spawn_scoped(scope, || {
                        tracing::dispatcher::with_default(&dispatch, || span.in_scope(drain))
                    })
                    // A loader that cannot start leaves its share to the others.
                    .ok()
            })
            .collect();
        let mut loaded = drain();
        for helper in helpers {
            match helper.join() {
                Ok(done) => loaded.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        loaded
    });
    loaded.sort_by_key(|(index, _)| *index);
    loaded
}

/// Load a candidate through its adapter and name it. A name the plugin
/// gives itself must be a valid name too; a plugin with no hooks and
/// nothing to run when it is unloaded loads with a warning, since the host
/// will never call it (code that runs only while it loads, pi's
/// `session_start`, has run by then).
///
/// Under a lock (`lock` is the directory's lock file), the plugin loads from
/// a private copy of the files that match it (see
/// [`lockfile`](crate::lockfile)), and is refused when they do not.
fn load(
    adapters: &Adapters,
    lock: Option<&Result<Lockfile, String>>,
    found: &Candidate,
) -> Result<LoadedPlugin, LoadError> {
    let (copied, private_copy) = match lock {
        None => (None, None),
        Some(Err(problem)) => {
            return Err(LoadError::Locked {
                path: found.root.clone(),
                problem: problem.clone(),
            })
        }
        Some(Ok(lock)) => {
            let (copied, dir) = snapshot(found, lock)?;
            (Some(copied), Some(dir))
        }
    };
    let candidate = copied.as_ref().unwrap_or(found);
    let loaded = adapters.load(candidate)?;
    let name = match (&candidate.named_by_manifest, loaded.name) {
        (false, Some(own)) if !own.is_empty() => {
            check_name(&own).map_err(|problem| LoadError::BadName {
                path: found.root.clone(),
                name: own.clone(),
                problem,
            })?;
            own
        }
        _ => candidate.name.clone(),
    };
    if candidate.manifest.mode == Mode::Required && !loaded.unknown_names.is_empty() {
        return Err(LoadError::UnknownNames {
            path: found.root.clone(),
            names: loaded.unknown_names,
        });
    }
    let mut warnings = loaded.warnings;
    warnings.extend(loaded.unknown_names);
    if loaded.hooks.is_empty() && !loaded.unloads {
        let warning = "it implements no hooks and offers no tools, so the host will never call it";
        tracing::warn!(target: LOAD_LOG_TARGET, plugin = %name, "{warning}");
        warnings.push(warning.into());
    }
    Ok(LoadedPlugin {
        name,
        file: found.root.clone(),
        engine: loaded
            .routed
            .as_ref()
            .map_or(candidate.engine, |r| r.engine),
        routed: loaded.routed.map(|r| r.because),
        ecosystem: loaded.ecosystem.unwrap_or(candidate.ecosystem),
        manifest: found.manifest.clone(),
        hooks: loaded.hooks,
        warnings,
        app: loaded.app,
        processes: loaded.processes,
        data_dir: found.data_dir.clone(),
        plugin: match private_copy {
            Some(copy) => Arc::new(FromCopy {
                plugin: loaded.plugin,
                _copy: copy,
            }),
            None => loaded.plugin,
        },
        stats: PluginStats::default(),
    })
}

/// Priority first (lower runs first), then name.
fn sort_for_running(plugins: &mut [Arc<LoadedPlugin>]) {
    plugins.sort_by(|a, b| (a.manifest.priority(), &a.name).cmp(&(b.manifest.priority(), &b.name)));
}

/// A quick summary of the directory's top level, hidden entries included
/// (an adapter may recognise one), to notice a change without a watcher's
/// help.
fn top_level_fingerprint(dir: &Path) -> Fingerprint {
    let mut out: Fingerprint = [entries(dir), hidden_entries(dir)]
        .into_iter()
        .flat_map(Result::unwrap_or_default)
        .map(|p| stat(&p))
        .collect();
    // A change to what is ignored is a change to the directory.
    out.push(stat(&dir.join(IGNORE_FILE)));
    out.sort();
    out
}

/// These load a TypeScript plugin, so they need the JS engine.
#[cfg(all(test, feature = "js"))]
mod tests {
    use super::*;

    fn reads(registry: &Registry) -> usize {
        registry.top_level.lock().unwrap().reads
    }

    #[test]
    fn snapshots_at_once_read_the_top_level_once_and_a_later_one_sees_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path(), Adapters::default(), false, false, None).unwrap();
        // Three snapshots at once, as a run's start takes them, read the top
        // level once. (On a loaded machine the three may now and then be
        // spread over more than the window: some try of twenty gets there.)
        let read_once = (0..20).any(|_| {
            std::thread::sleep(TOP_LEVEL_FRESH * 2);
            let before = reads(&registry);
            assert!(registry.snapshot().plugins.is_empty());
            for _ in 0..2 {
                assert!(registry.snapshot_again().plugins.is_empty());
            }
            reads(&registry) == before + 1
        });
        assert!(read_once, "three snapshots at once read the top level once");

        // A plugin the watcher never reported (there is none here) is seen
        // by the next run's first snapshot, however soon it comes.
        assert!(registry.snapshot().plugins.is_empty());
        std::fs::write(
            dir.path().join("late.ts"),
            "import { definePlugin } from \"yohost\";\nexport default definePlugin({ before_tool() { return null; } });",
        )
        .unwrap();
        let snapshot = registry.snapshot();
        let names: Vec<&str> = snapshot.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["late"], "refused: {:?}", snapshot.refused);
    }
}
