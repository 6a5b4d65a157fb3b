//! Finding plugins in a directory.
//!
//! Each entry of the directory is one plugin:
//! - a file: `*.so`/`*.dylib`/`*.dll` (Rust dylib), `*.wasm` (component),
//!   `*.ts`/`*.mts`/`*.js`/`*.mjs` (TypeScript or JavaScript), `*.py`
//!   (Python). A lone file has no manifest: put it in a folder beside a
//!   `plugin.toml` to give it one;
//! - a folder with a `plugin.toml`, or with an obvious entry (`index.ts`,
//!   `index.js`, `__init__.py`, or an npm package's `main`);
//! - whatever a registered adapter recognises as its own
//!   ([`Adapter::discover`](crate::adapter::Adapter::discover) for files
//!   such as an MCP configuration,
//!   [`Adapter::folder_entry`](crate::adapter::Adapter::folder_entry) for
//!   folders such as a pi package), asked before the host's own rules.
//!
//! Entries that are plainly not plugins are passed over
//! ([`crate::load::listing`]): hidden names (unless an adapter recognises
//! one), `node_modules`, `__pycache__`, `target`, Markdown and text files,
//! TypeScript declarations (`*.d.ts`), `tsconfig.json`, `package.json` and
//! `package-lock.json`. Anything else is reported as refused, with the kinds
//! the host knows.
//!
//! Whoever writes the directory controls every name and file in it, so
//! discovery never trusts them: only regular files (after symlinks are
//! resolved) are plugin files, and a FIFO, socket or device is refused
//! without being opened; every file discovery reads goes through
//! [`crate::load::source`] (bounded, never blocking); a name that is not valid
//! UTF-8 or not a valid plugin name ([`check_name`]) is refused; folders are
//! walked without following symlinks.

use crate::load::error::LoadError;
use crate::load::fingerprint::{folder_fingerprint, stat, Fingerprint};
use crate::load::listing::{passed_over, plugin_files_below};
use crate::load::manifest::{check_name, EngineChoice, Manifest, NameError, MANIFEST_FILE};
use crate::load::source::{kind_of, read_text, ReadError};
use crate::model::limits::MAX_SOURCE_BYTES;
use crate::model::Ecosystem;
use crate::model::EngineKind;
use std::path::{Path, PathBuf};

/// A plugin found on disk, not loaded yet. Only discovery makes one, so
/// an engine or adapter is always handed a checked name and manifest.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Candidate {
    /// Its name: the manifest's, else the file stem or folder name. Always a
    /// valid name ([`check_name`]).
    pub name: String,
    /// The file or folder in the plugin directory.
    pub root: PathBuf,
    /// The file the engine loads: a regular file when it was found.
    pub entry: PathBuf,
    /// The engine that runs it.
    pub engine: EngineKind,
    /// Its manifest (defaults when it has none).
    pub manifest: Manifest,
    /// The folder's manifest as its file reads, when the adapter derived
    /// [`manifest`](Self::manifest) from it (an MCP server's
    /// `[servers.NAME]` table): what a locked load holds the locked copy's
    /// manifest to. `None` when `manifest` is the file's own.
    pub manifest_as_read: Option<Box<Manifest>>,
    /// Whether the manifest set the name.
    pub named_by_manifest: bool,
    /// Its API: the manifest's, else detected from the source's imports.
    pub ecosystem: Ecosystem,
    /// Sizes and times of its files, to tell whether it changed.
    pub fingerprint: Fingerprint,
    /// Loaded for a check ([`PluginHostBuilder::dry_run`](crate::PluginHostBuilder::dry_run)):
    /// an engine that can (the JS engine) reports the processes and file
    /// writes the plugin asks for as warnings, and performs none.
    pub dry_run: bool,
    /// Its [data folder](crate::load::data_dir), set by the host's registry.
    pub data_dir: Option<PathBuf>,
}

impl Candidate {
    /// The folder relative paths in the manifest are resolved against: a
    /// folder plugin's own folder; for a single-file plugin, the directory
    /// the file is in (it has no manifest of its own, so this only names
    /// where its module names and `ctx.pluginDir` start). Not what the
    /// plugin may read: see [`own_paths`](Self::own_paths).
    pub fn base_dir(&self) -> &Path {
        if self.root.is_dir() {
            &self.root
        } else {
            self.root.parent().unwrap_or(Path::new("."))
        }
    }

