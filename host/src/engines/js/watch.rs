//! File watches for flavors with file services (pi's `fs.watch`), through
//! `notify`.
//!
//! - A watch is on a path that exists inside the plugin's grants, by the
//!   path it resolves to ([`crate::grants::Grants::real_path`]): a symlink
//!   that leads out of a grant is refused as a read of it is.
//! - An event is kept only when the folder it happened in resolves inside
//!   the watched path, and a folder watched recursively does not follow
//!   symlinks: a symlink in a granted folder brings no events from where it
//!   leads.
//! - Bounded: at most [`MAX_WATCHES`] watches per plugin, and at most
//!   [`MAX_QUEUED_EVENTS`] events wait to be delivered; the rest are
//!   counted and dropped (the plugin's log says how many).
//! - A watch ends when the plugin closes it, when its engine is rebuilt,
//!   and when the plugin is dropped: its `notify` watcher, with the thread
//!   and the system watch behind it, goes with it.
//!
//! Events reach the plugin on its engine thread, only while one of its
//! calls is in flight (as its timers do): the first event that arrives
//! wakes the thread, which hands the waiting events to the plugin at once
//! when a call is in flight, else at the start of the plugin's next call,
//! before its hook runs. Listeners so run within a call's deadline, and
//! their log lines carry its run.

use crate::grants::FileError;
use notify::event::{ModifyKind, RenameMode};
use notify::{Config, Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The most watches a plugin may hold at once.
pub const MAX_WATCHES: usize = 16;

/// The most events that wait for the plugin; later ones are dropped.
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// What happened to a watched name, in Node's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// It appeared, disappeared or was renamed.
    Rename,
    /// Its contents or metadata changed.
    Change,
}

/// One event for the plugin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Observed {
    /// The watch it belongs to.
    pub watch: u64,
    /// What happened.
    pub change: Change,
    /// The name, relative to the watched folder (a watched file's own
    /// name).
    pub filename: String,
}

/// Why a watch did not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The path is not granted, is missing, or leads out of its grant.
    #[error(transparent)]
    File(#[from] FileError),
    /// The plugin holds [`MAX_WATCHES`] already.
    #[error("a plugin may hold at most {MAX_WATCHES} watches: close one first")]
    TooMany,
    /// The system refused the watch (its limit on watches, say).
    #[error("the system refused the watch: {0}")]
    System(#[from] notify::Error),
}

impl WatchError {
    /// Node's name for the error, which plugins see as `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            WatchError::File(e) => e.code(),
            WatchError::TooMany => "EMFILE",
            WatchError::System(_) => "ENOSPC",
        }
    }
}

/// Events that wait for the plugin, shared with the watchers' threads.
#[derive(Default)]
struct Queue {
    events: VecDeque<Observed>,
    /// Events dropped since the last delivery.
    dropped: usize,
    /// The engine thread was woken and has not taken the events yet.
    woken: bool,
}

/// What one watch observes.
struct Scope {
    id: u64,
    /// The watched path, resolved.
    root: PathBuf,
    is_dir: bool,
    recursive: bool,
}

impl Scope {
    /// The name an event at `path` shows, if it belongs to this watch.
    fn filename(&self, path: &Path) -> Option<String> {
        let own_name = || {
            self.root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        };
        if path == self.root {
            return own_name();
        }
        if !self.is_dir {
            return None;
        }
        let relative = path.strip_prefix(&self.root).ok()?;
        let folder = path.parent()?;
        if folder != self.root {
            // Deeper than the watched folder: only for a recursive watch,
            // and only where the folder still resolves inside it.
            if !self.recursive || !folder.canonicalize().ok()?.starts_with(&self.root) {
                return None;
            }
        }
        Some(relative.to_string_lossy().into_owned())
    }
}

/// Node's event type for a `notify` event, if Node reports it.
fn change_of(kind: &EventKind) -> Option<Change> {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => Some(Change::Rename),
        // The `From` and `To` halves were reported already.
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => None,
        EventKind::Modify(ModifyKind::Name(_)) => Some(Change::Rename),
        EventKind::Modify(_) => Some(Change::Change),
        EventKind::Access(_) | EventKind::Any | EventKind::Other => None,
    }
}

/// A plugin's watches. Lives on its engine thread; the watchers' threads
/// only add to the queue and wake the engine thread.
pub struct Watches {
    queue: Arc<Mutex<Queue>>,
    wake: Arc<dyn Fn() + Send + Sync>,
    active: RefCell<BTreeMap<u64, RecommendedWatcher>>,
    next: Cell<u64>,
}

