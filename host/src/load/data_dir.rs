//! Each plugin's data folder: a folder of its own, outside the plugin
//! directory, where it keeps what it writes across runs and reloads (a
//! counter, a cache, an MCP server's database). Every plugin, of every
//! engine and ecosystem, gets one, granted for reading and writing by
//! default; it is granted to no other plugin (but one whose own grant holds
//! it).
//!
//! It is `<root>/<directory>-<hash>/<name>`:
//! - `<root>` is the first of `$YOHOST_DATA_DIR`, `$XDG_DATA_HOME/yohost`,
//!   `$HOME/.local/share/yohost` and `$TMPDIR/yohost-data-<uid>` ([`root`]),
//!   or the folder an embedder gives
//!   ([`PluginHostBuilder::data_dir`](crate::PluginHostBuilder::data_dir));
//! - `<directory>` is the plugin directory's own name, and `<hash>` the
//!   first 12 hex digits of the SHA-256 of its canonical path: two plugin
//!   directories never share a folder, and `../plugins` and
//!   `/abs/plugins` are one ([`directory_folder`]);
//! - `<name>` is the plugin's name as it is found (its manifest's `name`,
//!   else its file or folder name; the name its code gives itself is
//!   known only once that code has run), with `/` written `%2F` and a
//!   leading `.` written `%2E` ([`plugin_folder`]).
//!
//! Outside the plugin directory, what a plugin writes there is never
//! watched, fingerprinted or hashed by the lock, and it survives the
//! plugin's reloads. Each level is made with mode 0700 when missing, and
//! used only when it is a real folder (not a symlink), owned by this user,
//! that neither group nor others may write, as the host's private cache
//! is ([`private_dir`](crate::load::private_dir)): a planted folder refuses
//! the plugin, and is never repaired. A check (a dry run) makes nothing: a
//! data folder that exists is granted, one that does not is not.
//!
//! The plugin learns where it is from [`DATA_DIR_ENV`] in its environment
//! (every process the host starts for it, a Wasm component's WASI
//! environment, a JavaScript plugin's `ctx.env` and `process.env`), and
//! from `ctx.dataDir` (TypeScript) or `plugin.data_dir` (Python).

use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::grants::{lexical, resolve_existing, Grants};
use crate::load::private_dir::{check_private, create_private, user_root};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The environment variable that names a plugin's data folder to it. (In
/// the host's own environment, the same name sets the [`root`] of every
/// plugin's data folder.)
pub const DATA_DIR_ENV: &str = "YOHOST_DATA_DIR";

/// Where the data folders of every plugin directory are kept by default:
/// the first of `$YOHOST_DATA_DIR`, `$XDG_DATA_HOME/yohost`,
/// `$HOME/.local/share/yohost` and `$TMPDIR/yohost-data-<uid>`. It may not
/// exist yet.
pub fn root() -> PathBuf {
    user_root(
        DATA_DIR_ENV,
        "XDG_DATA_HOME",
        ".local/share/yohost",
        "yohost-data",
    )
}

/// The folder under `root` that holds the data folders of the plugins of
/// `directory`: its name and a short hash of its canonical path. `root` is
/// made absolute, its existing part resolved through symlinks, so the path
/// a plugin is told is the one its grant holds. `None` when `directory`
/// cannot be resolved.
pub fn directory_folder(root: &Path, directory: &Path) -> Option<PathBuf> {
    let root = resolve_existing(&lexical(&std::path::absolute(root).ok()?));
    let real = directory.canonicalize().ok()?;
    let name: String = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| match c.is_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    let name = name.trim_start_matches('.');
    let hash = Sha256::digest(real.as_os_str().as_encoded_bytes());
    let short: String = hash[..6].iter().map(|b| format!("{b:02x}")).collect();
    Some(root.join(format!("{name}-{short}")))
}

/// The data folder of the plugin named `name` (a valid plugin name) in the
/// [`directory_folder`] `folder`: one path component, whatever the name.
pub fn plugin_folder(folder: &Path, name: &str) -> PathBuf {
    let escaped = name.replace('/', "%2F");
    match escaped.strip_prefix('.') {
        Some(rest) => folder.join(format!("%2E{rest}")),
        None => folder.join(escaped),
    }
}

