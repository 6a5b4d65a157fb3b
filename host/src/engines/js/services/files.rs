//! Files within the directories the manifest grants, through the host's
//! one file-grants module ([`crate::load::grants`]): each operation a
//! [`FileOp`], named in JavaScript by its serde name (declared for the
//! JavaScript as `FileOp` in `host.d.ts`; Node's bootstrap serves the same
//! operations in `node/files.js`, but those [`FileOp::node_lacks`] names).
//!
//! Replies are JSON text, `{"ok": value}` or `{"error": message, "code":
//! "EACCES" | "ENOENT" | ...}`, which the JavaScript side turns into a value
//! or a thrown error with node's `code`. Messages start with the module the
//! plugin imported (`yohost` or `node:fs`); a refusal of a path outside the
//! grants also carries `"granted": false`. Bytes travel as base64 text.
//! Watches ([`FileOp::Watch`], see [`super::super::watch`]) follow the same
//! rules as reads.

use super::dry_run::DryRun;
use crate::engines::js::watch::{WatchError, Watches};
use crate::load::grants::{Access, FileError, Grants, WriteMode};
use base64::Engine as _;
use serde::de::IntoDeserializer;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;

/// The largest file a plugin may read at once.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// A file operation, by the name JavaScript gives it (`fs(op, path, data)`
/// of the host's services).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum FileOp {
    /// Text, malformed UTF-8 replaced as node does.
    Read,
    /// Bytes, as base64.
    ReadBytes,
    /// Replace a file with text `data`.
    Write,
    /// Add text `data` to a file.
    Append,
    /// Replace a file with bytes (`data` in base64).
    WriteBytes,
    /// Add bytes (`data` in base64) to a file.
    AppendBytes,
    /// Make a folder; its parents too when `data` is `"recursive"`.
    Mkdir,
    /// Remove a file, or an empty folder when `data` is `"dir"`.
    Rm,
    /// Move to `data`, relative as the path is.
    Rename,
    /// Whether the path exists inside the grants: false, never an error,
    /// for one that is missing or not granted.
    Exists,
    /// `{size, mtimeMs, isFile, isDirectory}`.
    Stat,
    /// A folder's names, sorted.
    Readdir,
    /// A folder's `{name, kind}`s, sorted by name.
    Entries,
    /// Whether it may be read (or, when `data`'s mode has bit 2, written).
    Access,
    /// Start watching a file, or a folder (its tree when `data` is
    /// `"recursive"`); replies the watch's id.
    Watch,
}

impl FileOp {
    /// Every operation, in `host.d.ts`'s order.
    #[cfg(any(test, feature = "node"))]
    pub const ALL: [FileOp; 15] = [
        FileOp::Read,
        FileOp::ReadBytes,
        FileOp::Write,
        FileOp::Append,
        FileOp::WriteBytes,
        FileOp::AppendBytes,
        FileOp::Mkdir,
        FileOp::Rm,
        FileOp::Rename,
        FileOp::Exists,
        FileOp::Stat,
        FileOp::Readdir,
        FileOp::Entries,
        FileOp::Access,
        FileOp::Watch,
    ];

    /// The operation JavaScript names `name`, if there is one.
    pub fn named(name: &str) -> Option<FileOp> {
        let name: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
            name.into_deserializer();
        FileOp::deserialize(name).ok()
    }

    /// Whether it changes files: a check notes it instead.
    pub fn mutates(self) -> bool {
        match self {
            FileOp::Write
            | FileOp::Append
            | FileOp::WriteBytes
            | FileOp::AppendBytes
            | FileOp::Mkdir
            | FileOp::Rm
            | FileOp::Rename => true,
            FileOp::Read
            | FileOp::ReadBytes
            | FileOp::Exists
            | FileOp::Stat
            | FileOp::Readdir
            | FileOp::Entries
            | FileOp::Access
            | FileOp::Watch => false,
        }
    }

    /// The operations Node's bootstrap does not serve, each with why: its
    /// `init` carries them, and it names the reason when one is asked for.
    #[cfg(feature = "node")]
    pub fn lacking_on_node() -> std::collections::BTreeMap<FileOp, &'static str> {
        FileOp::ALL
            .into_iter()
            .filter_map(|op| op.node_lacks().map(|why| (op, why)))
            .collect()
    }

    /// Why Node's bootstrap does not serve it, if it does not (`NodeFileOp`
    /// in `host.d.ts` leaves out the same operations).
    #[cfg(feature = "node")]
    pub fn node_lacks(self) -> Option<&'static str> {
        match self {
            FileOp::Watch => Some(
                "on Node a plugin's `fs.watch` is Node's own, within the permission model, \
                 and no flavor module watches through the host: the host's watch delivers \
                 events through the embedded engine's event loop",
            ),
            _ => None,
        }
    }
}

/// A plugin's files: its grants, the directory its relative paths start
/// from, and the module name its errors carry.
#[derive(Debug, Clone)]
pub struct FileAccess {
    grants: Grants,
    relative_to: PathBuf,
    module: &'static str,
    dry_run: Option<DryRun>,
}

