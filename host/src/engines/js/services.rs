//! The host's services a flavor may offer its plugins: files within the
//! directories the manifest grants (through the host's one file-grants
//! module, [`crate::load::grants`]), processes when it grants
//! `capabilities.exec`, and HTTP requests ([`super::fetch`]) to the hosts
//! `capabilities.network` grants.
//!
//! File replies are JSON text, `{"ok": value}` or `{"error": message,
//! "code": "EACCES" | "ENOENT" | ...}`, which the JavaScript side turns into
//! a value or a thrown error with node's `code`. Messages start with the
//! module the plugin imported (`yohost` or `node:fs`); a refusal of a path
//! outside the grants also carries `"granted": false`. Bytes travel as
//! base64 text.
//!
//! Watches ([`FileAccess::watch`], see [`super::watch`]) follow the same
//! rules as reads.
//!
//! A process runs off the engine thread ([`spawn`]): its reply arrives
//! later, and it is killed at its deadline (the calling hook's), when the
//! run is cancelled, or when the plugin is dropped.

use super::watch::{WatchError, Watches};
use crate::load::grants::{Access, FileError, Grants, WriteMode};
use crate::load::manifest::Network;
use crate::model::limits::MAX_REPLY_BYTES;
use crate::model::sync::lock;
use crate::sandbox::{ProcessSandbox, ProcessSlot};
use base64::Engine as _;
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What the host offers a plugin of a flavor with services.
#[derive(Debug, Clone)]
pub struct Services {
    /// Files, within the manifest's grants.
    pub files: FileAccess,
    /// The host's working directory: pi's `ctx.cwd`, and where processes
    /// start unless they name a directory.
    pub cwd: PathBuf,
    /// Whether the manifest grants `exec`.
    pub exec: bool,
    /// The kernel sandbox processes start in (when `exec` is granted).
    pub sandbox: Option<ProcessSandbox>,
    /// The hosts `fetch` may reach (none when the flavor offers no
    /// `fetch`).
    pub network: Network,
    /// Set when the plugin loads for a check: processes are reported here,
    /// not started; without `exec`, as denied.
    pub dry_run: Option<DryRun>,
}

/// What a plugin loaded for a check would have done: the processes it
/// would have started and the files it would have written, as warnings
/// (at most [`DryRun::MAX_NOTES`], then a count).
#[derive(Debug, Clone, Default)]
pub struct DryRun {
    notes: Arc<std::sync::Mutex<(Vec<String>, usize)>>,
}

impl DryRun {
    /// The most notes kept; the rest are counted.
    pub const MAX_NOTES: usize = 20;

    /// Note that the plugin would have done `what`.
    pub fn note(&self, what: String) {
        let mut notes = lock(&self.notes);
        if notes.0.len() < Self::MAX_NOTES {
            notes.0.push(format!("in a check, not done: {what}"));
        } else {
            notes.1 += 1;
        }
    }

    /// The notes so far, and how many more there were; empties the list.
    pub fn take(&self) -> Vec<String> {
        let mut notes = lock(&self.notes);
        let (mut list, more) = std::mem::take(&mut *notes);
        if more > 0 {
            list.push(format!(
                "in a check, not done: {more} more processes, writes or requests"
            ));
        }
        list
    }
}

