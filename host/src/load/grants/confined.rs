//! One directory opened once ([`Confined`]): every file operation is a
//! path relative to its handle, which cap-std keeps inside it (no `..`, no
//! symlink that leads out); a file is opened non-blocking and must be a
//! regular file. What the operations return is here too.

use super::access::FileError;
use cap_std::fs::{Dir, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What [`Grants::stat`](super::Grants::stat) tells about a file or directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInfo {
    /// Its size in bytes.
    pub size: u64,
    /// When it was last modified, where the system records it.
    pub modified: Option<SystemTime>,
    /// Whether it is a regular file.
    pub is_file: bool,
    /// Whether it is a directory.
    pub is_dir: bool,
}

/// How [`Confined::write`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Replace the contents.
    Replace,
    /// Add to the end.
    Append,
}

/// What a directory entry is, without following a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One name in a directory, as [`Grants::list`](super::Grants::list) gives it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: EntryKind,
}

/// One directory, opened once; every access is a path relative to it and
/// cannot leave it.
#[derive(Debug)]
pub struct Confined {
    dir: Dir,
    real: PathBuf,
}

impl Confined {
    /// Open `path` (which must be a directory).
    pub fn open(path: &Path) -> io::Result<Confined> {
        let real = path.canonicalize()?;
        let dir = Dir::open_ambient_dir(&real, cap_std::ambient_authority())?;
        Ok(Confined { dir, real })
    }

