//! File watches for flavors with file services (pi's `fs.watch`), through
//! `notify`.
//!
//! - A watch is on a path that exists inside the plugin's grants, by the
//!   path it resolves to ([`crate::load::grants::Grants::real_path`]): a symlink
//!   that leads out of a grant is refused as a read of it is.
//! - An event is kept only when the folder it happened in resolves inside
//!   the watched path, and a folder watched recursively does not follow
//!   symlinks: a symlink in a granted folder brings no events from where it
//!   leads.
//! - Bounded: at most [`MAX_WATCHES`] watches per plugin, and at most
//!   [`MAX_QUEUED_EVENTS`] events wait to be delivered; the rest are
//!   counted and dropped (the plugin's log says how many).
//! - The system's resources are budgeted, since the user's limits on them
//!   are shared with every other program the user runs (8 pi extensions
//!   with 16 watches each, one inotify instance per watch, used up the
//!   default 128 instances, and other programs' `inotify_init()` failed).
//!   A plugin's watches share one `notify` watcher (one inotify instance
//!   and thread), made at its first watch and dropped with its last; the
//!   host's plugins together hold at most [`HOST_MAX_WATCHERS`] of them.
//!   A watch costs one system watch per folder it covers (a recursive
//!   watch, every folder below, counted before it starts, symlinks not
//!   followed); a plugin holds at most [`PLUGIN_MAX_SYSTEM_WATCHES`] and
//!   the host's plugins together [`HOST_MAX_SYSTEM_WATCHES`]. A watch past
//!   a budget is refused with an error naming it (`EMFILE` for watchers,
//!   `ENOSPC` for system watches, as the system's own limits would say).
//! - A watch ends when the plugin closes it, when its engine is rebuilt,
//!   and when the plugin is dropped; the watcher, with the thread and the
//!   system watches behind it, goes with the plugin's last watch.
//!
//! Events reach the plugin on its engine thread, only while one of its
//! calls is in flight (as its timers do): the first event that arrives
//! wakes the thread, which hands the waiting events to the plugin at once
//! when a call is in flight, else at the start of the plugin's next call,
//! before its hook runs. Listeners so run within a call's deadline, and
//! their log lines carry its run.

//!
//! Its budget of the system's watch resources is `budget`; what an event
//! becomes for the plugin, and the queue it waits in, is `events`.

mod budget;
mod events;

use crate::load::grants::FileError;
use crate::model::sync::lock;
use budget::{cost, SystemWatches, WatcherSlot};
use events::{push, Queue, Scope};
use notify::{Config, Event, RecommendedWatcher, RecursiveMode, Watcher};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub(crate) use budget::{WatchBudget, HOST_BUDGET};
pub use budget::{HOST_MAX_SYSTEM_WATCHES, HOST_MAX_WATCHERS, PLUGIN_MAX_SYSTEM_WATCHES};
pub(crate) use events::Observed;
pub use events::MAX_QUEUED_EVENTS;

/// The most watches a plugin may hold at once.
pub const MAX_WATCHES: usize = 16;

/// Why a watch did not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WatchError {
    /// The path is not granted, is missing, or leads out of its grant.
    #[error(transparent)]
    File(#[from] FileError),
    /// The plugin holds [`MAX_WATCHES`] already.
    #[error("a plugin may hold at most {MAX_WATCHES} watches: close one first")]
    TooMany,
    /// The watch would take the plugin past [`PLUGIN_MAX_SYSTEM_WATCHES`].
    #[error("a plugin's watches may cost at most {PLUGIN_MAX_SYSTEM_WATCHES} system watches (one per folder watched); this one needs {needed} and {left} are left")]
    PluginSystemWatches {
        /// What the watch needs.
        needed: usize,
        /// What the plugin has left.
        left: usize,
    },
    /// The watch would take the host's plugins past
    /// [`HOST_MAX_SYSTEM_WATCHES`].
    #[error("the host's plugins may hold at most {HOST_MAX_SYSTEM_WATCHES} system watches together (one per folder watched); this one needs {needed}")]
    HostSystemWatches {
        /// What the watch needs.
        needed: usize,
    },
    /// The host's plugins hold [`HOST_MAX_WATCHERS`] watchers already.
    #[error("the host's plugins may hold at most {HOST_MAX_WATCHERS} watchers (inotify instances, one per plugin that watches) together; no more are left")]
    HostWatchers,
    /// The system refused the watch (its limit on watches, say).
    #[error("the system refused the watch: {0}")]
    System(#[from] notify::Error),
}

impl WatchError {
    /// Node's name for the error, which plugins see as `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            WatchError::File(e) => e.code(),
            WatchError::TooMany | WatchError::HostWatchers => "EMFILE",
            WatchError::PluginSystemWatches { .. } | WatchError::HostSystemWatches { .. } => {
                "ENOSPC"
            }
            WatchError::System(_) => "ENOSPC",
        }
    }
}

