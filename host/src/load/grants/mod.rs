//! File grants: the one place the host opens paths for a plugin.
//!
//! A plugin's `plugin.toml` grants directories and files
//! (`capabilities.read` to read, `capabilities.write` to read and write).
//! [`Grants::open`] opens each of them once, when the plugin loads, as a
//! [`cap_std::fs::Dir`] (a file's folder, for a file); every file access a
//! plugin makes then goes through that handle, with a path relative to it.
//! A granted file is that one file: the only name its folder's handle is
//! asked for, and, for a process, a kernel rule on the file itself. cap-std resolves the path inside the handle and refuses `..` and
//! symlinks that lead out of it, so checking and opening are one step: no
//! symlink (one that dangles, or one swapped in between a check and an open)
//! leads a plugin outside its grants.
//!
//! - A grant that does not exist refuses the plugin at load
//!   ([`GrantError`]), in every engine: the sandboxed ones (Wasm,
//!   JavaScript) and the trusted ones (dylib, Python) alike. A file grant
//!   names the file its path resolves to, symlinks followed
//!   (`/etc/localtime` is the zone file it leads to).
//! - A file is opened non-blocking and must be a regular file, checked on
//!   the open handle; a read stops at its limit. A FIFO, socket or device in
//!   a granted folder therefore cannot block an engine or feed it without
//!   end.
//! - [`Confined`] is the same handle for one directory that is not a grant
//!   (the JavaScript engine reads a plugin's own modules through one).
//!
//! What an access asks and why it fails is `access`; the handle on one
//! directory and its file operations, `confined`; paths on their text,
//! `paths`. This module picks the grant a path falls in.

mod access;
mod confined;
mod granted_file;
mod paths;

pub use access::{Access, FileError};
pub use confined::{Confined, Entry, EntryKind, FileInfo, WriteMode};
pub use paths::lexical;

use crate::load::manifest::Capabilities;
use granted_file::GrantedFile;
pub(crate) use paths::resolve_existing;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A granted directory that cannot be opened: the plugin is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("capabilities.{} grants {grant:?}, but {} {problem}", access.key(), path.display())]
pub struct GrantError {
    /// Which key granted it.
    pub access: Access,
    /// The grant as written in `plugin.toml`.
    pub grant: PathBuf,
    /// The directory it names.
    pub path: PathBuf,
    /// What is wrong with it ("does not exist", ...).
    pub problem: String,
}

/// One granted directory or file.
#[derive(Debug)]
pub struct Grant {
    written: PathBuf,
    access: Access,
    /// The plugin's folder joined with `written`, without `.` and `..`.
    lexical: PathBuf,
    /// The directory, or the folder of the granted file.
    dir: Confined,
    /// For a granted file: the file itself.
    file: Option<GrantedFile>,
}

impl Grant {
    /// The grant as written in `plugin.toml`.
    pub fn written(&self) -> &Path {
        &self.written
    }

    /// What it allows.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The directory's or the file's path, symlinks resolved, when it was
    /// opened.
    pub fn real(&self) -> &Path {
        match &self.file {
            Some(file) => &file.real,
            None => self.dir.real(),
        }
    }

    /// Whether it grants one file, not a directory.
    pub fn is_file(&self) -> bool {
        self.file.is_some()
    }

    /// The handle the grant was opened as: the kernel sandbox of a plugin
    /// process grants this very directory or file, so one swapped in at
    /// the same path afterwards is not granted.
    pub fn handle(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        match &self.file {
            Some(file) => file.handle.as_fd(),
            None => self.dir.handle(),
        }
    }

    /// The path, relative to the grant's handle, of `path` if `path` is
    /// inside it (the granted file itself, for a file) as written or as
    /// resolved.
    fn below(&self, path: &Path) -> Option<PathBuf> {
        if let Some(file) = &self.file {
            return (path == self.lexical || path == file.real).then(|| file.name.clone());
        }
        path.strip_prefix(&self.lexical)
            .or_else(|_| path.strip_prefix(self.dir.real()))
            .ok()
            .map(Path::to_path_buf)
    }
}

/// Every directory a plugin's manifest grants, opened at load. Cheap to
/// clone: clones share the handles.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    dirs: Arc<[Arc<Grant>]>,
}

