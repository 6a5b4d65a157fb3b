//! Where a pi package keeps its extensions, as pi's package manager reads
//! it (`core/package-manager.js` in `@earendil-works/pi-coding-agent`):
//! - a `pi` field that lists resources (`extensions`, `skills`, `prompts`,
//!   `themes`) names them: each `pi.extensions` entry is a file, a folder
//!   or a glob (dot paths are passed over), and an entry starting with
//!   `!` or `-` drops the files it matches;
//! - otherwise the package's conventional `extensions/` folder holds them;
//! - a folder holds its own `package.json`'s `pi.extensions`, else its
//!   `index.ts` or `index.js`, else its `.ts` and `.js` files and, one
//!   level down, the entries of its subfolders.
//!
//! A package whose `package.json` depends on pi's packages is a pi package
//! too, even without a `pi` field, and so is a source that imports them.
//! This is how the adapter recognises pi extensions in a plugin directory
//! and picks a pi package's entry ([`recognises`], [`folder_entry`]).

use std::path::{Path, PathBuf};
use yohost::adapter::limits::MAX_SOURCE_BYTES;
use yohost::adapter::source::read_text;
use yohost::adapter::{Candidate, FolderEntry};

/// The resource kinds a `pi` field may list.
const RESOURCES: [&str; 4] = ["extensions", "skills", "prompts", "themes"];

/// The names pi's packages are published under.
pub(crate) const PI_SCOPES: [&str; 2] = ["@earendil-works/pi-", "@mariozechner/pi-"];

/// A folder's `package.json`, parsed, if it has one that parses.
pub(crate) fn package_of(dir: &Path) -> Option<serde_json::Value> {
    let text = read_text(&dir.join("package.json"), MAX_SOURCE_BYTES).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether a candidate is a pi extension: its folder is laid out as a pi
/// package (a `pi` field, extensions, a dependency on pi's packages), or
/// its source imports pi's packages.
pub(crate) fn recognises(candidate: &Candidate) -> bool {
    if candidate.root.is_dir() {
        let package = package_of(&candidate.root);
        let laid_out = package
            .as_ref()
            .is_some_and(|p| p.get("pi").is_some() || depends_on_pi(p));
        if laid_out || !pi_extensions(&candidate.root, package.as_ref()).is_empty() {
            return true;
        }
    }
    read_text(&candidate.entry, MAX_SOURCE_BYTES)
        .is_ok_and(|source| PI_SCOPES.iter().any(|scope| source.contains(scope)))
}

/// A pi package's entry: its first extension (the adapter loads them all),
/// before the folder's `index.ts` when its `pi` field lists it, as in pi,
/// and after it otherwise.
pub(crate) fn folder_entry(folder: &Path) -> Option<FolderEntry> {
    let package = package_of(folder);
    let path = pi_extensions(folder, package.as_ref()).into_iter().next()?;
    Some(FolderEntry {
        path,
        before_index: package.is_some_and(|p| p.get("pi").is_some()),
    })
}

/// The extensions of the pi package in `dir` (its parsed `package.json`,
/// if any), in pi's order; empty when it is not laid out as a pi package.
pub fn pi_extensions(dir: &Path, package: Option<&serde_json::Value>) -> Vec<PathBuf> {
    let pi = package
        .and_then(|p| p.get("pi"))
        .filter(|pi| pi.is_object());
    let listed = pi.is_some_and(|pi| RESOURCES.iter().any(|r| pi.get(r).is_some()));
    if !listed {
        return folder_entries(&dir.join("extensions"));
    }
    let entries: Vec<&str> = pi
        .and_then(|pi| pi.get("extensions"))
        .and_then(|e| e.as_array())
        .map(|list| list.iter().filter_map(|e| e.as_str()).collect())
        .unwrap_or_default();
    let (drops, sources): (Vec<&str>, Vec<&str>) = entries
        .into_iter()
        .partition(|e| e.starts_with(['!', '-', '+']));
    let mut files = Vec::new();
    for entry in sources {
        let paths = if entry.contains(['*', '?']) {
            expand(dir, entry)
        } else {
            vec![dir.join(entry)]
        };
        for path in paths {
            if path.is_file() {
                files.push(path);
            } else if path.is_dir() {
                files.extend(folder_entries(&path));
            }
        }
    }
    let dropped = |file: &PathBuf| {
        let relative = file.strip_prefix(dir).unwrap_or(file).to_string_lossy();
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        drops.iter().any(|d| {
            let pattern = d.trim_start_matches(['!', '-', '+']);
            !d.starts_with('+') && (matches(pattern, &relative) || matches(pattern, &name))
        })
    };
    files.retain(|f| !dropped(f));
    files.dedup();
    files
}

/// Whether the package depends on one of pi's packages.
pub fn depends_on_pi(package: &serde_json::Value) -> bool {
    ["dependencies", "peerDependencies", "devDependencies"]
        .iter()
        .filter_map(|field| package.get(field)?.as_object())
        .flat_map(|deps| deps.keys())
        .any(|name| PI_SCOPES.iter().any(|scope| name.starts_with(scope)))
}

/// The extensions of one folder, as pi finds them there.
fn folder_entries(dir: &Path) -> Vec<PathBuf> {
    if let Some(own) = own_entries(dir) {
        return own;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| visible(p) && p.file_name().is_some_and(|n| n != "node_modules"))
        .collect();
    names.sort();
    let mut files = Vec::new();
    for path in names {
        if path.is_file() && is_script(&path) {
            files.push(path);
        } else if path.is_dir() {
            files.extend(own_entries(&path).unwrap_or_default());
        }
    }
    files
}

/// A folder's own entries: its `package.json`'s `pi.extensions` (those
/// that exist), else its `index.ts` or `index.js`.
fn own_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    let package = std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let declared: Vec<PathBuf> = package
        .as_ref()
        .and_then(|p| p.get("pi")?.get("extensions")?.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.as_str())
        .map(|e| dir.join(e))
        .filter(|p| p.exists())
        .collect();
    if !declared.is_empty() {
        return Some(declared);
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .map(|p| vec![p])
}

fn is_script(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ts" || e == "js")
}

fn visible(path: &Path) -> bool {
    !path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// The paths under `dir` that `pattern` matches (`*` and `?` within a
/// name, `**` across folders), sorted, none through a dot path.
fn expand(dir: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(dir, 0, &mut |path| {
        let relative = path.strip_prefix(dir).unwrap_or(path).to_string_lossy();
        if matches(pattern, &relative) {
            found.push(path.to_path_buf());
        }
    });
    found.sort();
    found
}

fn walk(dir: &Path, depth: usize, visit: &mut impl FnMut(&Path)) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for path in read.filter_map(|e| e.ok().map(|e| e.path())) {
        if !visible(&path) {
            continue;
        }
        visit(&path);
        if path.is_dir() && depth < 8 && path.file_name().is_some_and(|n| n != "node_modules") {
            walk(&path, depth + 1, visit);
        }
    }
}

/// Whether `path` (`/`-separated) matches the glob `pattern`.
fn matches(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.trim_start_matches("./").split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    segments(&pattern, &path)
}

fn segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| segments(rest, &path[skip..])),
        Some((first, rest)) => path.split_first().is_some_and(|(name, tail)| {
            name_matches(first.as_bytes(), name.as_bytes()) && segments(rest, tail)
        }),
    }
}

