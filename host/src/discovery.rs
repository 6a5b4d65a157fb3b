//! Finding plugins in a directory.
//!
//! Each entry of the directory is one plugin:
//! - a file: `*.so`/`*.dylib`/`*.dll` (Rust dylib), `*.wasm` (component),
//!   `*.ts`/`*.mts`/`*.js`/`*.mjs` (TypeScript or JavaScript), `*.py`
//!   (Python). A lone file has no manifest: put it in a folder beside a
//!   `plugin.toml` to give it one;
//! - a folder with a `plugin.toml`, or with an obvious entry (`index.ts`,
//!   `index.js`, `__init__.py`, a `package.json` with a `pi` field, or an
//!   npm package's `main`).
//!
//! Entries that are plainly not plugins are passed over: hidden names,
//! `node_modules`, `__pycache__`, `target`, Markdown and text files,
//! TypeScript declarations (`*.d.ts`), `tsconfig.json`, `package.json` and
//! `package-lock.json`. Anything else is reported as refused, with the kinds
//! the host knows.

use crate::error::LoadError;
use crate::manifest::{Ecosystem, Manifest, MANIFEST_FILE};
use crate::plugin::EngineKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A plugin found on disk, not loaded yet.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its name: the manifest's, else the file stem or folder name.
    pub name: String,
    /// The file or folder in the plugin directory.
    pub root: PathBuf,
    /// The file the engine loads.
    pub entry: PathBuf,
    /// The engine that runs it.
    pub engine: EngineKind,
    /// Its manifest (defaults when it has none).
    pub manifest: Manifest,
    /// Whether the manifest set the name.
    pub named_by_manifest: bool,
    /// Its API: the manifest's, else detected from the source's imports.
    pub ecosystem: Ecosystem,
    /// Sizes and times of its files, to tell whether it changed.
    pub fingerprint: Fingerprint,
}

impl Candidate {
    /// The folder relative paths in the manifest are resolved against.
    pub fn base_dir(&self) -> &Path {
        if self.root.is_dir() {
            &self.root
        } else {
            self.root.parent().unwrap_or(Path::new("."))
        }
    }
}

/// What the files of a plugin looked like when it was found.
pub type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// One entry of the directory: a plugin to load, or why it cannot be one.
#[derive(Debug)]
pub enum Found {
    /// A plugin to load.
    Plugin(Box<Candidate>),
    /// Not loadable; the name is the file stem or folder name.
    Refused {
        /// The entry's name.
        name: String,
        /// The entry.
        file: PathBuf,
        /// Why.
        reason: LoadError,
    },
}

/// Every entry of `dir`, sorted by file name.
pub fn scan(dir: &Path) -> std::io::Result<Vec<Found>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !passed_over(p))
        .collect();
    entries.sort();
    Ok(entries.into_iter().map(|path| inspect(&path)).collect())
}

/// A quick summary of the directory's top level, to notice a change
/// without a watcher's help.
pub fn top_level_fingerprint(dir: &Path) -> Fingerprint {
    let mut out: Fingerprint = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| !passed_over(p))
                .map(|p| stat(&p))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn stat(path: &Path) -> (PathBuf, u64, Option<SystemTime>) {
    let meta = std::fs::metadata(path).ok();
    (
        path.to_path_buf(),
        meta.as_ref().map_or(0, |m| m.len()),
        meta.and_then(|m| m.modified().ok()),
    )
}

fn passed_over(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with('.')
        || matches!(
            name,
            "node_modules"
                | "__pycache__"
                | "target"
                | "tsconfig.json"
                | "package.json"
                | "package-lock.json"
        )
        || name.ends_with(".md")
        || name.ends_with(".txt")
        || name.ends_with(".d.ts")
}

/// The engine for a file, by its extension.
pub fn engine_for(path: &Path) -> Option<EngineKind> {
    match path.extension()?.to_str()? {
        "so" | "dylib" | "dll" => Some(EngineKind::Dylib),
        "wasm" => Some(EngineKind::Wasm),
        "ts" | "mts" | "js" | "mjs" => Some(EngineKind::Js),
        "py" => Some(EngineKind::Python),
        _ => None,
    }
}

fn stem_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plugin")
        .to_string();
    // `libfoo.so` is the plugin `foo`.
    match path.extension().and_then(|e| e.to_str()) {
        Some("so" | "dylib") => stem.strip_prefix("lib").unwrap_or(&stem).to_string(),
        _ => stem,
    }
}

fn inspect(path: &Path) -> Found {
    let name = stem_name(path);
    let refused = |reason: LoadError| Found::Refused {
        name: name.clone(),
        file: path.to_path_buf(),
        reason,
    };
    if path.is_dir() {
        return match inspect_folder(path) {
            Ok(candidate) => Found::Plugin(Box::new(candidate)),
            Err(reason) => refused(reason),
        };
    }
    match engine_for(path) {
        Some(engine) => Found::Plugin(Box::new(candidate(
            name.clone(),
            path,
            path.to_path_buf(),
            engine,
            Manifest::default(),
            vec![stat(path)],
        ))),
        None => refused(LoadError::UnknownFile(path.to_path_buf())),
    }
}