/// One watch of the plugin.
struct Active {
    root: PathBuf,
    recursive: bool,
    /// The system watches it was counted for.
    cost: SystemWatches,
}

/// The plugin's one `notify` watcher and what it watches.
struct SharedWatcher {
    watcher: RecommendedWatcher,
    /// Path → whether it is watched recursively.
    watched: BTreeMap<PathBuf, bool>,
    /// Last: given back after the watcher is gone.
    _slot: WatcherSlot,
}

/// A plugin's watches. Lives on its engine thread; the watcher's thread
/// only adds to the queue and wakes the engine thread.
pub(crate) struct Watches {
    queue: Arc<Mutex<Queue>>,
    wake: Arc<dyn Fn() + Send + Sync>,
    /// The watches' scopes, which the watcher's thread reads.
    scopes: Arc<Mutex<Vec<Scope>>>,
    active: RefCell<BTreeMap<u64, Active>>,
    shared: RefCell<Option<SharedWatcher>>,
    next: Cell<u64>,
    budget: &'static WatchBudget,
}

impl Watches {
    /// No watches yet; `wake` is called (from a watcher's thread) when
    /// events start to wait. Counted in the host's [`HOST_BUDGET`].
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self::with_budget(wake, &HOST_BUDGET)
    }

    /// As [`new`](Self::new), counted in `budget`.
    pub fn with_budget(
        wake: impl Fn() + Send + Sync + 'static,
        budget: &'static WatchBudget,
    ) -> Self {
        Watches {
            queue: Arc::default(),
            wake: Arc::new(wake),
            scopes: Arc::default(),
            active: RefCell::default(),
            shared: RefCell::default(),
            next: Cell::new(0),
            budget,
        }
    }

    /// The system watches the plugin's watches cost now.
    fn system_watches(&self) -> usize {
        self.active.borrow().values().map(|a| a.cost.n).sum()
    }

    /// Watch `root` (resolved, inside a grant: see
    /// [`crate::load::grants::Grants::real_path`]); a folder with what is below
    /// it when `recursive`. Returns the watch's id.
    pub fn start(&self, root: PathBuf, recursive: bool) -> Result<u64, WatchError> {
        if self.active.borrow().len() >= MAX_WATCHES {
            return Err(WatchError::TooMany);
        }
        let is_dir = root.is_dir();
        let recursive = recursive && is_dir;
        let left = PLUGIN_MAX_SYSTEM_WATCHES.saturating_sub(self.system_watches());
        let needed = cost(&root, recursive, left);
        if needed > left {
            return Err(WatchError::PluginSystemWatches { needed, left });
        }
        let cost = self
            .budget
            .system_watches(needed)
            .ok_or(WatchError::HostSystemWatches { needed })?;
        let id = self.next.get() + 1;
        let mut shared = self.shared.borrow_mut();
        if shared.is_none() {
            *shared = Some(self.new_watcher()?);
        }
        let shared_watcher = shared.as_mut().expect("made above");
        let covered = shared_watcher.watched.iter().any(|(path, deep)| {
            (*path == root && (*deep || !recursive)) || (*deep && root.starts_with(path))
        });
        if !covered {
            let mode = if recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            if let Err(e) = shared_watcher.watcher.watch(&root, mode) {
                if self.active.borrow().is_empty() {
                    *shared = None;
                }
                return Err(e.into());
            }
            if recursive {
                // Its walk took over what it covers.
                shared_watcher
                    .watched
                    .retain(|path, _| !path.starts_with(&root));
            }
            shared_watcher.watched.insert(root.clone(), recursive);
        }
        self.next.set(id);
        self.lock_scopes().push(Scope {
            id,
            root: root.clone(),
            is_dir,
            recursive,
        });
        self.active.borrow_mut().insert(
            id,
            Active {
                root,
                recursive,
                cost,
            },
        );
        Ok(id)
    }

    /// The plugin's watcher, taken from the host's budget.
    fn new_watcher(&self) -> Result<SharedWatcher, WatchError> {
        let slot = self.budget.watcher().ok_or(WatchError::HostWatchers)?;
        let queue = Arc::clone(&self.queue);
        let wake = Arc::clone(&self.wake);
        let scopes = Arc::clone(&self.scopes);
        let watcher = RecommendedWatcher::new(
            move |event: notify::Result<Event>| {
                if let Ok(event) = event {
                    let scopes = lock(&scopes);
                    for scope in scopes.iter() {
                        push(&queue, &*wake, scope, &event);
                    }
                }
            },
            Config::default().with_follow_symlinks(false),
        )?;
        Ok(SharedWatcher {
            watcher,
            watched: BTreeMap::new(),
            _slot: slot,
        })
    }

    /// Watch again what the remaining watches need, from scratch (a path
    /// one watch no longer needs may be one another watch's walk covered).
    fn rewatch(&self) {
        let active = self.active.borrow();
        let mut shared = self.shared.borrow_mut();
        if active.is_empty() {
            *shared = None;
            return;
        }
        let Some(shared) = shared.as_mut() else {
            return;
        };
        for path in std::mem::take(&mut shared.watched).into_keys() {
            let _ = shared.watcher.unwatch(&path);
        }
        // Recursive roots first, then what they do not cover.
        let mut roots: Vec<(&PathBuf, bool)> =
            active.values().map(|a| (&a.root, a.recursive)).collect();
        roots.sort_by_key(|(path, deep)| (!deep, path.components().count()));
        for (root, recursive) in roots {
            let covered = shared
                .watched
                .iter()
                .any(|(path, deep)| path == root || (*deep && root.starts_with(path)));
            if covered {
                continue;
            }
            let mode = if recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            if shared.watcher.watch(root, mode).is_ok() {
                shared.watched.insert(root.clone(), recursive);
            }
        }
    }

    fn lock_scopes(&self) -> std::sync::MutexGuard<'_, Vec<Scope>> {
        lock(&self.scopes)
    }

    /// End watch `id` and drop its waiting events (a closed watcher gets
    /// no more). Unknown ids are ignored.
    pub fn stop(&self, id: u64) {
        let Some(stopped) = self.active.borrow_mut().remove(&id) else {
            return;
        };
        self.lock_scopes().retain(|s| s.id != id);
        self.lock().events.retain(|e| e.watch != id);
        let still_needed = self
            .active
            .borrow()
            .values()
            .any(|a| a.root == stopped.root && a.recursive == stopped.recursive);
        if !still_needed {
            self.rewatch();
        }
    }

    /// End every watch and drop every waiting event.
    pub fn stop_all(&self) {
        self.active.borrow_mut().clear();
        self.lock_scopes().clear();
        *self.shared.borrow_mut() = None;
        *self.lock() = Queue::default();
    }

    /// How many watches are active.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.active.borrow().len()
    }

    /// Whether no watch is active.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The events that wait (of watches still active) and how many were
    /// dropped since the last time; `None` when there is nothing to tell.
    pub fn take(&self) -> Option<(Vec<Observed>, usize)> {
        let (events, dropped) = {
            let mut queue = self.lock();
            queue.woken = false;
            let events: Vec<Observed> = queue.events.drain(..).collect();
            (events, std::mem::take(&mut queue.dropped))
        };
        let active = self.active.borrow();
        let events: Vec<Observed> = events
            .into_iter()
            .filter(|e| active.contains_key(&e.watch))
            .collect();
        (!events.is_empty() || dropped > 0).then_some((events, dropped))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        lock(&self.queue)
    }
}

