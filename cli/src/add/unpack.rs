//! A package's files, taken into the stage as `add` trusts them: regular
//! files and folders only, written by `add` itself with modes of its own
//! (`0644`, `0755` for a file with any execute bit, `0755` for a folder:
//! no setuid, setgid or world-writable file). Links, device nodes, FIFOs
//! and sockets are left out and named; a path that leaves the package, or
//! a name holding a control character, refuses the package. A package
//! holds at most [`MAX_BYTES`] in at most [`MAX_ENTRIES`] files and
//! folders, and both are checked before anything past them is read.

use crate::output::escaped;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// The most bytes a package's files may hold together: 128 MiB.
pub const MAX_BYTES: u64 = 128 << 20;

/// The most files and folders a package may hold: 20,000.
pub const MAX_ENTRIES: usize = 20_000;

/// A package folder that `add` fills, and what it left out.
pub struct Unpacked {
    root: PathBuf,
    entries: usize,
    bytes: u64,
    skipped: Vec<String>,
}

impl Unpacked {
    /// A new, empty package folder at `root`.
    fn new(root: &Path) -> Result<Unpacked, String> {
        std::fs::create_dir(root).map_err(|e| format!("cannot make {}: {e}", root.display()))?;
        Ok(Unpacked {
            root: root.to_path_buf(),
            entries: 0,
            bytes: 0,
            skipped: Vec::new(),
        })
    }

    /// What was left out, one line each: its path and what it was.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// Count one more file or folder.
    fn count(&mut self) -> Result<(), String> {
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(format!(
                "not added: the package holds more than {MAX_ENTRIES} files and folders"
            ));
        }
        Ok(())
    }

    /// Make the folder `relative` (and its parents).
    fn folder(&mut self, relative: &Path) -> Result<(), String> {
        self.count()?;
        let path = self.root.join(relative);
        std::fs::create_dir_all(&path).map_err(|e| format!("cannot make {}: {e}", path.display()))
    }

    /// Write the file `relative` from `content`, which says it holds
    /// `size` bytes; a later file of the same path replaces an earlier one.
    fn file(
        &mut self,
        relative: &Path,
        content: &mut dyn Read,
        size: u64,
        executable: bool,
    ) -> Result<(), String> {
        self.count()?;
        let left = MAX_BYTES - self.bytes;
        let too_big = || {
            format!(
                "not added: the package's files hold more than {} MiB",
                MAX_BYTES >> 20
            )
        };
        if size > left {
            return Err(too_big());
        }
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        }
        let mode = if executable { 0o755 } else { 0o644 };
        let mut file = create(&path, mode)?;
        let copied = io::copy(&mut content.take(left + 1), &mut file)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        if copied > left {
            return Err(too_big());
        }
        self.bytes += copied;
        // The umask may have taken bits away; the mode is exactly this.
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("cannot set the mode of {}: {e}", path.display()))
    }

    /// Leave `relative`, a `kind`, out.
    fn skip(&mut self, relative: &Path, kind: &str) {
        self.skipped
            .push(format!("{} ({kind})", escaped(&relative.to_string_lossy())));
    }
}

/// Create the file `path` with `mode`, replacing a regular file there; a
/// link or anything else at the path is not followed or replaced.
fn create(path: &Path, mode: u32) -> Result<File, String> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        std::fs::remove_file(path)
            .map_err(|e| format!("cannot replace {}: {e}", path.display()))?;
    }
    // `create_new` (O_EXCL) never follows a link at the path.
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Replace the regular file `path` with `text` (never through a link).
pub fn replace_file(path: &Path, text: &str) -> Result<(), String> {
    let mut file = create(path, 0o644)?;
    file.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The text of the regular file `path`, at most `limit` bytes; `None` if
/// there is nothing at the path. Anything but a regular file is an error.
pub fn read_small(path: &Path, limit: u64) -> Result<Option<String>, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if !meta.file_type().is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if meta.len() > limit {
        return Err(format!(
            "{} holds more than {} KiB",
            path.display(),
            limit >> 10
        ));
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `path` as a path inside the package: its components plain names, none
/// holding a control character; `.` components are dropped.
fn inside(path: &Path) -> Result<PathBuf, String> {
    let shown = || escaped(&path.to_string_lossy()).into_owned();
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => {
                let name = name.to_str().ok_or_else(|| {
                    format!(
                        "not added: the package holds a path that is not UTF-8: {}",
                        shown()
                    )
                })?;
                if name.chars().any(char::is_control) {
                    return Err(format!(
                        "not added: the package holds a file whose name has a control character: {}",
                        shown()
                    ));
                }
                out.push(name);
            }
            Component::CurDir => {}
            _ => {
                return Err(format!(
                    "not added: the package holds a path that leaves it: {}",
                    shown()
                ))
            }
        }
    }
    Ok(out)
}