    /// The directory's path, symlinks resolved, when it was opened.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// The bytes of regular file `relative`, if it holds at most `limit`
    /// of them. `shown` is the path errors name.
    pub fn read_bytes(
        &self,
        relative: &Path,
        limit: u64,
        shown: &Path,
    ) -> Result<Vec<u8>, FileError> {
        let mut options = OpenOptions::new();
        options.read(true);
        let file = self.open_regular(relative, &options, shown)?;
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|source| FileError::Io {
                path: shown.to_path_buf(),
                source,
            })?;
        if bytes.len() as u64 > limit {
            return Err(FileError::TooLarge {
                path: shown.to_path_buf(),
                limit,
            });
        }
        Ok(bytes)
    }

    /// The text of regular file `relative`, if it holds at most `limit`
    /// bytes of UTF-8. `shown` is the path errors name.
    pub fn read_text(
        &self,
        relative: &Path,
        limit: u64,
        shown: &Path,
    ) -> Result<String, FileError> {
        String::from_utf8(self.read_bytes(relative, limit, shown)?).map_err(|e| FileError::Io {
            path: shown.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()),
        })
    }

    /// Write `bytes` to regular file `relative`, creating it if needed.
    pub fn write(
        &self,
        relative: &Path,
        bytes: &[u8],
        mode: WriteMode,
        shown: &Path,
    ) -> Result<(), FileError> {
        let io_err = |source| FileError::Io {
            path: shown.to_path_buf(),
            source,
        };
        let mut options = OpenOptions::new();
        options.create(true);
        match mode {
            // Truncated only after the handle shows a regular file.
            WriteMode::Replace => options.write(true),
            WriteMode::Append => options.append(true),
        };
        let mut file = self.open_regular(relative, &options, shown)?;
        if mode == WriteMode::Replace {
            file.set_len(0).map_err(io_err)?;
        }
        file.write_all(bytes).map_err(io_err)
    }

    /// Create directory `relative` and its missing parents.
    pub fn create_dir_all(&self, relative: &Path, shown: &Path) -> Result<(), FileError> {
        if relative.as_os_str().is_empty() {
            return Ok(());
        }
        self.dir
            .create_dir_all(relative)
            .map_err(|source| FileError::Io {
                path: shown.to_path_buf(),
                source,
            })
    }

    /// Create directory `relative`, whose parent must exist (`EEXIST` when
    /// it is there already).
    pub fn create_dir(&self, relative: &Path, shown: &Path) -> Result<(), FileError> {
        self.dir
            .create_dir(nonempty(relative))
            .map_err(|source| FileError::Io {
                path: shown.to_path_buf(),
                source,
            })
    }

    /// Remove file (or symlink) `relative`, or, with `dir`, empty
    /// directory `relative`. The grant's own directory is never removed.
    pub fn remove(&self, relative: &Path, dir: bool, shown: &Path) -> Result<(), FileError> {
        let io_err = |source| FileError::Io {
            path: shown.to_path_buf(),
            source,
        };
        if relative.as_os_str().is_empty() {
            return Err(io_err(io::Error::from(io::ErrorKind::PermissionDenied)));
        }
        if dir {
            self.dir.remove_dir(relative).map_err(io_err)
        } else {
            self.dir.remove_file(relative).map_err(|source| {
                // Node names unlinking a directory EISDIR (Linux says EPERM).
                let is_dir = self
                    .dir
                    .symlink_metadata(relative)
                    .is_ok_and(|m| m.is_dir());
                if is_dir {
                    FileError::IsADirectory {
                        path: shown.to_path_buf(),
                    }
                } else {
                    io_err(source)
                }
            })
        }
    }

    /// Rename `relative` to `to_relative` inside `to` (this grant or
    /// another), replacing a file there, as rename(2) does. A grant's own
    /// directory is never renamed, nor replaced.
    pub fn rename(
        &self,
        relative: &Path,
        to: &Confined,
        to_relative: &Path,
        shown: &Path,
    ) -> Result<(), FileError> {
        let io_err = |source| FileError::Io {
            path: shown.to_path_buf(),
            source,
        };
        if relative.as_os_str().is_empty() || to_relative.as_os_str().is_empty() {
            return Err(io_err(io::Error::from(io::ErrorKind::PermissionDenied)));
        }
        self.dir
            .rename(relative, &to.dir, to_relative)
            .map_err(io_err)
    }

    /// What `relative` is, following symlinks that stay inside.
    pub fn stat(&self, relative: &Path, shown: &Path) -> Result<FileInfo, FileError> {
        let meta = if relative.as_os_str().is_empty() {
            self.dir.dir_metadata()
        } else {
            self.dir.metadata(relative)
        }
        .map_err(|source| FileError::Io {
            path: shown.to_path_buf(),
            source,
        })?;
        let modified = meta.modified().ok().and_then(|t| {
            let epoch = cap_std::time::SystemTime::from_std(SystemTime::UNIX_EPOCH);
            t.duration_since(epoch)
                .ok()
                .map(|since| SystemTime::UNIX_EPOCH + since)
        });
        Ok(FileInfo {
            size: meta.len(),
            modified,
            is_file: meta.is_file(),
            is_dir: meta.is_dir(),
        })
    }

    /// The entries of directory `relative`, sorted by name.
    pub fn list(&self, relative: &Path, shown: &Path) -> Result<Vec<Entry>, FileError> {
        let io_err = |source| FileError::Io {
            path: shown.to_path_buf(),
            source,
        };
        let entries = if relative.as_os_str().is_empty() {
            self.dir.entries()
        } else {
            self.dir.read_dir(relative)
        }
        .map_err(io_err)?;
        let mut listed = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err)?;
            let kind = match entry.file_type() {
                Ok(t) if t.is_symlink() => EntryKind::Symlink,
                Ok(t) if t.is_dir() => EntryKind::Dir,
                Ok(t) if t.is_file() => EntryKind::File,
                _ => EntryKind::Other,
            };
            listed.push(Entry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind,
            });
        }
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(listed)
    }

    /// The handle the directory was opened as.
    pub(super) fn handle(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.dir.as_fd()
    }

    /// Open `relative` non-blocking and make sure, on the open handle, that
    /// it is a regular file.
    fn open_regular(
        &self,
        relative: &Path,
        options: &OpenOptions,
        shown: &Path,
    ) -> Result<cap_std::fs::File, FileError> {
        let mut options = options.clone();
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK);
        }
        let file =
            self.dir
                .open_with(nonempty(relative), &options)
                .map_err(|source| match source.kind() {
                    io::ErrorKind::IsADirectory => FileError::IsADirectory {
                        path: shown.to_path_buf(),
                    },
                    _ => FileError::Io {
                        path: shown.to_path_buf(),
                        source,
                    },
                })?;
        let meta = file.metadata().map_err(|source| FileError::Io {
            path: shown.to_path_buf(),
            source,
        })?;
        if meta.is_dir() {
            return Err(FileError::IsADirectory {
                path: shown.to_path_buf(),
            });
        }
        if !meta.is_file() {
            return Err(FileError::NotAFile {
                path: shown.to_path_buf(),
            });
        }
        Ok(file)
    }
}

/// `relative`, or `.` for the directory itself.
fn nonempty(relative: &Path) -> &Path {
    if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    }
}