impl FileAccess {
    /// Access within `grants`; relative paths are resolved against
    /// `relative_to`; error messages start with `module`.
    pub fn new(grants: Grants, relative_to: PathBuf, module: &'static str) -> Self {
        Self {
            grants,
            relative_to,
            module,
            dry_run: None,
        }
    }

    /// The same access for a check: writes are noted in `dry_run`, not
    /// performed; one outside the write grants is noted as denied and
    /// fails as it would.
    pub fn dry_run(self, dry_run: DryRun) -> Self {
        Self {
            dry_run: Some(dry_run),
            ..self
        }
    }

    /// Run operation `op` (a [`FileOp`]'s name) on `path` with `data`, and
    /// reply as JSON text; a watch starts in `watches`. A name that is no
    /// operation is `ENOSYS`.
    pub fn run(&self, watches: &Watches, op: &str, path: &str, data: Option<String>) -> String {
        let reply = match FileOp::named(op) {
            Some(file_op) => match self.dispatch(watches, file_op, op, path, data) {
                Ok(value) => json!({ "ok": value }),
                Err(Refusal::File(e)) => self.file_error(op, &e),
                Err(Refusal::Base64) => json!({
                    "error": format!("{}: {op}: the data is not base64", self.module),
                    "code": "EINVAL",
                }),
                Err(Refusal::Watch(e)) => json!({
                    "error": format!("{}: {op} {path}: {e}", self.module),
                    "code": e.code(),
                }),
            },
            None => json!({
                "error": format!("{}: `{op}` is not available", self.module),
                "code": "ENOSYS",
            }),
        };
        reply.to_string()
    }

    /// The reply for a refused file operation `op`: outside the grants it
    /// says so (`"granted": false`).
    fn file_error(&self, op: &str, e: &FileError) -> Value {
        match e {
            FileError::NotGranted { .. } => json!({
                "error": format!("{}: {e}", self.module),
                "code": e.code(),
                "granted": false,
            }),
            _ => json!({ "error": format!("{}: {op} {e}", self.module), "code": e.code() }),
        }
    }

    /// Run `op` (named `name`). A check ([`FileAccess::dry_run`]) notes
    /// what changes files instead; it watches, since a watch changes
    /// nothing.
    fn dispatch(
        &self,
        watches: &Watches,
        op: FileOp,
        name: &str,
        path: &str,
        data: Option<String>,
    ) -> Result<Value, Refusal> {
        let target = self.relative_to.join(path);
        let grants = &self.grants;
        let done = |result: Result<(), FileError>| result.map(|()| Value::Null);
        let base64 = base64::engine::general_purpose::STANDARD;
        let text = || data.clone().unwrap_or_default().into_bytes();
        let bytes = || {
            base64
                .decode(data.as_deref().unwrap_or_default())
                .map_err(|_| Refusal::Base64)
        };
        if let (Some(dry_run), true) = (&self.dry_run, op.mutates()) {
            let what = match op {
                FileOp::Mkdir => "create the folder".to_string(),
                FileOp::Rm => "remove".to_string(),
                FileOp::Rename => "rename".to_string(),
                FileOp::WriteBytes | FileOp::AppendBytes => {
                    let verb = name.trim_end_matches("_bytes");
                    format!("{verb} {} bytes to", bytes()?.len())
                }
                _ => format!("{name} {} bytes to", data.as_deref().map_or(0, str::len)),
            };
            // Judged against the grants as the real write would be: one
            // outside them is reported as denied, and fails as it would.
            // A rename writes where it leads too.
            let renamed = (op == FileOp::Rename)
                .then(|| self.relative_to.join(data.as_deref().unwrap_or_default()));
            for path in std::iter::once(&target).chain(renamed.as_ref()) {
                if let Err(denied) = grants.permits(path, Access::Write) {
                    dry_run.note(format!("{} would be denied: {denied}", self.module));
                    return Err(Refusal::File(denied));
                }
            }
            let to = renamed.map_or(String::new(), |to| format!(" to {}", to.display()));
            dry_run.note(format!(
                "{} would {what} {}{to}",
                self.module,
                target.display()
            ));
            return Ok(Value::Null);
        }
        Ok(match op {
            FileOp::Read => {
                let bytes = grants.read_bytes(&target, MAX_READ_BYTES)?;
                Value::from(String::from_utf8_lossy(&bytes))
            }
            FileOp::ReadBytes => {
                Value::from(base64.encode(grants.read_bytes(&target, MAX_READ_BYTES)?))
            }
            FileOp::Write => done(grants.write(&target, &text(), WriteMode::Replace))?,
            FileOp::Append => done(grants.write(&target, &text(), WriteMode::Append))?,
            FileOp::WriteBytes => done(grants.write(&target, &bytes()?, WriteMode::Replace))?,
            FileOp::AppendBytes => done(grants.write(&target, &bytes()?, WriteMode::Append))?,
            FileOp::Mkdir if data.as_deref() == Some("recursive") => {
                done(grants.create_dir_all(&target))?
            }
            FileOp::Mkdir => done(grants.create_dir(&target))?,
            FileOp::Rm => done(grants.remove(&target, data.as_deref() == Some("dir")))?,
            // `data` is where it goes, relative as `path` is.
            FileOp::Rename => done(grants.rename(
                &target,
                &self.relative_to.join(data.as_deref().unwrap_or_default()),
            ))?,
            FileOp::Exists => Value::from(grants.exists(&target)),
            FileOp::Stat => {
                let info = grants.stat(&target, Access::Read)?;
                let mtime_ms = info
                    .modified
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
                json!({
                    "size": info.size,
                    "mtimeMs": mtime_ms,
                    "isFile": info.is_file,
                    "isDirectory": info.is_dir,
                })
            }
            FileOp::Readdir => {
                let names = grants.list(&target)?.into_iter().map(|e| e.name);
                Value::from(names.collect::<Vec<_>>())
            }
            FileOp::Entries => json!(grants.list(&target)?),
            FileOp::Access => {
                let writes = data
                    .as_deref()
                    .and_then(|m| m.parse::<u32>().ok())
                    .is_some_and(|mode| mode & 2 != 0);
                let access = if writes { Access::Write } else { Access::Read };
                grants.stat(&target, access)?;
                Value::Null
            }
            // Inside the read grants; a folder's tree when `data` is
            // "recursive".
            FileOp::Watch => {
                let real = grants.real_path(&target, Access::Read)?;
                let recursive = data.as_deref() == Some("recursive");
                Value::from(watches.start(real, recursive).map_err(|e| match e {
                    WatchError::File(e) => Refusal::File(e),
                    e => Refusal::Watch(e),
                })?)
            }
        })
    }
}

