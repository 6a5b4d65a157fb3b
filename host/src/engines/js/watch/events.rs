//! What a file event becomes for the plugin: Node's event type and name,
//! only for what a watch covers (a symlinked folder inside a recursive
//! watch brings none), queued within [`MAX_QUEUED_EVENTS`] until the engine
//! thread takes them.

use crate::model::sync::lock;
use notify::event::{ModifyKind, RenameMode};
use notify::{Event, EventKind};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The most events that wait for the plugin; later ones are dropped.
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// What happened to a watched name, in Node's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Change {
    /// It appeared, disappeared or was renamed.
    Rename,
    /// Its contents or metadata changed.
    Change,
}

/// One event for the plugin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Observed {
    /// The watch it belongs to.
    pub watch: u64,
    /// What happened.
    pub change: Change,
    /// The name, relative to the watched folder (a watched file's own
    /// name).
    pub filename: String,
}

/// Events that wait for the plugin, shared with the watchers' threads.
#[derive(Default)]
pub(super) struct Queue {
    /// The events, oldest first.
    pub(super) events: VecDeque<Observed>,
    /// Events dropped since the last delivery.
    pub(super) dropped: usize,
    /// The engine thread was woken and has not taken the events yet.
    pub(super) woken: bool,
}

/// What one watch observes.
pub(super) struct Scope {
    /// The watch's id.
    pub(super) id: u64,
    /// The watched path, resolved.
    pub(super) root: PathBuf,
    /// Whether it is a folder.
    pub(super) is_dir: bool,
    /// Whether what is below it is watched too.
    pub(super) recursive: bool,
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

/// thread if it is not awake to it yet.
pub(super) fn push(
    queue: &Mutex<Queue>,
    wake: &(dyn Fn() + Send + Sync),
    scope: &Scope,
    event: &Event,
) {
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
        let mut queue = lock(queue);
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
}