/// Unpack the tarball `file` into the new folder `into`: the package (the
/// tarball's single top folder, as npm packs it).
pub fn untar(file: &Path, into: &Path) -> Result<Unpacked, String> {
    let cannot = |e: io::Error| format!("cannot unpack {}: {e}", file.display());
    let compressed = File::open(file).map_err(cannot)?;
    // Headers, long names and padding count too, so the stream is bounded
    // above what the files may hold.
    let stream = Bounded {
        inner: flate2::read::GzDecoder::new(compressed),
        left: MAX_BYTES + MAX_ENTRIES as u64 * 4096,
    };
    let mut archive = tar::Archive::new(stream);
    let mut unpacked = Unpacked::new(into)?;
    let mut top: Option<PathBuf> = None;
    let one_folder = || format!("{} does not hold one package folder", file.display());
    for entry in archive.entries().map_err(cannot)? {
        let mut entry = entry.map_err(cannot)?;
        let path = inside(&entry.path().map_err(cannot)?)?;
        let mut components = path.components();
        let Some(first) = components.next() else {
            continue;
        };
        let first = PathBuf::from(first.as_os_str());
        match &top {
            None => top = Some(first),
            Some(top) if *top != first => return Err(one_folder()),
            Some(_) => {}
        }
        let relative = components.as_path().to_path_buf();
        let kind = entry.header().entry_type();
        if relative.as_os_str().is_empty() {
            if kind.is_dir() {
                continue;
            }
            return Err(one_folder());
        }
        use tar::EntryType;
        match kind {
            EntryType::Regular | EntryType::Continuous => {
                let executable = entry.header().mode().is_ok_and(|m| m & 0o111 != 0);
                let size = entry.size();
                unpacked.file(&relative, &mut entry, size, executable)?;
            }
            EntryType::Directory => unpacked.folder(&relative)?,
            EntryType::Symlink => unpacked.skip(&relative, "a symbolic link"),
            EntryType::Link => unpacked.skip(&relative, "a hard link"),
            EntryType::Char => unpacked.skip(&relative, "a character device"),
            EntryType::Block => unpacked.skip(&relative, "a block device"),
            EntryType::Fifo => unpacked.skip(&relative, "a FIFO"),
            EntryType::XGlobalHeader => {}
            _ => unpacked.skip(&relative, "an entry of another kind"),
        }
    }
    if top.is_none() {
        return Err(one_folder());
    }
    Ok(unpacked)
}

/// Copy the folder `from` into the new folder `to`, without
/// `node_modules` (npm installs the dependencies afresh) and `.git`.
pub fn copy_folder(from: &Path, to: &Path) -> Result<Unpacked, String> {
    let mut unpacked = Unpacked::new(to)?;
    copy_into(from, Path::new(""), &mut unpacked)?;
    Ok(unpacked)
}

fn copy_into(from: &Path, relative: &Path, unpacked: &mut Unpacked) -> Result<(), String> {
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name();
        if name == "node_modules" || name == ".git" {
            continue;
        }
        let source = entry.path();
        let target = inside(&relative.join(&name))?;
        // The entry's own kind: a link is not followed.
        let meta =
            std::fs::symlink_metadata(&source).map_err(|e| format!("{}: {e}", source.display()))?;
        let kind = meta.file_type();
        if kind.is_dir() {
            unpacked.folder(&target)?;
            copy_into(&source, &target, unpacked)?;
        } else if kind.is_file() {
            let mut file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(&source)
                .map_err(|e| format!("cannot copy {}: {e}", source.display()))?;
            let executable = meta.permissions().mode() & 0o111 != 0;
            unpacked.file(&target, &mut file, meta.len(), executable)?;
        } else {
            use std::os::unix::fs::FileTypeExt;
            let what = if kind.is_symlink() {
                "a symbolic link"
            } else if kind.is_char_device() {
                "a character device"
            } else if kind.is_block_device() {
                "a block device"
            } else if kind.is_fifo() {
                "a FIFO"
            } else {
                "a socket"
            };
            unpacked.skip(&target, what);
        }
    }
    Ok(())
}

/// A reader that fails once more than `left` bytes were read from `inner`.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf
            .len()
            .min(usize::try_from(self.left + 1).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..want])?;
        self.left = self.left.checked_sub(read as u64).ok_or_else(|| {
            io::Error::other(format!("it unpacks to more than {} MiB", MAX_BYTES >> 20))
        })?;
        Ok(read)
    }
}