/// Why a file operation was refused.
enum Refusal {
    File(FileError),
    /// Bytes to write that are not base64.
    Base64,
    /// A watch past a budget, or one `notify` would not start.
    Watch(WatchError),
}

impl From<FileError> for Refusal {
    fn from(e: FileError) -> Self {
        Refusal::File(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declaration the JavaScript is checked against.
    const HOST_D_TS: &str = include_str!("../host.d.ts");

    /// The string literals of type alias `name` in `host.d.ts`.
    fn declared(name: &str) -> Vec<String> {
        let start = HOST_D_TS
            .find(&format!("\ntype {name} ="))
            .unwrap_or_else(|| panic!("host.d.ts declares no {name}"));
        let alias = &HOST_D_TS[start..];
        let alias = &alias[..alias.find(';').expect("the alias ends")];
        alias
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    fn name(op: FileOp) -> String {
        serde_json::to_value(op)
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Fails to build when a variant is added without being listed in
    /// [`FileOp::ALL`].
    fn listed(op: FileOp) -> bool {
        match op {
            FileOp::Read
            | FileOp::ReadBytes
            | FileOp::Write
            | FileOp::Append
            | FileOp::WriteBytes
            | FileOp::AppendBytes
            | FileOp::Mkdir
            | FileOp::Rm
            | FileOp::Rename
            | FileOp::Exists
            | FileOp::Stat
            | FileOp::Readdir
            | FileOp::Entries
            | FileOp::Access
            | FileOp::Watch => FileOp::ALL.contains(&op),
        }
    }

    #[test]
    fn the_operations_are_the_ones_the_javascript_is_checked_against() {
        assert!(FileOp::ALL.into_iter().all(listed));
        let names: Vec<String> = FileOp::ALL.into_iter().map(name).collect();
        assert_eq!(names, declared("FileOp"));
        for op in FileOp::ALL {
            assert_eq!(FileOp::named(&name(op)), Some(op));
        }
        assert_eq!(FileOp::named("unlink"), None);
        assert_eq!(FileOp::named("Read"), None);
    }

    #[cfg(feature = "node")]
    #[test]
    fn what_node_lacks_is_declared_to_the_javascript_with_a_reason() {
        let lacking = FileOp::lacking_on_node();
        assert!(lacking.values().all(|why| why.len() > 20), "{lacking:?}");
        let lacks: Vec<String> = lacking.into_keys().map(name).collect();
        assert_eq!(lacks, declared("NodeFileOp"));
    }

    #[test]
    fn an_unknown_operation_is_not_available() {
        let dir = tempfile::tempdir().unwrap();
        let grants = Grants::open(dir.path(), &Default::default()).unwrap();
        let files = FileAccess::new(grants, dir.path().to_path_buf(), "yohost");
        let reply: Value =
            serde_json::from_str(&files.run(&Watches::new(|| {}), "unlink", "x", None)).unwrap();
        assert_eq!(reply["code"], "ENOSYS");
        assert_eq!(reply["error"], "yohost: `unlink` is not available");
    }
}