impl Grants {
    /// Open every directory `capabilities` grants, relative to `base` (the
    /// plugin's folder). A directory granted for both reading and writing
    /// is opened once, for writing.
    pub fn open(base: &Path, capabilities: &Capabilities) -> Result<Grants, GrantError> {
        let granted = capabilities.write.iter().map(|p| (p, Access::Write)).chain(
            capabilities
                .read
                .iter()
                .filter(|p| !capabilities.write.contains(p))
                .map(|p| (p, Access::Read)),
        );
        let mut dirs: Vec<Arc<Grant>> = Vec::new();
        for (written, access) in granted {
            if dirs.iter().any(|d| &d.written == written) {
                continue;
            }
            // Against the plugin's folder, whatever path the directory was
            // given by (`../plugins` too): absolute, as every access is.
            let joined = base.join(written);
            let path = lexical(&std::path::absolute(&joined).unwrap_or(joined));
            let refused = |e: io::Error| GrantError {
                access,
                grant: written.clone(),
                path: path.clone(),
                problem: match e.kind() {
                    io::ErrorKind::NotFound => "does not exist".into(),
                    _ => format!("cannot be opened: {e}"),
                },
            };
            let real = path.canonicalize().map_err(refused)?;
            let (dir, file) = if real.is_dir() {
                (Confined::open(&real).map_err(refused)?, None)
            } else {
                let (dir, file) = GrantedFile::open(&real).map_err(refused)?;
                (dir, Some(file))
            };
            dirs.push(Arc::new(Grant {
                written: written.clone(),
                access,
                lexical: path,
                dir,
                file,
            }));
        }
        Ok(Grants { dirs: dirs.into() })
    }

