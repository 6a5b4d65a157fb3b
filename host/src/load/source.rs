//! Reading the files of a plugin directory: regular files only, bounded.
//!
//! Whoever writes the plugin directory decides what it holds, and the host
//! reads some of its files before any plugin runs (manifests, `package.json`,
//! sources to detect an ecosystem, libraries to copy). A FIFO would block
//! such a read for ever, a device node could stream without end, and a huge
//! file would exhaust memory. So every such read goes through
//! [`read_bytes`]: the file is opened without blocking, checked to be a
//! regular file (after symlinks are resolved) on the opened handle, and read
//! up to a limit.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;

/// Why a plugin file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{message}")]
    Io {
        /// What kind of failure it was.
        kind: std::io::ErrorKind,
        /// The system's message.
        message: String,
    },
    /// It is not a regular file.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// It is larger than the limit for its kind of file.
    #[error("it is larger than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// A text file is not valid UTF-8.
    #[error("it is not valid UTF-8 text")]
    NotUtf8,
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::Io {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

impl ReadError {
    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            ReadError::Io {
                kind: std::io::ErrorKind::NotFound,
                ..
            }
        )
    }
}

/// What kind of file `meta` describes, in words, for files that are not
/// regular files or directories.
pub fn kind_of(meta: &Metadata) -> &'static str {
    let file_type = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// The bytes of the regular file at `path` (symlinks resolved), at most
/// `limit` of them. A FIFO, socket or device is refused without blocking.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    // Refuse what is plainly not a regular file before opening it: opening
    // a device can have effects of its own.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(&meta)));
    }
    let file = open_nonblocking(path)?;
    // The path may have been swapped since: check what was opened.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(&meta)));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow while it is read: read one byte past the limit to
    // tell.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// The text of the regular file at `path`, as [`read_bytes`] reads it.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|_| ReadError::NotUtf8)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO that replaced the file since the check
    // returns at once instead of waiting for a writer.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.ts");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read_text(&file, 5).unwrap(), "12345");
        assert_eq!(read_bytes(&file, 4), Err(ReadError::TooLarge { limit: 4 }));
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert_eq!(read_text(&file, 5), Err(ReadError::NotUtf8));
        assert!(read_bytes(&dir.path().join("missing"), 5)
            .unwrap_err()
            .is_not_found());
        assert_eq!(
            read_bytes(dir.path(), 5),
            Err(ReadError::NotRegular("a folder"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.ts");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        assert_eq!(read_bytes(&fifo, 5), Err(ReadError::NotRegular("a FIFO")));
        assert_eq!(
            read_bytes(Path::new("/dev/zero"), 5),
            Err(ReadError::NotRegular("a character device"))
        );
    }
}
