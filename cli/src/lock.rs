//! `yohost lock [DIR]`, and the lock entries `add` and `remove` keep.

use crate::add::Source;
use crate::output::escaped;
use crate::progress::{self, Step};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use yohost::adapter::{Candidate, Found};
use yohost::lockfile::{hash_plugin, Locked, Lockfile};

/// Arguments of `yohost lock`.
#[derive(clap::Args)]
pub struct LockArgs {
    /// The plugin directory.
    #[arg(default_value = "plugins")]
    dir: PathBuf,
}

/// Lock every plugin of `args.dir` as it is now: a plugin already in the
/// lock keeps its source; one that is not is recorded as `local`.
pub fn lock(args: LockArgs) -> Result<ExitCode, String> {
    let mut lock = Lockfile::read(&args.dir)?;
    let mut locked = Lockfile::default();
    let dir_shown = escaped(&args.dir.display().to_string()).into_owned();
    let step = Step::start(format!("finding the plugins of {dir_shown}"));
    for candidate in candidates(&args.dir)? {
        let (source, integrity) = match lock.get(&candidate.name) {
            Some(was) => (was.source.clone(), was.integrity.clone()),
            None => ("local".to_string(), None),
        };
        let name = escaped(&candidate.name).into_owned();
        step.set_message(format!("hashing {name} in {dir_shown} for yohost.lock"));
        locked.set(entry(&candidate, source, integrity)?);
        progress::suspend(|| println!("locked {}", candidate.name));
    }
    lock.plugins = locked.plugins;
    lock.write(&args.dir)?;
    drop(step);
    println!(
        "{} plugins in {}",
        lock.plugins.len(),
        args.dir.join(yohost::lockfile::LOCK_FILE).display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Lock the plugin in the folder `folder` of `dir`, which came from `source`.
pub fn record(dir: &Path, folder: &str, source: &Source) -> Result<(), String> {
    let root = dir.join(folder);
    let candidate = candidates(dir)?
        .into_iter()
        .find(|c| c.root == root)
        .ok_or_else(|| format!("{} holds no plugin the host finds", root.display()))?;
    let (source, integrity) = match source {
        Source::Npm {
            name,
            version,
            integrity,
        } => (format!("npm:{name}@{version}"), integrity.clone()),
        Source::Pypi { name, version } => (format!("pypi:{name}=={version}"), None),
        Source::Path(path) => (format!("path:{}", path.display()), None),
    };
    let mut lock = Lockfile::read(dir)?;
    lock.set(entry(&candidate, source, integrity)?);
    lock.write(dir)
}

/// Drop the plugin `name` from the lock of `dir`, if it has one.
pub fn forget(dir: &Path, name: &str) -> Result<(), String> {
    if !dir.join(yohost::lockfile::LOCK_FILE).exists() {
        return Ok(());
    }
    let mut lock = Lockfile::read(dir)?;
    lock.plugins.retain(|p| p.name != name);
    lock.write(dir)
}

/// The lock entry of `candidate` as its files are now.
fn entry(
    candidate: &Candidate,
    source: String,
    integrity: Option<String>,
) -> Result<Locked, String> {
    let hashed = hash_plugin(candidate)?;
    Ok(Locked {
        name: candidate.name.clone(),
        source,
        integrity,
        hash: hashed.total(),
        files: hashed.files,
    })
}

/// The plugins the host finds in `dir`.
fn candidates(dir: &Path) -> Result<Vec<Candidate>, String> {
    let found = crate::adapter_table()
        .scan(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    Ok(found
        .into_iter()
        .filter_map(|f| match f {
            Found::Plugin(candidate) => Some(*candidate),
            Found::Refused { .. } => None,
        })
        .collect())
}