    /// The paths the plugin may read as its own, symlinks resolved: a
    /// folder plugin's folder; for a single-file plugin, the file alone and
    /// the `node_modules` folder of the directory it is in, if there is
    /// one (its packages). Everything an engine loads as the plugin's code
    /// (imports, requires, TypeScript the host strips for Node) and every
    /// path a sandbox lets it read as its own comes from this list; a path
    /// that does not resolve is left out. A single-file plugin in the
    /// plugin directory so cannot import or read another plugin's files.
    /// (A manifest's `entry` outside its folder, and its grants, are added
    /// by the engines on top.)
    pub fn own_paths(&self) -> Vec<PathBuf> {
        let mut own = vec![self.root.clone()];
        let packages = self.base_dir().join("node_modules");
        if !self.root.is_dir() && packages.is_dir() {
            own.push(packages);
        }
        own.into_iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect()
    }
}

/// One entry of the directory: a plugin to load, or why it cannot be one.
#[derive(Debug)]
pub enum Found {
    /// A plugin to load.
    Plugin(Box<Candidate>),
    /// Not loadable; the name is the file stem or folder name (with any
    /// bytes that are not UTF-8 replaced).
    Refused {
        /// The entry's name.
        name: String,
        /// The entry.
        file: PathBuf,
        /// Why.
        reason: LoadError,
    },
}

impl Found {
    /// The candidate's name, or the refused entry's.
    pub fn name(&self) -> &str {
        match self {
            Found::Plugin(candidate) => &candidate.name,
            Found::Refused { name, .. } => name,
        }
    }
}

/// An entry file an adapter proposes for a folder whose manifest names
/// none ([`Adapter::folder_entry`](crate::load::adapter::Adapter::folder_entry)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderEntry {
    /// The file, inside the folder.
    pub path: PathBuf,
    /// Whether it goes before the folder's `index.ts` and the like (a pi
    /// package's `pi` field does); else it comes after them.
    pub before_index: bool,
}

/// One entry of the plugin directory as the host's own rules read it: a
/// file of a built-in engine, or a folder with a manifest or an obvious
/// entry. `proposals` gives the entries adapters propose for a folder.
pub(crate) fn inspect(path: &Path, proposals: &dyn Fn(&Path) -> Vec<FolderEntry>) -> Found {
    let name = stem_name(path);
    match inspect_entry(path, &name, proposals) {
        Ok(candidate) => Found::Plugin(Box::new(candidate)),
        Err(reason) => Found::Refused {
            name,
            file: path.to_path_buf(),
            reason,
        },
    }
}

/// What to do about a missing `entry` that cargo builds (under a
/// `target/` folder): build it, and where cargo puts it instead when
/// `CARGO_TARGET_DIR` moves its output.
/// `entry` itself, or, when it is a build artifact under the folder's
/// `target/` that is not there and `CARGO_TARGET_DIR` is set (cargo then
/// builds into that folder instead), the same artifact there if it is: a
/// scaffold's `entry` works under any target dir.
fn built_elsewhere(entry: PathBuf) -> PathBuf {
    if entry.exists() {
        return entry;
    }
    let Some(target_dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) else {
        return entry;
    };
    let mut parts = entry.components();
    let mut before = PathBuf::new();
    for part in parts.by_ref() {
        if part.as_os_str() == "target" {
            break;
        }
        before.push(part);
    }
    let rest = parts.as_path();
    if rest.as_os_str().is_empty() || before == entry {
        return entry;
    }
    let target_dir = PathBuf::from(target_dir);
    let elsewhere = if target_dir.is_absolute() {
        target_dir.join(rest)
    } else {
        before.join(target_dir).join(rest)
    };
    if elsewhere.is_file() {
        elsewhere
    } else {
        entry
    }
}

fn build_hint(entry: &Path) -> String {
    let built = entry.components().any(|c| c.as_os_str() == "target");
    if !built {
        return String::new();
    }
    let moved = std::env::var_os("CARGO_TARGET_DIR")
        .map(|dir| {
            format!(
                "; CARGO_TARGET_DIR is set, so cargo builds into {} instead, where it is not either",
                Path::new(&dir).display()
            )
        })
        .unwrap_or_default();
    format!(": build the plugin first (`cargo build` in its folder){moved}")
}

