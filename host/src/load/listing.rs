//! Which names of a plugin directory discovery looks at: its entries
//! sorted by name, without those that are plainly not plugins (hidden
//! names, `node_modules`, notes, ...) and those its [`IGNORE_FILE`] names;
//! the hidden entries apart, which only an adapter may recognise.

use crate::load::source::read_text;
use std::path::{Path, PathBuf};

/// The file in a plugin directory that names entries that are not plugins
/// (a helper folder, notes), one name a line; `#` starts a comment.
pub const IGNORE_FILE: &str = ".yohostignore";

/// The entries of `dir` that may be plugins, sorted by name: not passed
/// over by their names (dot files, `node_modules`, notes) and not named in
/// its [`IGNORE_FILE`].
pub(crate) fn entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    listed(dir, |path| !passed_over(path))
}

/// The hidden entries of `dir` (named with a leading dot, such as
/// `.mcp.json` or `.cursor`), sorted by name, outside `.git`, the
/// [`IGNORE_FILE`] and the names it lists: only an adapter that recognises
/// one as its own ([`Adapter::discover`](crate::adapter::Adapter::discover))
/// makes it a plugin; the host's own rules pass them over.
pub(crate) fn hidden_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    listed(dir, |path| {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        name.starts_with('.') && name != ".git" && name != IGNORE_FILE
    })
}

/// The entries of `dir` that `keep` keeps and its [`IGNORE_FILE`] does not
/// name, sorted by name.
fn listed(dir: &Path, keep: impl Fn(&Path) -> bool) -> std::io::Result<Vec<PathBuf>> {
    let ignored: Vec<String> = read_text(&dir.join(IGNORE_FILE), 64 << 10)
        .map(|text| {
            text.lines()
                .map(|line| line.split('#').next().unwrap_or("").trim())
                .map(|name| name.trim_end_matches('/').to_string())
                .filter(|name| !name.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| keep(p))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            !ignored.iter().any(|ignored| *ignored == name)
        })
        .collect();
    entries.sort();
    Ok(entries)
}

/// The folders of `dir` that may be plugins, sorted by name.
pub fn scan_folders(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .map(|entries| entries.into_iter().filter(|p| p.is_dir()).collect())
        .unwrap_or_default()
}

/// Whether an entry is plainly not a plugin by its name: hidden, a
/// dependency or build folder, notes, declarations or an npm project's files.
pub(crate) fn passed_over(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.starts_with('.')
        || matches!(
            &*name,
            "node_modules"
                | "__pycache__"
                | "target"
                | "tsconfig.json"
                | "package.json"
                | "package-lock.json"
                | "yohost.lock"
        )
        || name.ends_with(".md")
        || name.ends_with(".txt")
        || name.ends_with(".d.ts")
}

/// Up to `limit` files below the top of `dir` (four folders deep at most,
/// outside what [`passed_over`] names) whose kind `is_plugin_file` knows,
/// each as its path from `dir`'s parent, in path order: what a folder with
/// no entry at its top holds, named by their own paths. Symlinked folders
/// are not walked.
pub(crate) fn plugin_files_below(
    dir: &Path,
    limit: usize,
    is_plugin_file: impl Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let base = dir.parent().unwrap_or(dir);
    let mut found = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(listing) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = listing
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| !passed_over(p))
            .collect();
        paths.sort();
        for path in paths {
            let is_dir = path.symlink_metadata().is_ok_and(|m| m.is_dir());
            if is_dir && depth < 4 {
                folders.push((path, depth + 1));
            } else if depth > 0 && path.is_file() && is_plugin_file(&path) {
                found.push(path.strip_prefix(base).unwrap_or(&path).to_path_buf());
            }
        }
    }
    found.sort();
    found.truncate(limit);
    found
}