/// Make the data folder `folder` (a [`plugin_folder`]) private at each of
/// its three levels, or with `create` false only check the levels that
/// exist: its path with symlinks resolved, `None` when it does not exist
/// and was not to be made, or what is wrong with it. Each level that
/// exists is checked before anything is made beneath it, so a planted
/// link gets nothing made where it leads.
pub(crate) fn prepare(folder: &Path, create: bool) -> Result<Option<PathBuf>, String> {
    let levels = [folder.parent().and_then(Path::parent), folder.parent()];
    let levels: Vec<&Path> = levels.into_iter().flatten().chain([folder]).collect();
    let check = |level: &Path| {
        check_private(level).map_err(|problem| {
            format!(
                "{} is not private: {problem}; remove it, or set {DATA_DIR_ENV} to a folder only you can write",
                level.display()
            )
        })
    };
    for level in &levels {
        if std::fs::symlink_metadata(level).is_err() {
            if !create {
                return Ok(None);
            }
            break;
        }
        check(level)?;
    }
    if create {
        create_private(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        levels.iter().try_for_each(|level| check(level))?;
    }
    let real = folder
        .canonicalize()
        .map_err(|e| format!("{}: {e}", folder.display()))?;
    Ok(Some(real))
}

/// `grants` and `candidate`'s data folder, made now (checked only, in a
/// check), for reading and writing: the one place every engine's grants
/// get it. `over` says what is wrong with a write grant of that real path
/// (one holding the plugin directory or the host's cache), if anything.
/// A plugin with no data folder, or in a check one not made yet, keeps
/// `grants` as they are.
pub(crate) fn grant_data_folder(
    candidate: &Candidate,
    grants: Grants,
    over: impl Fn(&Path) -> Option<String>,
) -> Result<Grants, LoadError> {
    let Some(folder) = &candidate.data_dir else {
        return Ok(grants);
    };
    let unusable = |problem: String| LoadError::DataFolder {
        path: candidate.root.clone(),
        problem,
    };
    let Some(real) = prepare(folder, !candidate.dry_run).map_err(unusable)? else {
        return Ok(grants);
    };
    if let Some(problem) = over(&real) {
        return Err(unusable(format!("{} {problem}", real.display())));
    }
    grants
        .with_data_folder(&real)
        .map_err(|e| unusable(format!("{}: {e}", real.display())))
}

/// The environment a plugin's code sees from the host: the variables its
/// manifest grants that are set, with their values now, and
/// [`DATA_DIR_ENV`] naming its data folder when it has one (over a granted
/// variable of that name).
pub fn plugin_env(candidate: &Candidate) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = candidate
        .manifest
        .capabilities
        .env
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| (name.clone(), value)))
        .collect();
    if let Some(folder) = &candidate.data_dir {
        env.insert(
            DATA_DIR_ENV.to_string(),
            folder.to_string_lossy().into_owned(),
        );
    }
    env
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_directory_has_one_folder_whatever_path_names_it() {
        let root = Path::new("/data");
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir_all(plugins.join("sub")).unwrap();
        let other = dir.path().join("other/plugins");
        std::fs::create_dir_all(&other).unwrap();
        let folder = directory_folder(root, &plugins).unwrap();
        assert_eq!(
            directory_folder(root, &plugins.join("sub/..")).unwrap(),
            folder
        );
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("plugins-") && name.len() == 20, "{name}");
        assert_ne!(directory_folder(root, &other).unwrap(), folder);
        assert_eq!(directory_folder(root, &dir.path().join("missing")), None);
    }

    #[test]
    fn every_name_is_one_component_of_its_own() {
        let folder = Path::new("/data/plugins-0");
        for (name, component) in [
            ("guard", "guard"),
            ("@scope/pkg", "@scope%2Fpkg"),
            ("..", "%2E."),
            (".hidden", "%2Ehidden"),
        ] {
            assert_eq!(plugin_folder(folder, name), folder.join(component));
        }
    }

    #[test]
    fn a_check_makes_nothing_and_a_run_makes_every_level_private() {
        let root = tempfile::tempdir().unwrap();
        let folder = plugin_folder(&root.path().join("data/plugins-0"), "guard");
        assert_eq!(prepare(&folder, false), Ok(None));
        assert!(!root.path().join("data").exists());
        let real = prepare(&folder, true).unwrap().unwrap();
        assert_eq!(real, folder.canonicalize().unwrap());
        for level in [
            root.path().join("data"),
            folder.parent().unwrap().into(),
            folder.clone(),
        ] {
            let mode = std::fs::metadata(&level).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", level.display());
        }
        assert_eq!(prepare(&folder, false), Ok(Some(real)));
    }

    #[test]
    fn a_planted_or_linked_level_is_refused_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let data = root.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::os::unix::fs::symlink(&elsewhere, data.join("plugins-0")).unwrap();
        let folder = plugin_folder(&data.join("plugins-0"), "guard");
        for create in [false, true] {
            let refused = prepare(&folder, create).unwrap_err();
            assert!(refused.contains("is not private"), "{refused}");
            assert!(refused.contains(DATA_DIR_ENV), "{refused}");
        }
        assert!(
            !elsewhere.join("guard").exists(),
            "nothing is made where a link leads"
        );
        std::fs::remove_file(data.join("plugins-0")).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(prepare(&folder, true).is_err());
        let mode = std::fs::metadata(&data).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o777, "a planted folder is not repaired");
    }
}