impl Watches {
    /// No watches yet; `wake` is called (from a watcher's thread) when
    /// events start to wait.
    pub fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Watches {
            queue: Arc::default(),
            wake: Arc::new(wake),
            active: RefCell::default(),
            next: Cell::new(0),
        }
    }

    /// Watch `root` (resolved, inside a grant: see
    /// [`crate::grants::Grants::real_path`]); a folder with what is below
    /// it when `recursive`. Returns the watch's id.
    pub fn start(&self, root: PathBuf, recursive: bool) -> Result<u64, WatchError> {
        if self.active.borrow().len() >= MAX_WATCHES {
            return Err(WatchError::TooMany);
        }
        let id = self.next.get() + 1;
        self.next.set(id);
        let is_dir = root.is_dir();
        let mode = if recursive && is_dir {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        let scope = Scope {
            id,
            root: root.clone(),
            is_dir,
            recursive,
        };
        let queue = Arc::clone(&self.queue);
        let wake = Arc::clone(&self.wake);
        let mut watcher = RecommendedWatcher::new(
            move |event: notify::Result<Event>| {
                if let Ok(event) = event {
                    push(&queue, &*wake, &scope, &event);
                }
            },
            Config::default().with_follow_symlinks(false),
        )?;
        watcher.watch(&root, mode)?;
        self.active.borrow_mut().insert(id, watcher);
        Ok(id)
    }

    /// End watch `id` and drop its waiting events (a closed watcher gets
    /// no more). Unknown ids are ignored.
    pub fn stop(&self, id: u64) {
        self.active.borrow_mut().remove(&id);
        self.lock().events.retain(|e| e.watch != id);
    }

    /// End every watch and drop every waiting event.
    pub fn stop_all(&self) {
        self.active.borrow_mut().clear();
        *self.lock() = Queue::default();
    }

    /// How many watches are active.
    pub fn len(&self) -> usize {
        self.active.borrow().len()
    }

    /// Whether no watch is active.
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
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Queue what `event` means for the watch `scope`, and wake the engine
/// thread if it is not awake to it yet.
fn push(queue: &Mutex<Queue>, wake: &(dyn Fn() + Send + Sync), scope: &Scope, event: &Event) {
    let Some(change) = change_of(&event.kind) else {
        return;
    };
    let names: Vec<String> = event
        .paths
        .iter()
        .filter_map(|p| scope.filename(p))
        .collect();
    if names.is_empty() {
        return;
    }
    let wakes = {
        let mut queue = queue.lock().unwrap_or_else(|e| e.into_inner());
        for filename in names {
            if queue.events.len() < MAX_QUEUED_EVENTS {
                queue.events.push_back(Observed {
                    watch: scope.id,
                    change,
                    filename,
                });
            } else {
                queue.dropped += 1;
            }
        }
        !std::mem::replace(&mut queue.woken, true)
    };
    if wakes {
        wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    fn event(kind: EventKind, path: &Path) -> Event {
        Event::new(kind).add_path(path.to_path_buf())
    }

    #[test]
    fn names_are_node_s_and_only_the_watched_scope_counts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let folder = |recursive| Scope {
            id: 1,
            root: root.clone(),
            is_dir: true,
            recursive,
        };
        assert_eq!(folder(false).filename(&root.join("a")), Some("a".into()));
        assert_eq!(folder(false).filename(&root.join("sub/b")), None);
        assert_eq!(
            folder(true).filename(&root.join("sub/b")),
            Some("sub/b".into())
        );
        assert_eq!(folder(true).filename(Path::new("/elsewhere/a")), None);
        let file = Scope {
            id: 1,
            root: root.join("a"),
            is_dir: false,
            recursive: false,
        };
        assert_eq!(file.filename(&root.join("a")), Some("a".into()));
        assert_eq!(file.filename(&root.join("b")), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_folder_inside_a_recursive_watch_brings_no_events() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("watched");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let root = root.canonicalize().unwrap();
        let scope = Scope {
            id: 1,
            root: root.clone(),
            is_dir: true,
            recursive: true,
        };
        assert_eq!(scope.filename(&root.join("link/secret")), None);
        // The link itself is a name in the watched folder.
        assert_eq!(scope.filename(&root.join("link")), Some("link".into()));
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
        let deadline = Instant::now() + Duration::from_secs(5);
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
}
