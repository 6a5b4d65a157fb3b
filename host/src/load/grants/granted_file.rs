//! A grant of one file: its folder's handle, asked for that one name
//! only, and a handle on the file itself, which the kernel sandbox of a
//! process grants (see the module above).

use super::confined::Confined;
use std::io;
use std::path::{Path, PathBuf};

/// A granted file: its name in its folder (as resolved), its real path,
/// and a handle on the file itself (`O_PATH`), which the kernel sandbox of
/// a process grants.
#[derive(Debug)]
pub(super) struct GrantedFile {
    pub(super) name: PathBuf,
    pub(super) real: PathBuf,
    pub(super) handle: std::os::fd::OwnedFd,
}

impl GrantedFile {
    /// Open the file `real` (symlinks resolved) as a grant: its folder's
    /// handle, and the file's own.
    pub(super) fn open(real: &Path) -> io::Result<(Confined, GrantedFile)> {
        use std::os::unix::fs::OpenOptionsExt;
        let (Some(folder), Some(name)) = (real.parent(), real.file_name()) else {
            return Err(io::ErrorKind::InvalidInput.into());
        };
        let dir = Confined::open(folder)?;
        let handle = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(real)?;
        let file = GrantedFile {
            name: PathBuf::from(name),
            real: real.to_path_buf(),
            handle: handle.into(),
        };
        Ok((dir, file))
    }
}