    /// These grants, plus reading beneath the plugin's own `folder` when no
    /// grant covers it yet: a plugin reads the files it ships (a data file
    /// beside its code) as it imports them. A folder that cannot be opened
    /// adds nothing.
    pub fn with_own_folder(self, folder: &Path) -> Grants {
        let path = lexical(&std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf()));
        if self
            .dirs
            .iter()
            .any(|d| !d.is_file() && path.starts_with(&d.lexical))
        {
            return self;
        }
        self.with(path, PathBuf::from("."), Access::Read)
            .unwrap_or(self)
    }

    /// These grants, plus reading and writing the plugin's data folder
    /// `folder` (absolute, symlinks resolved: see
    /// [`data_dir`](crate::load::data_dir)), written as its path.
    pub fn with_data_folder(&self, folder: &Path) -> io::Result<Grants> {
        self.with(folder.to_path_buf(), folder.to_path_buf(), Access::Write)
    }

    /// These grants, plus folder `path` (absolute), opened now.
    fn with(&self, path: PathBuf, written: PathBuf, access: Access) -> io::Result<Grants> {
        let dir = Confined::open(&path)?;
        let mut dirs = self.dirs.to_vec();
        dirs.push(Arc::new(Grant {
            written,
            access,
            lexical: path,
            dir,
            file: None,
        }));
        Ok(Grants { dirs: dirs.into() })
    }

    /// The granted directories and files.
    pub fn iter(&self) -> impl Iterator<Item = &Grant> {
        self.dirs.iter().map(Arc::as_ref)
    }

    /// The text of file `path` (absolute), at most `limit` bytes.
    pub fn read_text(&self, path: &Path, limit: u64) -> Result<String, FileError> {
        let (dir, relative, shown) = self.locate(path, Access::Read)?;
        dir.read_text(&relative, limit, &shown)
    }

    /// The bytes of file `path` (absolute), at most `limit` of them.
    pub fn read_bytes(&self, path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
        let (dir, relative, shown) = self.locate(path, Access::Read)?;
        dir.read_bytes(&relative, limit, &shown)
    }

    /// Write `bytes` to file `path` (absolute), creating it if needed.
    pub fn write(&self, path: &Path, bytes: &[u8], mode: WriteMode) -> Result<(), FileError> {
        let (dir, relative, shown) = self.locate(path, Access::Write)?;
        dir.write(&relative, bytes, mode, &shown)
    }

    /// Create directory `path` (absolute) and its missing parents.
    pub fn create_dir_all(&self, path: &Path) -> Result<(), FileError> {
        let (dir, relative, shown) = self.locate(path, Access::Write)?;
        dir.create_dir_all(&relative, &shown)
    }

    /// Create directory `path` (absolute), whose parent must exist.
    pub fn create_dir(&self, path: &Path) -> Result<(), FileError> {
        let (dir, relative, shown) = self.locate(path, Access::Write)?;
        dir.create_dir(&relative, &shown)
    }

    /// Remove file `path` (absolute), or with `dir` the empty directory;
    /// a granted directory itself is never removed.
    pub fn remove(&self, path: &Path, dir: bool) -> Result<(), FileError> {
        let (handle, relative, shown) = self.locate(path, Access::Write)?;
        handle.remove(&relative, dir, &shown)
    }

    /// Rename `from` to `to` (both absolute, each inside a write grant).
    pub fn rename(&self, from: &Path, to: &Path) -> Result<(), FileError> {
        let (handle, relative, shown) = self.locate(from, Access::Write)?;
        let (to_handle, to_relative, _) = self.locate(to, Access::Write)?;
        handle.rename(&relative, to_handle, &to_relative, &shown)
    }

    /// What `path` (absolute) is, if it exists inside a grant for `access`.
    pub fn stat(&self, path: &Path, access: Access) -> Result<FileInfo, FileError> {
        let (dir, relative, shown) = self.locate(path, access)?;
        dir.stat(&relative, &shown)
    }

    /// The entries of directory `path` (absolute), sorted by name.
    pub fn list(&self, path: &Path) -> Result<Vec<Entry>, FileError> {
        let (dir, relative, shown) = self.locate(path, Access::Read)?;
        dir.list(&relative, &shown)
    }

    /// Whether `path` (absolute) lies inside a grant for `access`, judged
    /// as an access would be but without touching the file: `NotGranted`
    /// when it does not (a check reports such a write as denied).
    pub fn permits(&self, path: &Path, access: Access) -> Result<(), FileError> {
        self.locate(path, access).map(|_| ())
    }

    /// Where `path` (absolute) is on disk, symlinks resolved, if it exists
    /// inside a grant for `access`: what a watch on the path observes. A
    /// path whose resolution leaves its grant is refused (`EACCES`), as
    /// [`Grants::stat`] refuses it.
    pub fn real_path(&self, path: &Path, access: Access) -> Result<PathBuf, FileError> {
        let (dir, relative, shown) = self.locate(path, access)?;
        dir.stat(&relative, &shown)?;
        let io_err = |source| FileError::Io {
            path: shown.clone(),
            source,
        };
        let real = dir.real().join(&relative).canonicalize().map_err(io_err)?;
        if !real.starts_with(dir.real()) {
            return Err(io_err(io::Error::from(io::ErrorKind::PermissionDenied)));
        }
        Ok(real)
    }

    /// Whether `path` (absolute) exists inside a readable grant; false for
    /// anything missing or not granted.
    pub fn exists(&self, path: &Path) -> bool {
        self.stat(path, Access::Read).is_ok()
    }

    /// The grant that holds `path` for `access` (the deepest, when grants
    /// nest), the path relative to it, and the path as errors show it.
    ///
    /// The choice of grant is made on the path's text (and, when that names
    /// no grant, on the path with its existing part resolved through
    /// symlinks); whichever grant is chosen, the access itself goes through
    /// that grant's handle, which no path can leave.
    fn locate(
        &self,
        path: &Path,
        access: Access,
    ) -> Result<(&Confined, PathBuf, PathBuf), FileError> {
        let shown = lexical(path);
        let not_granted = || FileError::NotGranted {
            path: shown.clone(),
            access,
        };
        if !shown.is_absolute() {
            return Err(not_granted());
        }
        let pick = |candidate: &Path| {
            self.dirs
                .iter()
                .filter(|g| g.access >= access)
                .filter_map(|g| g.below(candidate).map(|rest| (g.as_ref(), rest)))
                .min_by_key(|(_, rest)| rest.components().count())
        };
        let found = pick(&shown).or_else(|| pick(&resolve_existing(&shown)));
        let (grant, relative) = found.ok_or_else(not_granted)?;
        Ok((&grant.dir, relative, shown))
    }
}