fn name_matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| name_matches(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && name_matches(rest, &name[1..]),
        Some((c, rest)) => name.first() == Some(c) && name_matches(rest, &name[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn names(dir: &Path, found: Vec<PathBuf>) -> Vec<String> {
        found
            .iter()
            .map(|p| p.strip_prefix(dir).unwrap().to_string_lossy().into_owned())
            .collect()
    }

    fn read(dir: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(dir.join("package.json")).unwrap_or_default();
        let package = serde_json::from_str(&text).ok();
        names(dir, pi_extensions(dir, package.as_ref()))
    }

    #[test]
    fn every_listed_entry_folder_and_glob_is_an_extension() {
        let dir = package(&[
            (
                "package.json",
                r#"{"pi": {"extensions": ["./a.ts", "./tools", "./more/*.ts", "!**/skip.ts"]}}"#,
            ),
            ("a.ts", ""),
            ("tools/x.ts", ""),
            ("tools/y.js", ""),
            ("tools/notes.md", ""),
            ("tools/sub/index.ts", ""),
            ("more/b.ts", ""),
            ("more/skip.ts", ""),
            ("more/.hidden.ts", ""),
        ]);
        assert_eq!(
            read(dir.path()),
            [
                "a.ts",
                "tools/sub/index.ts",
                "tools/x.ts",
                "tools/y.js",
                "more/b.ts"
            ]
        );
    }

    #[test]
    fn a_conventional_extensions_folder_counts_without_a_pi_field() {
        let dir = package(&[
            ("package.json", r#"{"name": "p"}"#),
            ("extensions/one.ts", ""),
            ("extensions/two/index.ts", ""),
        ]);
        assert_eq!(
            read(dir.path()),
            ["extensions/one.ts", "extensions/two/index.ts"]
        );
        let folder = package(&[("extensions/index.ts", ""), ("extensions/other.ts", "")]);
        assert_eq!(read(folder.path()), ["extensions/index.ts"]);
    }

    #[test]
    fn a_pi_field_listing_other_resources_has_no_extensions() {
        let dir = package(&[
            ("package.json", r#"{"pi": {"skills": ["./skills"]}}"#),
            ("extensions/one.ts", ""),
        ]);
        assert!(read(dir.path()).is_empty());
        let bare = package(&[("index.ts", "")]);
        assert!(read(bare.path()).is_empty());
    }

    #[test]
    fn a_package_depending_on_pi_is_a_pi_package() {
        let yes = serde_json::json!({"peerDependencies": {"@earendil-works/pi-coding-agent": "*"}});
        let old = serde_json::json!({"devDependencies": {"@mariozechner/pi-ai": "*"}});
        let no = serde_json::json!({"dependencies": {"left-pad": "*"}});
        assert!(depends_on_pi(&yes) && depends_on_pi(&old) && !depends_on_pi(&no));
    }
}