#[cfg(test)]
mod tests {
    use super::events::Change;
    use super::*;
    use notify::event::ModifyKind;
    use notify::EventKind;
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    fn event(kind: EventKind, path: &Path) -> Event {
        Event::new(kind).add_path(path.to_path_buf())
    }

    #[test]
    fn the_queue_is_bounded_and_wakes_once_per_delivery() {
        let woken = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&woken);
        let watches = Watches::new(move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        let root = PathBuf::from("/w");
        let scope = Scope {
            id: 7,
            root: root.clone(),
            is_dir: true,
            recursive: false,
        };
        let modify = EventKind::Modify(ModifyKind::Data(notify::event::DataChange::Any));
        let change = || {
            push(
                &watches.queue,
                &*watches.wake,
                &scope,
                &event(modify, &root.join("f")),
            )
        };
        for _ in 0..MAX_QUEUED_EVENTS + 5 {
            change();
        }
        assert_eq!(woken.load(Ordering::Relaxed), 1);
        let queue = watches.lock();
        assert_eq!((queue.events.len(), queue.dropped), (MAX_QUEUED_EVENTS, 5));
        drop(queue);
        // Watch 7 is not active: its events are not delivered, the drop
        // count is.
        assert_eq!(watches.take(), Some((Vec::new(), 5)));
        change();
        assert_eq!(woken.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_watch_sees_a_change_and_stops_when_closed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let watches = Watches::new(|| {});
        let id = watches.start(root.clone(), false).unwrap();
        std::fs::write(root.join("new.txt"), "x").unwrap();
        // Generous, so a loaded machine does not fail it.
        let deadline = Instant::now() + Duration::from_secs(30);
        let seen = loop {
            if let Some((events, _)) = watches.take() {
                break events;
            }
            assert!(Instant::now() < deadline, "no event arrived");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(
            seen.contains(&Observed {
                watch: id,
                change: Change::Rename,
                filename: "new.txt".into()
            }),
            "{seen:?}"
        );
        watches.stop(id);
        assert!(watches.is_empty());
        std::fs::write(root.join("later.txt"), "x").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(watches.take(), None);
    }

    #[test]
    fn a_plugin_holds_at_most_its_share_of_watches() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let watches = Watches::new(|| {});
        for _ in 0..MAX_WATCHES {
            watches.start(root.clone(), false).unwrap();
        }
        let refused = watches.start(root.clone(), false).unwrap_err();
        assert_eq!(refused.code(), "EMFILE");
        watches.stop_all();
        assert!(watches.start(root, false).is_ok());
    }

    /// How many inotify instances this process holds (Linux).
    #[cfg(target_os = "linux")]
    fn inotify_instances() -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .filter(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|to| to.to_string_lossy() == "anon_inode:inotify")
            })
            .count()
    }

    fn budget() -> &'static WatchBudget {
        Box::leak(Box::default())
    }

    /// 9 plugins with 16 watches each hold 9 inotify instances, not 144
    /// (the default limit of the user's instances is 128, shared with
    /// every other program), and closing a plugin's watches gives its
    /// instance back.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_plugins_watches_share_one_watcher() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for i in 0..MAX_WATCHES {
            std::fs::create_dir(root.join(format!("f{i}"))).unwrap();
        }
        let before = inotify_instances();
        let plugins: Vec<Watches> = (0..9)
            .map(|_| {
                let watches = Watches::new(|| {});
                for i in 0..MAX_WATCHES {
                    watches
                        .start(root.join(format!("f{i}")), i % 2 == 0)
                        .unwrap();
                }
                watches
            })
            .collect();
        // Other tests may hold some meanwhile; one per call would be 144.
        let grown = inotify_instances().saturating_sub(before);
        assert!(grown < 40, "{grown} inotify instances for 9 plugins");
        for watches in &plugins {
            watches.stop_all();
        }
        let budget = budget();
        let counted = Watches::with_budget(|| {}, budget);
        for i in 0..MAX_WATCHES {
            counted.start(root.join(format!("f{i}")), false).unwrap();
        }
        assert_eq!(budget.held(), (1, MAX_WATCHES));
        counted.stop(1);
        assert_eq!(budget.held(), (1, MAX_WATCHES - 1));
        counted.stop_all();
        assert_eq!(budget.held(), (0, 0));
    }

    /// A plugin's watch past a budget is refused, naming it: the host's
    /// watchers, a plugin's system watches (a recursive watch costs a
    /// system watch per folder), the host's system watches.
    #[test]
    fn a_watch_past_a_budget_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let budget = budget();
        let plugins: Vec<Watches> = (0..HOST_MAX_WATCHERS)
            .map(|_| {
                let watches = Watches::with_budget(|| {}, budget);
                watches.start(root.clone(), false).unwrap();
                watches
            })
            .collect();
        let one_more = Watches::with_budget(|| {}, budget);
        let refused = one_more.start(root.clone(), false).unwrap_err();
        assert_eq!(refused.code(), "EMFILE");
        assert!(
            refused.to_string().contains("at most 16 watchers"),
            "{refused}"
        );
        // The plugin's other watches go on sharing its watcher.
        assert!(plugins[0].start(root.clone(), false).is_ok());
        drop(plugins);
        assert_eq!(budget.held(), (0, 0));

        let tree = root.join("tree");
        for i in 0..PLUGIN_MAX_SYSTEM_WATCHES {
            std::fs::create_dir_all(tree.join(format!("d{i}"))).unwrap();
        }
        let watches = Watches::with_budget(|| {}, budget);
        let refused = watches.start(tree.clone(), true).unwrap_err();
        assert_eq!(refused.code(), "ENOSPC");
        assert!(
            refused.to_string().contains("at most 512 system watches"),
            "{refused}"
        );
        assert!(watches.start(tree.join("d0"), true).is_ok());
        assert_eq!(budget.held(), (1, 1));

        // Trees of 511 folders: 8 plugins take 4088 system watches, the
        // 9th is past the host's 4096.
        let wide = root.join("wide");
        for i in 0..PLUGIN_MAX_SYSTEM_WATCHES - 2 {
            std::fs::create_dir_all(wide.join(format!("d{i}"))).unwrap();
        }
        let host: Vec<Watches> = (0..9)
            .map(|_| Watches::with_budget(|| {}, budget))
            .collect();
        let refused = host
            .iter()
            .find_map(|plugin| plugin.start(wide.clone(), true).err());
        let refused = refused.expect("the host's budget ends");
        assert!(
            refused
                .to_string()
                .contains("at most 4096 system watches together"),
            "{refused}"
        );
    }
}
