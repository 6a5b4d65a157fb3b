//! The host's services a flavor may offer its plugins: file access within
//! the directories a manifest grants (`capabilities.read` to read,
//! `capabilities.write` to read and write; everything else is denied), and
//! starting processes when it grants `capabilities.exec`.
//!
//! A path is judged after it is made absolute (against the host's working
//! directory), cleared of `.` and `..`, and resolved through symlinks as far
//! as it exists, so neither `..` nor a symlink leads out of a grant.
//! Replies are JSON text, `{"ok": value}` or `{"error": message, "code":
//! "EACCES" | "ENOENT" | ...}`, which the JavaScript side turns into a value
//! or a thrown error with node's `code`.

use serde_json::{json, Value};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the host offers a plugin of a flavor with services.
#[derive(Debug, Clone)]
pub struct Services {
    /// Files, within the manifest's grants; its `cwd` is the host's
    /// working directory.
    pub files: FileAccess,
    /// Whether the manifest grants `exec`.
    pub exec: bool,
}

/// What a plugin may touch, with every grant resolved at load.
#[derive(Debug, Clone, Default)]
pub struct FileAccess {
    /// The directory relative paths are resolved against.
    pub cwd: PathBuf,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
}

/// The largest file a plugin may read at once.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

impl FileAccess {
    /// Grants relative to `base` (the plugin's folder); paths a plugin
    /// names are resolved against `cwd`. A granted directory that does not
    /// exist grants nothing.
    pub fn new(cwd: PathBuf, base: &Path, read: &[PathBuf], write: &[PathBuf]) -> Self {
        let resolve = |dirs: &[PathBuf]| -> Vec<PathBuf> {
            dirs.iter()
                .filter_map(|d| base.join(d).canonicalize().ok())
                .collect()
        };
        let write = resolve(write);
        let mut read = resolve(read);
        read.extend(write.iter().cloned());
        Self { cwd, read, write }
    }

    /// Run one operation and reply as JSON text. `op` is one of `read`,
    /// `write`, `append`, `mkdir`, `exists`, `stat`, `readdir`, `access`
    /// (`data` is node's mode: bit 2 asks for write access).
    pub fn run(&self, op: &str, path: &str, data: Option<String>) -> String {
        let reply = match self.dispatch(op, path, data) {
            Ok(value) => json!({ "ok": value }),
            Err((code, message)) => json!({ "error": message, "code": code }),
        };
        reply.to_string()
    }

    fn dispatch(
        &self,
        op: &str,
        path: &str,
        data: Option<String>,
    ) -> Result<Value, (&'static str, String)> {
        let writes = match op {
            "write" | "append" | "mkdir" => true,
            "access" => data
                .as_deref()
                .and_then(|m| m.parse::<u32>().ok())
                .is_some_and(|mode| mode & 2 != 0),
            "read" | "exists" | "stat" | "readdir" => false,
            other => return Err(("ENOSYS", format!("node:fs: `{other}` is not available"))),
        };
        let target = self.check(path, writes)?;
        let io_err = |e: io::Error| (code_of(&e), format!("node:fs: {op} {path}: {e}"));
        match op {
            "read" => {
                let size = std::fs::metadata(&target).map_err(io_err)?.len();
                if size > MAX_READ_BYTES {
                    return Err((
                        "EFBIG",
                        format!(
                            "node:fs: {path} is {size} bytes, over the limit of {MAX_READ_BYTES}"
                        ),
                    ));
                }
                std::fs::read_to_string(&target)
                    .map(Value::from)
                    .map_err(io_err)
            }
            "write" => std::fs::write(&target, data.unwrap_or_default())
                .map(|_| Value::Null)
                .map_err(io_err),
            "append" => {
                use std::io::Write;
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&target)
                    .and_then(|mut f| f.write_all(data.unwrap_or_default().as_bytes()))
                    .map(|_| Value::Null)
                    .map_err(io_err)
            }
            "mkdir" => std::fs::create_dir_all(&target)
                .map(|_| Value::Null)
                .map_err(io_err),
            "exists" => Ok(Value::from(target.exists())),
            "stat" => {
                let meta = std::fs::metadata(&target).map_err(io_err)?;
                let mtime_ms = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
                Ok(json!({
                    "size": meta.len(),
                    "mtimeMs": mtime_ms,
                    "isFile": meta.is_file(),
                    "isDirectory": meta.is_dir(),
                }))
            }
            "readdir" => {
                let mut names: Vec<String> = std::fs::read_dir(&target)
                    .map_err(io_err)?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                Ok(Value::from(names))
            }
            // "access": the grant was the check; the file must exist.
            _ => std::fs::metadata(&target)
                .map(|_| Value::Null)
                .map_err(io_err),
        }
    }

    /// The resolved path, if the grants allow it.
    fn check(&self, path: &str, write: bool) -> Result<PathBuf, (&'static str, String)> {
        let target = resolve(&self.cwd.join(path));
        let grants = if write { &self.write } else { &self.read };
        if grants.iter().any(|g| target.starts_with(g)) {
            return Ok(target);
        }
        let (verb, key) = if write {
            ("writing", "write")
        } else {
            ("reading", "read")
        };
        Err((
            "EACCES",
            format!(
                "node:fs: {verb} {} is not granted: add its folder to `capabilities.{key}` in the plugin's plugin.toml",
                target.display()
            ),
        ))
    }
}

