//! `yohost.lock`: what each plugin of a directory was when it was locked,
//! and the locked load, which runs only that.
//!
//! The lock file lies in the plugin directory (the host passes over it when
//! it looks for plugins). For each plugin it records the name, where it came
//! from (`npm:NAME@VERSION`, or `path:…` for a folder or a `.tgz`, or
//! `local` for what the directory held), npm's integrity hash when there is
//! one, and a SHA-256 of each of its files and of them all. The packages
//! it depends on are recorded one hash per package: each folder
//! `node_modules/NAME` (or `node_modules/@SCOPE/NAME`) under the plugin's
//! folder is one entry, `node_modules/NAME/`, the hash of its files' paths
//! and hashes, so a change in one is named by its package.
//!
//! A plugin's files are everything in its folder (the file alone for a
//! single-file plugin), `node_modules` included, but not `.git`,
//! `__pycache__`, its top-level `target/`, symbolic links, or the folders
//! its manifest grants for reading or writing (data, not code); plus its
//! entry when that lies outside them (a library under `target/`).
//!
//! **The locked load.** Under a locked host (`PluginHostBuilder::locked`) a
//! plugin loads from a private copy (`snapshot`): each of its files is
//! read once, hashed, and written into a fresh folder only this user can
//! write; the hashes are compared with the lock, and the plugin is loaded
//! from that copy, its manifest read again from the copy. So the bytes that
//! were hashed are the bytes that run: a file swapped after the copy is
//! never read, and one swapped before it is refused. Grants still name the
//! plugin's own folder (they are made absolute against it).

use crate::call::error::CallError;
use crate::call::plugin::{Plugin, PluginRun};
use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::manifest::{Manifest, MANIFEST_FILE};
use crate::load::private_dir::cache_folder;
use crate::load::source::read_bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use yohost_contract::RunInfo;

/// The lock file's name, in the plugin directory.
pub const LOCK_FILE: &str = "yohost.lock";

/// The largest plugin file a lock hashes: 256 MiB.
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The lock file: one entry per plugin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    /// The format's version: 1.
    pub version: u32,
    /// The locked plugins, by name.
    #[serde(default, rename = "plugin")]
    pub plugins: Vec<Locked>,
}

/// One locked plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// Its name, as the host names it.
    pub name: String,
    /// Where it came from: `npm:NAME@VERSION`, `path:PATH`, or `local`.
    pub source: String,
    /// npm's integrity hash of its tarball, when it came from npm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<String>,
    /// `sha256:` and the hash of all its files (see [`Hashed::total`]).
    pub hash: String,
    /// Each file, by its path in the plugin's folder, and each package it
    /// depends on (`node_modules/NAME/`), with its SHA-256.
    pub files: BTreeMap<String, String>,
}

/// A plugin's files and their hashes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hashed {
    /// Each file's SHA-256 (hex), by its path (`/`-separated) in the
    /// plugin's folder (an entry outside it is named `entry:FILE`), and each
    /// package under its `node_modules` as one entry (see the module docs).
    pub files: BTreeMap<String, String>,
}

/// Files gathered one by one, the ones of a package under `node_modules`
/// by package, until [`Gathered::hashed`] folds each package into one hash.
#[derive(Default)]
struct Gathered {
    files: BTreeMap<String, String>,
    packages: BTreeMap<String, BTreeMap<String, String>>,
}

impl Gathered {
    /// Record the file at `relative` with its bytes' hash.
    fn add(&mut self, relative: &str, bytes: &[u8]) {
        let hash = sha256(bytes);
        match package_of(relative) {
            Some((package, inside)) => {
                self.packages
                    .entry(package.to_string())
                    .or_default()
                    .insert(inside.to_string(), hash);
            }
            None => {
                self.files.insert(relative.to_string(), hash);
            }
        }
    }

    /// Every file and every package, with its hash.
    fn hashed(self) -> Hashed {
        let mut files = self.files;
        for (package, inside) in self.packages {
            files.insert(
                package,
                Hashed { files: inside }.total()["sha256:".len()..].into(),
            );
        }
        Hashed { files }
    }
}

/// The package folder (`node_modules/NAME/` or `node_modules/@SCOPE/NAME/`)
/// that `relative` lies in, and its path inside it.
fn package_of(relative: &str) -> Option<(&str, &str)> {
    let rest = relative.strip_prefix("node_modules/")?;
    let depth = if rest.starts_with('@') { 2 } else { 1 };
    let mut end = "node_modules/".len();
    for _ in 0..depth {
        end += relative[end..].find('/')? + 1;
    }
    Some((&relative[..end], &relative[end..]))
}

