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