/// The engine for a file, by its extension.
pub fn engine_for(path: &Path) -> Option<EngineKind> {
    match path.extension()?.to_str()? {
        "so" | "dylib" | "dll" => Some(EngineKind::DYLIB),
        "wasm" => Some(EngineKind::WASM),
        "ts" | "mts" | "js" | "mjs" => Some(EngineKind::JS),
        "py" => Some(EngineKind::PYTHON),
        _ => None,
    }
}

/// The name an entry gets from its file name: the folder name, or the file
/// stem (`libfoo.so` is `foo`), with bytes that are not UTF-8 replaced.
fn stem_name(path: &Path) -> String {
    let lossy = |s: Option<&std::ffi::OsStr>| {
        s.map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if path.is_dir() {
        return lossy(path.file_name());
    }
    let stem = lossy(path.file_stem());
    match path.extension().and_then(|e| e.to_str()) {
        Some("so" | "dylib") => stem.strip_prefix("lib").unwrap_or(&stem).to_string(),
        _ => stem,
    }
}

fn inspect_entry(
    path: &Path,
    name: &str,
    proposals: &dyn Fn(&Path) -> Vec<FolderEntry>,
) -> Result<Candidate, LoadError> {
    if path.file_name().and_then(|n| n.to_str()).is_none() {
        return Err(LoadError::BadName {
            path: path.to_path_buf(),
            name: name.to_string(),
            problem: NameError::NotUtf8,
        });
    }
    let meta = std::fs::metadata(path).map_err(|e| LoadError::Unreadable {
        path: path.to_path_buf(),
        problem: e.into(),
    })?;
    if meta.is_dir() {
        return inspect_folder(path, name, proposals);
    }
    if !meta.is_file() {
        return Err(LoadError::Unreadable {
            path: path.to_path_buf(),
            problem: ReadError::NotRegular(kind_of(&meta)),
        });
    }
    let engine = engine_for(path).ok_or_else(|| LoadError::UnknownFile(path.to_path_buf()))?;
    Candidate::new(
        name,
        path,
        path.to_path_buf(),
        engine,
        Manifest::default(),
        vec![stat(path)],
    )
}

fn inspect_folder(
    dir: &Path,
    folder_name: &str,
    proposals: &dyn Fn(&Path) -> Vec<FolderEntry>,
) -> Result<Candidate, LoadError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest = Manifest::read(&manifest_path).map_err(|problem| LoadError::Manifest {
        path: manifest_path.clone(),
        problem,
    })?;
    let entry = match &manifest.entry {
        Some(entry) => {
            let entry = built_elsewhere(dir.join(entry));
            match std::fs::metadata(&entry) {
                Ok(meta) if meta.is_file() => entry,
                Ok(meta) => {
                    return Err(LoadError::Unreadable {
                        path: entry,
                        problem: ReadError::NotRegular(kind_of(&meta)),
                    })
                }
                Err(_) => {
                    return Err(LoadError::Invalid {
                        path: manifest_path,
                        message: format!(
                            "`entry` names {}, which does not exist{}",
                            entry.display(),
                            build_hint(&entry)
                        ),
                    })
                }
            }
        }
        None => obvious_entry(dir, manifest_path.is_file(), proposals)?.ok_or_else(|| {
            LoadError::NoEntry {
                dir: dir.to_path_buf(),
                deeper: plugin_files_below(dir, 3, |p| engine_for(p).is_some()),
            }
        })?,
    };
    let engine = engine_for(&entry).ok_or_else(|| LoadError::UnknownFile(entry.clone()))?;
    let mut fingerprint = folder_fingerprint(dir, &manifest);
    if !entry.starts_with(dir) {
        // An entry outside the folder (a build artifact) is part of it too.
        fingerprint.push(stat(&entry));
        fingerprint.sort();
    }
    Candidate::new(folder_name, dir, entry, engine, manifest, fingerprint)
}