impl Hashed {
    /// `sha256:` and the SHA-256 of every file's path and hash, in order.
    pub fn total(&self) -> String {
        let mut all = Sha256::new();
        for (path, hash) in &self.files {
            all.update(path.as_bytes());
            all.update([0]);
            all.update(hash.as_bytes());
            all.update([b'\n']);
        }
        format!("sha256:{}", hex(&all.finalize()))
    }

    /// What differs from `locked`, naming the files: `index.ts changed`,
    /// `extra.js was added`, `old.js was removed`; `None` when nothing does.
    pub fn differences(&self, locked: &BTreeMap<String, String>) -> Option<String> {
        let mut out = Vec::new();
        for (path, hash) in &self.files {
            match locked.get(path) {
                Some(was) if was == hash => {}
                Some(_) => out.push(format!("{path} changed")),
                None => out.push(format!("{path} was added")),
            }
        }
        out.extend(
            locked
                .keys()
                .filter(|path| !self.files.contains_key(*path))
                .map(|path| format!("{path} was removed")),
        );
        (!out.is_empty()).then(|| out.join(", "))
    }
}

impl Lockfile {
    /// The lock file of `dir`; an empty one when it has none.
    pub fn read(dir: &Path) -> Result<Lockfile, String> {
        let path = dir.join(LOCK_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lockfile {
                version: 1,
                plugins: Vec::new(),
            }),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Write it into `dir`, plugins in the order of their names.
    pub fn write(&mut self, dir: &Path) -> Result<(), String> {
        self.version = 1;
        self.plugins.sort_by(|a, b| a.name.cmp(&b.name));
        let text = toml::to_string(self).map_err(|e| e.to_string())?;
        let header = "# yohost.lock: what each plugin of this directory was when it was locked.\n# Written by `yohost add` and `yohost lock`; `yohost check --locked` and a\n# locked host refuse a plugin whose files differ, or that is not listed.\n\n";
        let path = dir.join(LOCK_FILE);
        std::fs::write(&path, format!("{header}{text}"))
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The entry of the plugin `name`.
    pub fn get(&self, name: &str) -> Option<&Locked> {
        self.plugins.iter().find(|p| p.name == name)
    }

    /// Set `entry`, replacing the plugin's entry of the same name.
    pub fn set(&mut self, entry: Locked) {
        self.plugins.retain(|p| p.name != entry.name);
        self.plugins.push(entry);
    }
}

/// The hashes of `candidate`'s files as they are now.
pub fn hash_plugin(candidate: &Candidate) -> Result<Hashed, String> {
    let mut gathered = Gathered::default();
    walk(candidate, &mut |relative, bytes| {
        gathered.add(relative, &bytes);
        Ok(())
    })?;
    Ok(gathered.hashed())
}

/// Copy `candidate` into a private folder, hashing each file's bytes as it
/// copies them, and compare them with its entry in `lock`: the candidate
/// to load (its folder, entry and manifest the copy's, its grants absolute
/// against its own folder), and the folder, removed when dropped.
pub(crate) fn snapshot(
    candidate: &Candidate,
    lock: &Lockfile,
) -> Result<(Candidate, tempfile::TempDir), LoadError> {
    let refuse = |problem: String| LoadError::Locked {
        path: candidate.root.clone(),
        problem,
    };
    let locked = lock.get(&candidate.name).ok_or_else(|| {
        refuse(format!(
            "`{}` is not in {LOCK_FILE}: add it with `yohost add` or `yohost lock`",
            candidate.name
        ))
    })?;
    let private = cache_folder("locked").map_err(|e| refuse(e.to_string()))?;
    let copy = tempfile::Builder::new()
        .prefix("plugin-")
        .tempdir_in(private)
        .map_err(|e| refuse(format!("cannot make its private copy: {e}")))?;
    // A folder plugin is copied to `copy/`, a single file into it.
    let root = if candidate.root.is_dir() {
        copy.path().join("plugin")
    } else {
        copy.path().to_path_buf()
    };
    let mut gathered = Gathered::default();
    let mut entry_copy = None;
    walk(candidate, &mut |relative, bytes| {
        let target = match relative.strip_prefix("entry:") {
            Some(file) => copy.path().join(".entry").join(file),
            None => root.join(relative),
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&target, &bytes).map_err(|e| format!("{}: {e}", target.display()))?;
        keep_executable(candidate, relative, &target)?;
        if entry_path(candidate, relative) {
            entry_copy = Some(target);
        }
        gathered.add(relative, &bytes);
        Ok(())
    })
    .map_err(&refuse)?;
    if let Some(why) = gathered.hashed().differences(&locked.files) {
        return Err(refuse(format!("its files differ from {LOCK_FILE}: {why}")));
    }
    let mut loaded = candidate.clone();
    loaded.root = if candidate.root.is_dir() {
        root.clone()
    } else {
        entry_copy.clone().unwrap_or_else(|| root.clone())
    };
    loaded.entry = entry_copy.ok_or_else(|| refuse("its entry is not among its files".into()))?;
    if candidate.root.is_dir() {
        // The manifest that counts is the one that was hashed.
        let manifest =
            Manifest::read(&root.join(MANIFEST_FILE)).map_err(|e| refuse(e.to_string()))?;
        let expected = candidate
            .manifest_as_read
            .as_deref()
            .unwrap_or(&candidate.manifest);
        if manifest != *expected {
            return Err(refuse(format!(
                "its {MANIFEST_FILE} changed while it loaded"
            )));
        }
    }
    let base = candidate.base_dir().to_path_buf();
    let absolute = |paths: &mut Vec<PathBuf>| {
        for path in paths.iter_mut() {
            *path = base.join(&*path);
        }
    };
    absolute(&mut loaded.manifest.capabilities.read);
    absolute(&mut loaded.manifest.capabilities.write);
    Ok((loaded, copy))
}

/// Make the copy `target` of `candidate`'s file `relative` executable (by
/// this user alone) if the file is: a program the plugin starts (a
/// virtualenv's `python`, a script) runs from the copy as from the
/// original.
fn keep_executable(candidate: &Candidate, relative: &str, target: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let original = match relative.strip_prefix("entry:") {
        Some(_) => candidate.entry.clone(),
        None if candidate.root.is_dir() => candidate.root.join(relative),
        None => candidate.root.clone(),
    };
    let executable =
        std::fs::metadata(&original).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if executable {
        std::fs::set_permissions(target, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("{}: {e}", target.display()))?;
    }
    Ok(())
}

/// A plugin loaded from a private copy, which lives as long as it does.
pub(crate) struct FromCopy {
    /// The plugin.
    pub(crate) plugin: Arc<dyn Plugin>,
    /// The copy it was loaded from.
    pub(crate) _copy: tempfile::TempDir,
}

#[async_trait::async_trait]
impl Plugin for FromCopy {
    async fn open_run(&self, run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        self.plugin.open_run(run).await
    }
}

/// Whether `relative` (as [`walk`] names it) is `candidate`'s entry.
fn entry_path(candidate: &Candidate, relative: &str) -> bool {
    match relative.strip_prefix("entry:") {
        Some(_) => true,
        None if candidate.root.is_dir() => candidate.root.join(relative) == candidate.entry,
        None => true,
    }
}

/// What [`walk`] calls with each file: its path and its bytes.
type EachFile<'a> = dyn FnMut(&str, Vec<u8>) -> Result<(), String> + 'a;

/// Call `each` with every file of `candidate` (see the module docs): its
/// path (`/`-separated, or `entry:FILE` for an entry outside its folder)
/// and its bytes, read once.
fn walk(candidate: &Candidate, each: &mut EachFile<'_>) -> Result<(), String> {
    let read = |path: &Path| {
        read_bytes(path, MAX_FILE_BYTES).map_err(|e| format!("{}: {e}", path.display()))
    };
    if !candidate.root.is_dir() {
        let name = candidate
            .root
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        return each(&name, read(&candidate.root)?);
    }
    let base = &candidate.root;
    let data = crate::load::grants::data_folders(base, &candidate.manifest.capabilities);
    let mut entry_seen = false;
    let mut stack = vec![base.clone()];
    while let Some(folder) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&folder)
            .map_err(|e| format!("{}: {e}", folder.display()))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name();
            let name_text = name.to_string_lossy();
            let path = entry.path();
            let top = folder == *base;
            if matches!(&*name_text, ".git" | "__pycache__")
                || (top && name_text == "target")
                || data.contains(&path)
            {
                continue;
            }
            // A symbolic link is neither hashed nor copied: what it leads to
            // is not the plugin's, and a load that needs it fails.
            let kind = entry.file_type().map_err(|e| e.to_string())?;
            let relative = path.strip_prefix(base).unwrap_or(&path);
            let relative = relative.to_string_lossy().replace('\\', "/");
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                entry_seen |= path == candidate.entry;
                each(&relative, read(&path)?)?;
            } else if !kind.is_symlink() {
                // A device node, FIFO or socket: its bytes cannot be
                // hashed, and a device reaches past every grant.
                return Err(format!(
                    "{relative} is a device, FIFO or socket: a locked plugin holds regular files, folders and links only"
                ));
            }
        }
    }
    if !entry_seen {
        let name = candidate
            .entry
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        each(&format!("entry:{name}"), read(&candidate.entry)?)?;
    }
    Ok(())
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