/// What `capabilities` grants for writing, made absolute against the
/// plugin's folder `base`: its data, not its code. The lock does not hash
/// what is in them, and a change in them does not reload the plugin. What
/// is granted for reading only is the plugin's as it ships, and is hashed:
/// a read grant cannot take a file of the plugin's code out of its lock.
pub fn data_folders(base: &Path, capabilities: &Capabilities) -> Vec<PathBuf> {
    capabilities
        .write
        .iter()
        .map(|p| lexical(&base.join(p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(read: &[&str], write: &[&str]) -> Capabilities {
        Capabilities {
            read: read.iter().map(PathBuf::from).collect(),
            write: write.iter().map(PathBuf::from).collect(),
            ..Capabilities::default()
        }
    }

    #[test]
    fn reads_and_writes_stay_inside_their_grants() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        for d in ["data", "out", "secret"] {
            std::fs::create_dir(base.join(d)).unwrap();
        }
        std::fs::write(base.join("data/a.txt"), "hello").unwrap();
        std::fs::write(base.join("secret/key"), "k").unwrap();
        let grants = Grants::open(base, &caps(&["data"], &["out"])).unwrap();
        assert_eq!(
            grants.read_text(&base.join("data/a.txt"), 100).unwrap(),
            "hello"
        );
        let escape = grants.read_text(&base.join("data/../secret/key"), 100);
        assert!(
            matches!(escape, Err(FileError::NotGranted { .. })),
            "{escape:?}"
        );
        let read_only = grants.write(&base.join("data/b.txt"), b"x", WriteMode::Replace);
        assert!(
            matches!(
                read_only,
                Err(FileError::NotGranted {
                    access: Access::Write,
                    ..
                })
            ),
            "{read_only:?}"
        );
        grants
            .write(&base.join("out/b.txt"), b"x", WriteMode::Replace)
            .unwrap();
        grants
            .write(&base.join("out/b.txt"), b"y", WriteMode::Append)
            .unwrap();
        assert_eq!(
            grants.read_text(&base.join("out/b.txt"), 100).unwrap(),
            "xy"
        );
        let missing = grants
            .read_text(&base.join("data/missing"), 100)
            .unwrap_err();
        assert_eq!(missing.code(), "ENOENT");
        assert!(!grants.exists(&base.join("secret/key")));
        assert!(grants.exists(&base.join("data")));
        assert_eq!(
            grants.list(&base.join("out")).unwrap(),
            [Entry {
                name: "b.txt".into(),
                kind: EntryKind::File
            }]
        );
        let too_big = grants.read_text(&base.join("out/b.txt"), 1).unwrap_err();
        assert_eq!(too_big.code(), "EFBIG");
    }

    #[test]
    fn renames_stay_inside_the_write_grants() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        for d in ["data", "out", "other", "elsewhere"] {
            std::fs::create_dir(base.join(d)).unwrap();
        }
        std::fs::write(base.join("data/a.txt"), "a").unwrap();
        std::fs::write(base.join("out/b.txt"), "b").unwrap();
        std::fs::write(base.join("out/c.txt"), "c").unwrap();
        let grants = Grants::open(base, &caps(&["data"], &["out", "other"])).unwrap();
        // Inside a grant, replacing a file; and from one grant to another.
        grants
            .rename(&base.join("out/b.txt"), &base.join("out/c.txt"))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(base.join("out/c.txt")).unwrap(),
            "b"
        );
        grants
            .rename(&base.join("out/c.txt"), &base.join("other/d.txt"))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(base.join("other/d.txt")).unwrap(),
            "b"
        );
        // Out of a write grant, into a read grant or none, and the grant
        // itself: refused, and nothing moves.
        for (from, to) in [
            ("data/a.txt", "out/a.txt"),
            ("other/d.txt", "data/d.txt"),
            ("other/d.txt", "elsewhere/d.txt"),
            ("other/d.txt", "out/../elsewhere/d.txt"),
        ] {
            let refused = grants.rename(&base.join(from), &base.join(to));
            assert!(
                matches!(refused, Err(FileError::NotGranted { .. })),
                "{from} -> {to}: {refused:?}"
            );
        }
        let root = grants.rename(&base.join("out"), &base.join("other/out"));
        assert_eq!(root.unwrap_err().code(), "EACCES");
        let missing = grants.rename(&base.join("out/missing"), &base.join("out/x"));
        assert_eq!(missing.unwrap_err().code(), "ENOENT");
        assert!(base.join("data/a.txt").is_file() && base.join("other/d.txt").is_file());
    }

    #[test]
    fn a_missing_grant_is_an_error_naming_it_and_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let err = Grants::open(dir.path(), &caps(&["nowhere"], &[])).unwrap_err();
        assert_eq!(err.access, Access::Read);
        assert_eq!(err.grant, PathBuf::from("nowhere"));
        assert_eq!(err.path, dir.path().join("nowhere"));
        assert_eq!(err.problem, "does not exist");
    }

    #[test]
    fn a_granted_file_is_that_one_file_and_not_its_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir(base.join("etc")).unwrap();
        std::fs::write(base.join("etc/zone"), "UTC").unwrap();
        std::fs::write(base.join("etc/shadow"), "secret").unwrap();
        std::fs::write(base.join("log"), "").unwrap();
        // Granted by a link, as `/etc/localtime` is: the file it leads to.
        std::os::unix::fs::symlink(base.join("etc/zone"), base.join("localtime")).unwrap();
        let grants = Grants::open(base, &caps(&["localtime"], &["log"])).unwrap();
        assert!(grants.iter().all(Grant::is_file));
        assert_eq!(
            grants.read_text(&base.join("localtime"), 10).unwrap(),
            "UTC"
        );
        assert_eq!(grants.read_text(&base.join("etc/zone"), 10).unwrap(), "UTC");
        assert_eq!(
            grants
                .read_text(&base.join("etc/shadow"), 10)
                .unwrap_err()
                .code(),
            "EACCES",
            "the granted file's neighbour is not granted"
        );
        assert!(grants.list(&base.join("etc")).is_err(), "nor is its folder");
        grants
            .write(&base.join("log"), b"line", WriteMode::Append)
            .unwrap();
        assert_eq!(std::fs::read_to_string(base.join("log")).unwrap(), "line");
        assert!(grants
            .write(&base.join("log2"), b"x", WriteMode::Replace)
            .is_err());
        assert!(
            grants
                .write(&base.join("localtime"), b"x", WriteMode::Replace)
                .is_err(),
            "a file granted for reading is not written"
        );
        assert!(!base.join("log2").exists());
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_do_not_lead_out_of_a_grant_even_when_they_dangle() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir(base.join("out")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        std::fs::write(base.join("elsewhere/secret"), "s").unwrap();
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(base.join(target), base.join("out").join(name)).unwrap()
        };
        link("elsewhere", "folder");
        link("elsewhere/secret", "file");
        link("elsewhere/created-by-plugin", "dangling");
        let grants = Grants::open(base, &caps(&[], &["out"])).unwrap();
        for name in ["folder/x", "dangling"] {
            let written = grants.write(&base.join("out").join(name), b"x", WriteMode::Replace);
            assert_eq!(written.unwrap_err().code(), "EACCES", "{name}");
        }
        assert!(!base.join("elsewhere/x").exists());
        assert!(!base.join("elsewhere/created-by-plugin").exists());
        let read = grants.read_text(&base.join("out/file"), 100);
        assert_eq!(read.unwrap_err().code(), "EACCES");
        assert!(!grants.exists(&base.join("out/folder/secret")));
    }

    #[cfg(unix)]
    #[test]
    fn a_real_path_stays_inside_its_grant() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("data/sub")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        // A relative link that stays inside is followed; an absolute one is
        // refused wherever it points, as every access through a grant is.
        std::os::unix::fs::symlink("sub", base.join("data/inner")).unwrap();
        std::os::unix::fs::symlink(base.join("data/sub"), base.join("data/absolute")).unwrap();
        std::os::unix::fs::symlink("../elsewhere", base.join("data/out")).unwrap();
        let grants = Grants::open(&base, &caps(&["data"], &[])).unwrap();
        let real = grants.real_path(&base.join("data/inner"), Access::Read);
        assert_eq!(real.unwrap(), base.join("data/sub"));
        for (path, code) in [
            ("data/out", "EACCES"),
            ("data/absolute", "EACCES"),
            ("elsewhere", "EACCES"),
            ("data/no", "ENOENT"),
        ] {
            let refused = grants
                .real_path(&base.join(path), Access::Read)
                .unwrap_err();
            assert_eq!(refused.code(), code, "{path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_neither_blocks_nor_reads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let fifo = dir.path().join("data/pipe");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let grants = Grants::open(dir.path(), &caps(&[], &["data"])).unwrap();
        let read = grants.read_text(&fifo, 100).unwrap_err();
        assert!(matches!(read, FileError::NotAFile { .. }), "{read:?}");
        // No reader: a blocking open would wait for one.
        let written = grants.write(&fifo, b"x", WriteMode::Replace).unwrap_err();
        assert!(matches!(
            written,
            FileError::Io { .. } | FileError::NotAFile { .. }
        ));
        let dir_read = grants.read_text(&dir.path().join("data"), 100).unwrap_err();
        assert_eq!(dir_read.code(), "EISDIR");
    }
}