impl Candidate {
    /// A candidate named `default_name` unless its manifest names it
    /// (checked as a plugin name either way), for the ecosystem its
    /// manifest names, else yohost's until an adapter recognises it, on
    /// `engine`, or the engine its manifest's `engine` picks for a JS file.
    /// Discovery and adapters that discover their own files
    /// ([`Adapter::discover`](crate::load::adapter::Adapter::discover)) make
    /// candidates only through this.
    pub fn new(
        default_name: &str,
        root: &Path,
        entry: PathBuf,
        engine: EngineKind,
        manifest: Manifest,
        fingerprint: Fingerprint,
    ) -> Result<Candidate, LoadError> {
        // A manifest's name was checked when it was parsed.
        let name = match &manifest.name {
            Some(name) => name.clone(),
            None => {
                check_name(default_name).map_err(|problem| LoadError::BadName {
                    path: root.to_path_buf(),
                    name: default_name.to_string(),
                    problem,
                })?;
                default_name.to_string()
            }
        };
        let ecosystem = manifest.ecosystem.unwrap_or_default();
        let engine = match (manifest.engine, engine) {
        (EngineChoice::Auto, engine) | (EngineChoice::Embedded, engine @ EngineKind::JS) => {
            engine
        }
        (EngineChoice::Node, EngineKind::JS) => EngineKind::NODE,
        (choice @ (EngineChoice::Node | EngineChoice::Embedded), other) => {
            return Err(LoadError::Invalid {
                path: root.join(MANIFEST_FILE),
                message: format!(
                    "`engine = \"{}\"` runs JavaScript and TypeScript plugins; the entry {} is a {} plugin",
                    if choice == EngineChoice::Node { "node" } else { "embedded" },
                    entry.display(),
                    other.as_str()
                ),
            })
        }
    };
        Ok(Candidate {
            named_by_manifest: manifest.name.is_some(),
            name,
            root: root.to_path_buf(),
            entry,
            engine,
            manifest,
            manifest_as_read: None,
            ecosystem,
            fingerprint,
            dry_run: false,
            data_dir: None,
        })
    }

    /// The candidate, its manifest derived by its adapter from `read`, the
    /// folder's manifest as its file reads ([`manifest_as_read`](Self::manifest_as_read)).
    pub fn derived_from(mut self, read: Manifest) -> Candidate {
        self.manifest_as_read = Some(Box::new(read));
        self
    }
}

/// The entry of a folder without `entry` in its manifest, if it has one.
fn obvious_entry(
    dir: &Path,
    has_manifest: bool,
    proposals: &dyn Fn(&Path) -> Vec<FolderEntry>,
) -> Result<Option<PathBuf>, LoadError> {
    let package = package_json(dir)?;
    // An adapter's entry may go first (a pi package's `pi` field decides
    // before an `index.ts`, as in pi).
    let (first, after): (Vec<FolderEntry>, Vec<FolderEntry>) =
        proposals(dir).into_iter().partition(|p| p.before_index);
    if let Some(entry) = first.into_iter().next() {
        return Ok(Some(entry.path));
    }
    for name in [
        "index.ts",
        "index.mts",
        "index.js",
        "index.mjs",
        "__init__.py",
    ] {
        let path = dir.join(name);
        if path.is_file() {
            return Ok(Some(path));
        }
    }
    if let Some(entry) = after.into_iter().next() {
        return Ok(Some(entry.path));
    }
    if let Some(entry) = package.as_ref().and_then(|p| package_main(dir, p)) {
        return Ok(Some(entry));
    }
    if !has_manifest {
        return Ok(None);
    }
    // With a manifest, the folder's only plugin file is its entry.
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| LoadError::Unreadable {
            path: dir.to_path_buf(),
            problem: e.into(),
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && engine_for(p).is_some() && !passed_over(p))
        .collect();
    Ok((files.len() == 1).then(|| files.remove(0)))
}

