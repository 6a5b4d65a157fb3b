//! What a file access asks ([`Access`]) and why one failed
//! ([`FileError`], with Node's name for it).

use std::io;
use std::path::PathBuf;

/// What a grant allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Reading (`capabilities.read`).
    Read,
    /// Reading and writing (`capabilities.write`).
    Write,
}

impl Access {
    /// The manifest key that grants it.
    pub fn key(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }

    /// What it is, as a file error says it ("reading").
    pub(super) fn verb(self) -> &'static str {
        match self {
            Access::Read => "reading",
            Access::Write => "writing",
        }
    }
}

/// Why a file access failed.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The path is in no directory granted for this access.
    #[error("{} {} is not granted: add its folder to `capabilities.{}` in the plugin's plugin.toml", access.verb(), path.display(), access.key())]
    NotGranted {
        /// The path, absolute and without `.` and `..`.
        path: PathBuf,
        /// The access asked for.
        access: Access,
    },
    /// A read or write named a directory.
    #[error("{} is a directory", path.display())]
    IsADirectory {
        /// The path.
        path: PathBuf,
    },
    /// A read or write named a FIFO, socket or device.
    #[error("{} is not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A read would go over its limit.
    #[error("{} is over the limit of {limit} bytes", path.display())]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The file system said no (a symlink leading out of its grant is
    /// `PermissionDenied`).
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl FileError {
    /// Node's name for the error (`EACCES`, `ENOENT`, ...), which plugins
    /// see as `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            FileError::NotGranted { .. } => "EACCES",
            FileError::IsADirectory { .. } => "EISDIR",
            FileError::NotAFile { .. } => "EINVAL",
            FileError::TooLarge { .. } => "EFBIG",
            FileError::Io { source, .. } => match source.kind() {
                io::ErrorKind::NotFound => "ENOENT",
                io::ErrorKind::PermissionDenied => "EACCES",
                io::ErrorKind::AlreadyExists => "EEXIST",
                io::ErrorKind::IsADirectory => "EISDIR",
                io::ErrorKind::NotADirectory => "ENOTDIR",
                io::ErrorKind::DirectoryNotEmpty => "ENOTEMPTY",
                _ => "EIO",
            },
        }
    }
}