/// The largest file a plugin may read at once.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

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

    /// Run one operation and reply as JSON text. `op` is one of `read`
    /// (UTF-8, malformed sequences replaced as node does), `read_bytes`
    /// (base64), `write`, `append` (text), `write_bytes`, `append_bytes`
    /// (`data` in base64), `mkdir` (its parents too when `data` is
    /// `"recursive"`), `rm` (an empty directory when `data` is `"dir"`),
    /// `exists`, `stat`, `readdir` (names), `entries` (`{name, kind}`),
    /// `access` (`data` is node's mode: bit 2 asks for write access).
    /// `exists` is false, not an error, for a path that is missing or not
    /// granted.
    pub fn run(&self, op: &str, path: &str, data: Option<String>) -> String {
        let reply = match self.dispatch(op, path, data) {
            Ok(value) => json!({ "ok": value }),
            Err(Refusal::File(e)) => self.file_error(op, &e),
            Err(Refusal::Base64) => json!({
                "error": format!("{}: {op}: the data is not base64", self.module),
                "code": "EINVAL",
            }),
            Err(Refusal::Unknown) => json!({
                "error": format!("{}: `{op}` is not available", self.module),
                "code": "ENOSYS",
            }),
        };
        reply.to_string()
    }

    /// Start watching `path` (a file, or a folder, with what is below it
    /// when `recursive`) inside the read grants, in `watches`; replies as
    /// [`FileAccess::run`] does, the watch's id when it started. A check
    /// ([`FileAccess::dry_run`]) watches too: a watch changes nothing.
    pub fn watch(&self, watches: &Watches, path: &str, recursive: bool) -> String {
        let started = self
            .grants
            .real_path(&self.relative_to.join(path), Access::Read)
            .map_err(WatchError::File)
            .and_then(|real| watches.start(real, recursive));
        let reply = match started {
            Ok(id) => json!({ "ok": id }),
            Err(WatchError::File(e)) => self.file_error("watch", &e),
            Err(e) => json!({
                "error": format!("{}: watch {path}: {e}", self.module),
                "code": e.code(),
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

    fn dispatch(&self, op: &str, path: &str, data: Option<String>) -> Result<Value, Refusal> {
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
        let mutates = matches!(
            op,
            "write" | "append" | "write_bytes" | "append_bytes" | "mkdir" | "rm" | "rename"
        );
        if let (Some(dry_run), true) = (&self.dry_run, mutates) {
            let what = match op {
                "mkdir" => "create the folder".to_string(),
                "rm" => "remove".to_string(),
                "rename" => "rename".to_string(),
                "write_bytes" | "append_bytes" => {
                    let verb = op.trim_end_matches("_bytes");
                    format!("{verb} {} bytes to", bytes()?.len())
                }
                _ => format!("{op} {} bytes to", data.as_deref().map_or(0, str::len)),
            };
            // Judged against the grants as the real write would be: one
            // outside them is reported as denied, and fails as it would.
            // A rename writes where it leads too.
            let renamed = (op == "rename")
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
            "read" => {
                let bytes = grants.read_bytes(&target, MAX_READ_BYTES)?;
                Value::from(String::from_utf8_lossy(&bytes))
            }
            "read_bytes" => Value::from(base64.encode(grants.read_bytes(&target, MAX_READ_BYTES)?)),
            "write" => done(grants.write(&target, &text(), WriteMode::Replace))?,
            "append" => done(grants.write(&target, &text(), WriteMode::Append))?,
            "write_bytes" => done(grants.write(&target, &bytes()?, WriteMode::Replace))?,
            "append_bytes" => done(grants.write(&target, &bytes()?, WriteMode::Append))?,
            "mkdir" if data.as_deref() == Some("recursive") => {
                done(grants.create_dir_all(&target))?
            }
            "mkdir" => done(grants.create_dir(&target))?,
            "rm" => done(grants.remove(&target, data.as_deref() == Some("dir")))?,
            // `data` is where it goes, relative as `path` is.
            "rename" => done(grants.rename(
                &target,
                &self.relative_to.join(data.as_deref().unwrap_or_default()),
            ))?,
            "exists" => Value::from(grants.exists(&target)),
            "stat" => {
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
            "readdir" => {
                let names = grants.list(&target)?.into_iter().map(|e| e.name);
                Value::from(names.collect::<Vec<_>>())
            }
            "entries" => json!(grants.list(&target)?),
            "access" => {
                let writes = data
                    .as_deref()
                    .and_then(|m| m.parse::<u32>().ok())
                    .is_some_and(|mode| mode & 2 != 0);
                let access = if writes { Access::Write } else { Access::Read };
                grants.stat(&target, access)?;
                Value::Null
            }
            _ => return Err(Refusal::Unknown),
        })
    }
}

/// Why a file operation was refused.
enum Refusal {
    File(FileError),
    /// Bytes to write that are not base64.
    Base64,
    Unknown,
}

impl From<FileError> for Refusal {
    fn from(e: FileError) -> Self {
        Refusal::File(e)
    }
}

/// The longest a process may run, whatever its call allows.
pub const MAX_EXEC: Duration = Duration::from_secs(300);

/// The most of a process's stdout (and of its stderr) that is kept; the
/// rest is read and dropped.
pub const MAX_EXEC_OUTPUT: usize = MAX_REPLY_BYTES;

/// A process's own time limit from node's `timeout` option in
/// milliseconds: absent, `0` and `Infinity` set none (the call's deadline
/// still applies); NaN and negative numbers are refused.
pub fn exec_timeout(ms: Option<f64>) -> Result<Option<Duration>, String> {
    match ms {
        None => Ok(None),
        Some(ms) if ms.is_nan() || ms < 0.0 => Err(format!(
            "exec: `timeout` must be a number of milliseconds, 0 or more, not {ms}"
        )),
        Some(0.0) => Ok(None),
        // Infinity, and numbers too large for a Duration: no limit of its own.
        Some(ms) => Ok(Duration::try_from_secs_f64(ms / 1000.0).ok()),
    }
}

/// A process to start: `command` with `args` in `dir`, no shell (as
/// node's `spawn` without a shell).
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Where it starts.
    pub dir: PathBuf,
    /// Changes to the environment it gets from its sandbox (the granted
    /// variables and [`BASE_ENV`](crate::sandbox::BASE_ENV)): a variable
    /// set to a value, or removed (`None`).
    pub env: Vec<(String, Option<String>)>,
}

/// When a running process (or request) must be stopped.
#[derive(Debug, Clone)]
pub struct ExecBounds {
    /// Its deadline.
    pub deadline: Instant,
    /// Any of these cancelled (the runs of the calls it serves).
    pub cancels: Vec<CancellationToken>,
    /// Set by the engine when the plugin is dropped.
    pub kill: Arc<AtomicBool>,
}

impl ExecBounds {
    /// Whether its deadline passed, a cancel fired, or the plugin was
    /// dropped.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.deadline
            || self.kill.load(Ordering::Relaxed)
            || self.cancels.iter().any(CancellationToken::is_cancelled)
    }
}

/// Start `request` on a thread of its own and return at once; `done` gets
/// the reply, `{"ok": {stdout, stderr, code, killed}}` as JSON text, when
/// the process ends or is killed (at the latest at `bounds`' deadline).
/// A process that cannot start replies with code 127.
pub fn spawn(
    request: ExecRequest,
    sandbox: ProcessSandbox,
    bounds: ExecBounds,
    done: impl FnOnce(String) + Send + 'static,
) -> Result<(), String> {
    // Refused before a thread is made for it: a flood of starts costs
    // nothing past the plugin's limit.
    let slot = sandbox
        .reserve()
        .map_err(|e| format!("exec: {}: {e}", request.command))?;
    std::thread::Builder::new()
        .name("yohost-exec".into())
        .spawn(move || done(json!({ "ok": run(&request, &sandbox, slot, &bounds) }).to_string()))
        .map(|_| ())
        .map_err(|e| format!("exec: cannot start a thread: {e}"))
}

/// Run `request` in `sandbox` to its end or to `bounds`, whichever is
/// first; then end whatever it started and left behind.
fn run(
    request: &ExecRequest,
    sandbox: &ProcessSandbox,
    slot: ProcessSlot,
    bounds: &ExecBounds,
) -> Value {
    let mut command = sandbox.command(&request.command);
    command
        .args(&request.args)
        .current_dir(&request.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in &request.env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let mut process = match sandbox.spawn(slot, command, &[]) {
        Ok(process) => process,
        Err(e) => {
            return json!({"stdout": "", "stderr": format!("{}: {e}", request.command), "code": 127, "killed": false})
        }
    };
    let pipes = process.child();
    let stdout = drain(
        pipes
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        pipes
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut pause = Duration::from_millis(1);
    let killed = loop {
        if process.has_exited() {
            break false;
        }
        if bounds.expired() {
            break true;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let status = process.end();
    json!({
        "stdout": stdout.join().unwrap_or_default(),
        "stderr": stderr.join().unwrap_or_default(),
        "code": status.and_then(|s| s.code()).unwrap_or(if killed { 143 } else { 1 }),
        "killed": killed,
    })
}

/// Read `pipe` to its end on a thread, keeping at most
/// [`MAX_EXEC_OUTPUT`] bytes.
fn drain(pipe: Option<Box<dyn Read + Send>>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let Some(mut pipe) = pipe else {
            return String::new();
        };
        let mut kept = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_EXEC_OUTPUT.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// The changes `env` (JSON `{name: value or null}`) asks of the
/// environment a process inherits: a string sets the variable, `null`
/// removes it. A name that is empty or holds `=` or NUL, or a value that
/// holds NUL, is an error, as is anything but such an object.
pub fn exec_env(env: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let env: serde_json::Map<String, Value> = serde_json::from_str(env)
        .map_err(|_| "exec: `env` must be an object of strings (or null to remove one)")?;
    env.into_iter()
        .map(|(name, value)| {
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(format!(
                    "exec: `{name}` is not an environment variable name"
                ));
            }
            match value {
                Value::String(v) if !v.contains('\0') => Ok((name, Some(v))),
                Value::Null => Ok((name, None)),
                _ => Err(format!(
                    "exec: the value of `{name}` must be a string without NUL"
                )),
            }
        })
        .collect()
}

/// The directory a process starts in: `dir` (relative to `cwd`), else
/// `cwd`.
pub fn exec_dir(cwd: &Path, dir: Option<&str>) -> PathBuf {
    dir.map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process sandbox that may write `dir`.
    fn writing(dir: &Path) -> ProcessSandbox {
        let capabilities = crate::load::manifest::Capabilities {
            write: vec![dir.to_path_buf()],
            ..Default::default()
        };
        ProcessSandbox::for_tests(Grants::open(dir, &capabilities).unwrap())
    }

    #[test]
    fn env_changes_are_names_and_strings_or_removals_only() {
        assert_eq!(
            exec_env(r#"{"A": "1", "B": null}"#),
            Ok(vec![("A".into(), Some("1".into())), ("B".into(), None)])
        );
        for bad in [
            r#"{"": "x"}"#,
            r#"{"A=B": "x"}"#,
            "{\"A\\u0000\": \"x\"}",
            r#"{"A": "x\u0000y"}"#,
            r#"{"A": 1}"#,
            r#"["A"]"#,
            "not json",
        ] {
            assert!(exec_env(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timeouts_from_javascript_never_panic() {
        assert_eq!(exec_timeout(None), Ok(None));
        assert_eq!(exec_timeout(Some(0.0)), Ok(None));
        assert_eq!(exec_timeout(Some(f64::INFINITY)), Ok(None));
        assert_eq!(exec_timeout(Some(1e300)), Ok(None));
        assert_eq!(
            exec_timeout(Some(1500.0)),
            Ok(Some(Duration::from_millis(1500)))
        );
        assert!(exec_timeout(Some(f64::NAN)).is_err());
        assert!(exec_timeout(Some(-1.0)).is_err());
        assert!(exec_timeout(Some(f64::NEG_INFINITY)).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_is_killed_at_its_deadline_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let started_file = dir.path().join("started");
        // A pid a plugin process reports is its PID namespace's, so the
        // grandchild is found by a duration no other process sleeps.
        let marker = format!("30.{}", std::process::id());
        let request = ExecRequest {
            command: "sh".into(),
            args: vec![
                "-c".into(),
                format!("sleep {marker} & echo > {}; wait", started_file.display()),
            ],
            dir: dir.path().to_path_buf(),
            env: Vec::new(),
        };
        // Long enough for `sh` to start the grandchild on a loaded machine.
        let bounds = ExecBounds {
            deadline: Instant::now() + Duration::from_millis(1500),
            cancels: vec![],
            kill: Arc::default(),
        };
        let started = Instant::now();
        let sandbox = writing(dir.path());
        let reply = run(&request, &sandbox, sandbox.reserve().unwrap(), &bounds);
        assert!(started.elapsed() < Duration::from_secs(10), "{reply}");
        assert_eq!(reply["killed"], true);
        assert!(
            started_file.exists(),
            "the grandchild never started: {reply}"
        );
        let running = || {
            std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
                let path = entry.path();
                let cmdline = std::fs::read(path.join("cmdline")).unwrap_or_default();
                let zombie = std::fs::read_to_string(path.join("stat")).map_or(true, |s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|rest| rest.trim_start().starts_with('Z'))
                });
                !zombie && String::from_utf8_lossy(&cmdline).contains(&marker)
            })
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while running() {
            assert!(Instant::now() < deadline, "the grandchild was not killed");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_process_is_killed_when_its_run_is_cancelled() {
        let cancel = CancellationToken::new();
        let bounds = ExecBounds {
            deadline: Instant::now() + Duration::from_secs(60),
            cancels: vec![CancellationToken::new(), cancel.clone()],
            kill: Arc::default(),
        };
        let request = ExecRequest {
            command: "sleep".into(),
            args: vec!["30".into()],
            dir: std::env::temp_dir(),
            env: Vec::new(),
        };
        let (done, replied) = std::sync::mpsc::channel();
        spawn(
            request,
            writing(&std::env::temp_dir()),
            bounds,
            move |reply| done.send(reply).unwrap(),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        cancel.cancel();
        let reply = replied.recv_timeout(Duration::from_secs(5)).unwrap();
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["ok"]["killed"], true, "{reply}");
    }

    #[test]
    fn output_is_kept_up_to_its_limit() {
        let request = ExecRequest {
            command: "head".into(),
            args: vec![
                "-c".into(),
                format!("{}", MAX_EXEC_OUTPUT + 4096),
                "/dev/zero".into(),
            ],
            dir: std::env::temp_dir(),
            env: Vec::new(),
        };
        let bounds = ExecBounds {
            deadline: Instant::now() + Duration::from_secs(30),
            cancels: vec![],
            kill: Arc::default(),
        };
        let sandbox = writing(&std::env::temp_dir());
        let reply = run(&request, &sandbox, sandbox.reserve().unwrap(), &bounds);
        assert_eq!(reply["code"], 0);
        assert_eq!(reply["stdout"].as_str().unwrap().len(), MAX_EXEC_OUTPUT);
    }
}