/// The folder's `package.json`, parsed, if it has one. A `package.json`
/// that cannot be read or is not JSON refuses the folder.
fn package_json(dir: &Path) -> Result<Option<serde_json::Value>, LoadError> {
    let file = dir.join("package.json");
    let text = match read_text(&file, MAX_SOURCE_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(problem) => {
            return Err(LoadError::Unreadable {
                path: file,
                problem,
            })
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| LoadError::Invalid {
            path: file,
            message: format!("not valid JSON: {e}"),
        })
}

/// The file an npm package's `package.json` names as its `main`, if it is
/// a script inside the folder (a DSH tool package, for one).
fn package_main(dir: &Path, package: &serde_json::Value) -> Option<PathBuf> {
    let main = dir.join(package.get("main")?.as_str()?);
    let inside = main
        .canonicalize()
        .ok()?
        .starts_with(dir.canonicalize().ok()?);
    (inside && main.is_file() && engine_for(&main) == Some(EngineKind::JS)).then_some(main)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::listing::entries;

    /// The directory as the host's own rules read it, with no adapter.
    fn scan(dir: &Path) -> std::io::Result<Vec<Found>> {
        Ok(entries(dir)?
            .iter()
            .map(|path| inspect(path, &|_| Vec::new()))
            .collect())
    }

    #[test]
    fn a_missing_entry_under_target_says_to_build_it() {
        let hint = build_hint(Path::new("/p/guard/target/debug/libguard.so"));
        assert!(hint.starts_with(": build the plugin first"), "{hint}");
        if std::env::var_os("CARGO_TARGET_DIR").is_some() {
            assert!(hint.contains("CARGO_TARGET_DIR is set"), "{hint}");
        }
        assert_eq!(build_hint(Path::new("/p/guard/policy.ts")), "");
    }

    #[test]
    fn a_single_files_own_paths_are_the_file_and_the_directorys_packages() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spy.ts"), "export default {};").unwrap();
        std::fs::create_dir_all(dir.path().join("victim")).unwrap();
        std::fs::write(dir.path().join("victim/index.ts"), "export default {};").unwrap();
        let real = |p: &str| dir.path().join(p).canonicalize().unwrap();
        let own = |name: &str| {
            scan(dir.path())
                .unwrap()
                .into_iter()
                .find_map(|f| match f {
                    Found::Plugin(c) if c.name == name => Some(c.own_paths()),
                    _ => None,
                })
                .unwrap()
        };
        assert_eq!(own("spy"), [real("spy.ts")]);
        assert_eq!(own("victim"), [real("victim")]);
        std::fs::create_dir(dir.path().join("node_modules")).unwrap();
        assert_eq!(own("spy"), [real("spy.ts"), real("node_modules")]);
    }

    #[test]
    fn files_map_to_engines_and_unknown_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "a.ts", "b.py", "libc.so", "d.wasm", "notes.md", "junk.bin", ".hidden",
        ] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let found = scan(dir.path()).unwrap();
        let summary: Vec<String> = found
            .iter()
            .map(|f| match f {
                Found::Plugin(c) => format!("{}:{}", c.name, c.engine.as_str()),
                Found::Refused { name, .. } => format!("{name}:refused"),
            })
            .collect();
        assert_eq!(
            summary,
            ["a:js", "b:python", "d:wasm", "junk:refused", "c:dylib"]
        );
    }

    #[test]
    fn folders_use_their_manifest_or_obvious_entry() {
        let dir = tempfile::tempdir().unwrap();
        let named = dir.path().join("named");
        std::fs::create_dir(&named).unwrap();
        std::fs::write(named.join("plugin.toml"), "name = \"guard\"\npriority = 1").unwrap();
        std::fs::write(named.join("main.py"), "").unwrap();
        let index = dir.path().join("tsplugin");
        std::fs::create_dir(&index).unwrap();
        std::fs::write(
            index.join("index.ts"),
            "import { Type } from \"@earendil-works/pi-ai\";",
        )
        .unwrap();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let broken = dir.path().join("broken");
        std::fs::create_dir(&broken).unwrap();
        std::fs::write(broken.join("plugin.toml"), "mode = 3").unwrap();

        let found = scan(dir.path()).unwrap();
        let mut plugins = Vec::new();
        let mut refused = Vec::new();
        for f in found {
            match f {
                Found::Plugin(c) => plugins.push((c.name.clone(), c.engine, c.ecosystem)),
                Found::Refused { name, reason, .. } => refused.push((name, reason)),
            }
        }
        assert_eq!(
            plugins,
            [
                ("guard".to_string(), EngineKind::PYTHON, Ecosystem::YOHOST),
                // Until an adapter recognises it.
                ("tsplugin".to_string(), EngineKind::JS, Ecosystem::YOHOST)
            ]
        );
        assert_eq!(refused.len(), 2);
        assert!(
            matches!(refused[0].1, LoadError::Manifest { .. }),
            "{refused:?}"
        );
        assert!(
            matches!(refused[1].1, LoadError::NoEntry { .. }),
            "{refused:?}"
        );
    }
}