/// The longest a process may run when the call names no timeout.
pub const MAX_EXEC: Duration = Duration::from_secs(300);

/// Run `command` with `args` in `cwd` (no shell), as node's `spawn` without a shell does, and
/// reply `{stdout, stderr, code, killed}` as JSON text. The process is
/// killed after `timeout` (at most [`MAX_EXEC`]).
pub fn exec(
    command: &str,
    args: &[String],
    cwd: &std::path::Path,
    timeout: Option<Duration>,
) -> String {
    let started = Command::new(command)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(e) => {
            return json!({"stdout": "", "stderr": format!("{command}: {e}"), "code": 127, "killed": false})
                .to_string()
        }
    };
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout.unwrap_or(MAX_EXEC).min(MAX_EXEC);
    let mut killed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                killed = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    json!({
        "stdout": stdout.join().unwrap_or_default(),
        "stderr": stderr.join().unwrap_or_default(),
        "code": status.and_then(|s| s.code()).unwrap_or(if killed { 143 } else { 1 }),
        "killed": killed,
    })
    .to_string()
}

/// `path` without `.` and `..`, with its longest existing ancestor resolved
/// through symlinks.
fn resolve(path: &Path) -> PathBuf {
    let mut clean = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    let mut rest = Vec::new();
    let mut existing = clean.as_path();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return clean,
        }
    }
}

fn code_of(error: &io::Error) -> &'static str {
    match error.kind() {
        io::ErrorKind::NotFound => "ENOENT",
        io::ErrorKind::PermissionDenied => "EACCES",
        io::ErrorKind::AlreadyExists => "EEXIST",
        io::ErrorKind::IsADirectory => "EISDIR",
        io::ErrorKind::NotADirectory => "ENOTDIR",
        _ => "EIO",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(access: &FileAccess, op: &str, path: &str, data: Option<&str>) -> Value {
        serde_json::from_str(&access.run(op, path, data.map(String::from))).unwrap()
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
        let access = FileAccess::new(
            base.to_path_buf(),
            base,
            &[PathBuf::from("data")],
            &[PathBuf::from("out")],
        );
        assert_eq!(
            reply(&access, "read", "data/a.txt", None),
            json!({"ok": "hello"})
        );
        assert_eq!(
            reply(&access, "read", "data/../secret/key", None)["code"],
            "EACCES"
        );
        assert_eq!(
            reply(&access, "write", "data/b.txt", Some("x"))["code"],
            "EACCES"
        );
        assert_eq!(
            reply(&access, "write", "out/new/../b.txt", Some("x")),
            json!({"ok": null})
        );
        assert_eq!(
            reply(&access, "read", "out/b.txt", None),
            json!({"ok": "x"})
        );
        assert_eq!(
            reply(&access, "read", "data/missing", None)["code"],
            "ENOENT"
        );
        assert_eq!(
            reply(&access, "access", "data/a.txt", Some("2"))["code"],
            "EACCES"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_does_not_lead_out_of_a_grant() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir(base.join("out")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("out/link")).unwrap();
        let access = FileAccess::new(base.to_path_buf(), base, &[], &[PathBuf::from("out")]);
        let denied = reply(&access, "write", "out/link/x", Some("x"));
        assert_eq!(denied["code"], "EACCES", "{denied}");
        assert!(!base.join("elsewhere/x").exists());
    }
}
