//! Folders only this user can write, for files the host later trusts:
//! compiled Wasm components (wasmtime deserializes them unchecked) and the
//! private copies of dylibs (the dynamic loader runs them).
//!
//! The folders live under one root, the first of `$YOHOST_CACHE_DIR`,
//! `$XDG_CACHE_HOME/yohost`, `$HOME/.cache/yohost` and
//! `$TMPDIR/yohost-cache-<uid>`. The root and the folder are created with
//! mode 0700 when missing, and used only when each is a real folder (not a
//! symlink), owned by this user, that neither group nor others may write. A
//! folder planted by someone else, or left writable, is refused, never
//! repaired: files may already have been planted in it. Plugins' data
//! folders ([`data_dir`](crate::load::data_dir)) are made and checked the
//! same way, under a root of their own.

use std::path::{Path, PathBuf};

/// The private folder of the OAuth tokens that remote MCP servers gave
/// yohost: no plugin's grant, for reading or for writing, may reach it.
pub const TOKENS: &str = "oauth";

/// Why the private folder cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrivateDirError {
    /// It could not be created.
    #[error("cannot create {path}: {message}")]
    Create {
        /// The folder.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// It exists but is not private.
    #[error("{path} is not private: {problem}; remove it, or set YOHOST_CACHE_DIR to a folder only you can write")]
    NotPrivate {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
}

/// The private folder `sub` under the cache root (see the module docs),
/// created if missing.
pub fn cache_folder(sub: &str) -> Result<PathBuf, PrivateDirError> {
    let root = cache_root();
    ensure_private(&root)?;
    let dir = root.join(sub);
    ensure_private(&dir)?;
    Ok(dir)
}

/// The root of the private folders (see the module docs); it may not
/// exist yet.
pub(crate) fn cache_root() -> PathBuf {
    user_root(
        "YOHOST_CACHE_DIR",
        "XDG_CACHE_HOME",
        ".cache/yohost",
        "yohost-cache",
    )
}

/// The first of `$own`, `$xdg/yohost`, `$HOME/home` and
/// `$TMPDIR/<temporary>-<uid>` (a variable set to nothing counts as unset):
/// where yohost keeps one kind of its own files for this user.
pub(crate) fn user_root(own: &str, xdg: &str, home: &str, temporary: &str) -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env(own)
        .or_else(|| env(xdg).map(|d| d.join("yohost")))
        .or_else(|| env("HOME").map(|d| d.join(home)))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("{temporary}-{}", uid())))
}

/// Create `dir` (mode 0700, with its missing parents) unless it exists,
/// then check that it is private.
pub fn ensure_private(dir: &Path) -> Result<(), PrivateDirError> {
    create_private(dir).map_err(|e| PrivateDirError::Create {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    check_private(dir).map_err(|problem| PrivateDirError::NotPrivate {
        path: dir.to_path_buf(),
        problem,
    })
}

/// Create `dir` with its missing parents, each with mode 0700; a folder
/// that exists is left as it is (check it with [`check_private`]).
pub(crate) fn create_private(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A real folder (not a symlink), owned by this user, that neither group
/// nor others may write; else what is wrong with it.
#[cfg(unix)]
pub(crate) fn check_private(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
    if !meta.file_type().is_dir() {
        return Err("it is not a folder (a symlink or a file)".into());
    }
    if meta.uid() != uid() {
        return Err(format!(
            "it is owned by user {}, not by this user ({})",
            meta.uid(),
            uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "its mode {:o} lets others write it",
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn check_private(dir: &Path) -> Result<(), String> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_dir()) {
        Ok(())
    } else {
        Err("it is not a folder".into())
    }
}

#[cfg(unix)]
fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
fn uid() -> u32 {
    0
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_folder_is_created_private() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        ensure_private(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn a_folder_others_can_write_is_refused_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("planted");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = ensure_private(&dir).unwrap_err();
        assert!(matches!(err, PrivateDirError::NotPrivate { .. }), "{err}");
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o777, "a planted folder is not repaired");
    }

    #[test]
    fn a_symlink_to_a_private_folder_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        ensure_private(&real).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(
            ensure_private(&link),
            Err(PrivateDirError::NotPrivate { .. })
        ));
    }
}
