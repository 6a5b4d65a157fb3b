//! The system's watch resources the host's plugins hold: how many
//! watchers (inotify instances) and system watches (one per folder
//! watched), each taken from a budget and given back when dropped.

use crate::model::sync::lock;
use std::path::Path;
use std::sync::Mutex;

/// The most system (inotify) watches one plugin's watches may cost.
pub const PLUGIN_MAX_SYSTEM_WATCHES: usize = 512;

/// The most system (inotify) watches the host's plugins may cost together.
pub const HOST_MAX_SYSTEM_WATCHES: usize = 4096;

/// The most watchers (inotify instances) the host's plugins may hold
/// together: one per plugin that watches.
pub const HOST_MAX_WATCHERS: usize = 16;

/// What the host's plugins hold of the system's watch resources, together.
#[derive(Debug, Default)]
pub(crate) struct WatchBudget {
    watchers: Mutex<usize>,
    system_watches: Mutex<usize>,
}

/// The host process's budget, shared by every plugin's watches.
pub(crate) static HOST_BUDGET: WatchBudget = WatchBudget {
    watchers: Mutex::new(0),
    system_watches: Mutex::new(0),
};

/// Add `n` to `counter` unless that takes it past `limit`.
fn reserve(counter: &Mutex<usize>, n: usize, limit: usize) -> bool {
    let mut held = lock(counter);
    if *held + n > limit {
        return false;
    }
    *held += n;
    true
}

/// Take `n` from `counter`.
fn give_back(counter: &Mutex<usize>, n: usize) {
    let mut held = lock(counter);
    *held = held.saturating_sub(n);
}

impl WatchBudget {
    /// `n` system watches, unless the host's plugins would hold more than
    /// [`HOST_MAX_SYSTEM_WATCHES`] together.
    pub(super) fn system_watches(&'static self, n: usize) -> Option<SystemWatches> {
        reserve(&self.system_watches, n, HOST_MAX_SYSTEM_WATCHES)
            .then_some(SystemWatches { budget: self, n })
    }

    /// One watcher, unless the host's plugins hold [`HOST_MAX_WATCHERS`]
    /// already.
    pub(super) fn watcher(&'static self) -> Option<WatcherSlot> {
        reserve(&self.watchers, 1, HOST_MAX_WATCHERS).then_some(WatcherSlot { budget: self })
    }

    /// How many watchers and system watches are held now.
    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        let read = |m: &Mutex<usize>| *lock(m);
        (read(&self.watchers), read(&self.system_watches))
    }
}

/// System watches taken from a budget, given back when dropped.
pub(super) struct SystemWatches {
    budget: &'static WatchBudget,
    /// How many.
    pub(super) n: usize,
}

impl Drop for SystemWatches {
    fn drop(&mut self) {
        give_back(&self.budget.system_watches, self.n);
    }
}

/// A watcher taken from a budget, given back when dropped (after the
/// watcher itself: it is the last field of the plugin's shared watcher).
pub(super) struct WatcherSlot {
    budget: &'static WatchBudget,
}

impl Drop for WatcherSlot {
    fn drop(&mut self) {
        give_back(&self.budget.watchers, 1);
    }
}

/// How many system watches watching `root` costs: one, or for a recursive
/// watch of a folder one per folder at or below it (symlinks not
/// followed), counting stops past `limit`.
pub(super) fn cost(root: &Path, recursive: bool, limit: usize) -> usize {
    if !recursive || !root.is_dir() {
        return 1;
    }
    let mut count = 0;
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        count += 1;
        if count > limit {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                folders.push(entry.path());
            }
        }
    }
    count
}
