//! What a plugin's files looked like when it was found: the fingerprint a
//! watcher or a reload compares, so that a change to a plugin (and only to
//! it: not what it writes into its data folders) reloads it.

use crate::load::grants::data_folders;
use crate::load::manifest::Manifest;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What the files of a plugin looked like when it was found.
pub type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// A file's size and modification time, following symlinks: what a
/// fingerprint records of it (`stat` never opens the file, so a FIFO
/// cannot block it).
pub fn stat(path: &Path) -> (PathBuf, u64, Option<SystemTime>) {
    let meta = std::fs::metadata(path).ok();
    (
        path.to_path_buf(),
        meta.as_ref().map_or(0, |m| m.len()),
        meta.and_then(|m| m.modified().ok()),
    )
}

/// The fingerprint of a folder plugin: its files, sorted, outside
/// `node_modules` packages' own files and outside the `data` folders its
/// manifest grants (what the plugin writes there is not a change to it).
pub fn folder_fingerprint(dir: &Path, manifest: &Manifest) -> Fingerprint {
    let mut fingerprint = Vec::new();
    let data = data_folders(dir, &manifest.capabilities);
    collect_files(dir, &mut fingerprint, 0, &data);
    fingerprint.sort();
    fingerprint
}

/// The files under `dir`, eight folders deep at most, outside its `data`
/// folders (what the plugin writes there is not a change to the plugin).
/// Symlinks are recorded as what they point to, but a symlinked folder is
/// not walked, so links cannot make the walk loop or fan out.
fn collect_files(dir: &Path, out: &mut Fingerprint, depth: usize, data: &[PathBuf]) {
    if depth > 8 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in rd.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if depth == 0 && name == "node_modules" {
            collect_packages(&path, out);
            continue;
        }
        if matches!(&*name, "node_modules" | "__pycache__" | "target") || name.starts_with('.') {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() && data.contains(&path) => {}
            Ok(kind) if kind.is_dir() => collect_files(&path, out, depth + 1, data),
            _ => out.push(stat(&path)),
        }
    }
}

/// The folder `node_modules` and its packages (`@scope/name` too), not
/// their files: installing, removing or rebuilding a package changes them,
/// and may change the engine `engine = "auto"` picks
/// (the Node routing ([`NodeNeeds`](crate::NodeNeeds))).
fn collect_packages(node_modules: &Path, out: &mut Fingerprint) {
    out.push(stat(node_modules));
    let Ok(rd) = std::fs::read_dir(node_modules) else {
        return;
    };
    for entry in rd.filter_map(Result::ok) {
        let path = entry.path();
        out.push(stat(&path));
        let scoped = entry.file_name().to_string_lossy().starts_with('@');
        if scoped && entry.file_type().is_ok_and(|t| t.is_dir()) {
            if let Ok(rd) = std::fs::read_dir(&path) {
                out.extend(rd.filter_map(Result::ok).map(|e| stat(&e.path())));
            }
        }
    }
}