fn inspect_folder(dir: &Path) -> Result<Candidate, LoadError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest = Manifest::read(&manifest_path)?;
    let entry = match &manifest.entry {
        Some(entry) => {
            let entry = dir.join(entry);
            if !entry.is_file() {
                return Err(LoadError::Invalid {
                    path: manifest_path,
                    message: format!("`entry` names {}, which does not exist", entry.display()),
                });
            }
            entry
        }
        None => obvious_entry(dir, manifest_path.is_file())
            .ok_or_else(|| LoadError::UnknownFile(dir.to_path_buf()))?,
    };
    let engine = engine_for(&entry).ok_or_else(|| LoadError::UnknownFile(entry.clone()))?;
    let folder_name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("plugin")
        .to_string();
    let mut fingerprint = Vec::new();
    collect_files(dir, &mut fingerprint, 0);
    fingerprint.sort();
    Ok(candidate(
        folder_name,
        dir,
        entry,
        engine,
        manifest,
        fingerprint,
    ))
}

fn candidate(
    default_name: String,
    root: &Path,
    entry: PathBuf,
    engine: EngineKind,
    manifest: Manifest,
    fingerprint: Fingerprint,
) -> Candidate {
    let ecosystem = manifest
        .ecosystem
        .unwrap_or_else(|| detect_ecosystem(root, &entry, engine));
    Candidate {
        named_by_manifest: manifest.name.is_some(),
        name: manifest.name.clone().unwrap_or(default_name),
        root: root.to_path_buf(),
        entry,
        engine,
        manifest,
        ecosystem,
        fingerprint,
    }
}

/// The entry of a folder without `entry` in its manifest.
fn obvious_entry(dir: &Path, has_manifest: bool) -> Option<PathBuf> {
    for name in [
        "index.ts",
        "index.mts",
        "index.js",
        "index.mjs",
        "__init__.py",
    ] {
        let path = dir.join(name);
        if path.is_file() {
            return Some(path);
        }
    }
    if let Some(entry) = pi_package_entry(dir).or_else(|| package_main(dir)) {
        return Some(entry);
    }
    if !has_manifest {
        return None;
    }
    // With a manifest, the folder's only plugin file is its entry.
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && engine_for(p).is_some() && !passed_over(p))
        .collect();
    (files.len() == 1).then(|| files.remove(0))
}

/// The first extension a pi package's `package.json` names.
fn pi_package_entry(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let package: serde_json::Value = serde_json::from_str(&text).ok()?;
    let pi = package.get("pi")?;
    let first = pi
        .get("extensions")
        .and_then(|e| e.as_array())
        .and_then(|list| list.first())
        .and_then(|e| e.as_str())
        .unwrap_or("index.ts");
    let path = dir.join(first);
    if path.is_dir() {
        ["index.ts", "index.js"]
            .iter()
            .map(|n| path.join(n))
            .find(|p| p.is_file())
    } else {
        path.is_file().then_some(path)
    }
}

/// The file an npm package's `package.json` names as its `main`, if it is
/// a script inside the folder (a DSH tool package, for one).
fn package_main(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let package: serde_json::Value = serde_json::from_str(&text).ok()?;
    let main = dir.join(package.get("main")?.as_str()?);
    let inside = main
        .canonicalize()
        .ok()?
        .starts_with(dir.canonicalize().ok()?);
    (inside && main.is_file() && engine_for(&main) == Some(EngineKind::Js)).then_some(main)
}

fn collect_files(dir: &Path, out: &mut Fingerprint, depth: usize) {
    if depth > 8 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for path in rd.filter_map(|e| e.ok().map(|e| e.path())) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if matches!(name, "node_modules" | "__pycache__" | "target") || name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect_files(&path, out, depth + 1);
        } else {
            out.push(stat(&path));
        }
    }
}

/// The ecosystem a source file is written for, from the packages it
/// imports. Only script sources are read; everything else is yohost's own.
pub fn detect_ecosystem(root: &Path, entry: &Path, engine: EngineKind) -> Ecosystem {
    if engine != EngineKind::Js {
        return Ecosystem::Yohost;
    }
    if root.is_dir() && root.join("package.json").is_file() && pi_package_entry(root).is_some() {
        return Ecosystem::Pi;
    }
    let source = std::fs::read_to_string(entry).unwrap_or_default();
    detect_ecosystem_in(&source)
}

/// The ecosystem a JS/TS source is written for, from its imports.
pub fn detect_ecosystem_in(source: &str) -> Ecosystem {
    const PI: [&str; 2] = ["@earendil-works/pi-", "@mariozechner/pi-"];
    if PI.iter().any(|p| source.contains(p)) {
        Ecosystem::Pi
    } else if source.contains("@deepseek-ai/dsh") {
        Ecosystem::Dsh
    } else {
        Ecosystem::Yohost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                Found::Refused { name, reason, .. } => refused.push((name, reason.to_string())),
            }
        }
        assert_eq!(
            plugins,
            [
                ("guard".to_string(), EngineKind::Python, Ecosystem::Yohost),
                ("tsplugin".to_string(), EngineKind::Js, Ecosystem::Pi)
            ]
        );
        assert_eq!(refused.len(), 2);
        assert!(
            refused[0].1.contains("malformed plugin.toml"),
            "{refused:?}"
        );
        assert!(refused[1].1.contains("not a plugin"), "{refused:?}");
    }
}
