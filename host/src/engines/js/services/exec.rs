//! Processes a plugin starts (`exec`, when the manifest grants
//! `capabilities.exec`): each runs off the engine thread ([`spawn`]) in the
//! plugin's kernel sandbox; its reply arrives later, and it is killed at its
//! deadline (the calling hook's), when the run is cancelled, or when the
//! plugin is dropped.

use crate::model::limits::MAX_REPLY_BYTES;
use crate::sandbox::{ProcessSandbox, ProcessSlot};
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

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
    use crate::load::grants::Grants;

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
        // grandchild is found by a duration no other process sleeps: five
        // minutes, far past the bounds below, so one never killed fails
        // them however loaded the machine.
        let marker = format!("300.{}", std::process::id());
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
        // The outcome (killed) proves the deadline; the bound only catches a
        // hang, generously, so a loaded machine does not fail it.
        assert!(started.elapsed() < Duration::from_secs(60), "{reply}");
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
        // Generous, so a loaded machine does not fail a slow kill; far
        // below the grandchild's five-minute sleep.
        let deadline = Instant::now() + Duration::from_secs(30);
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
        // The outcome (killed) proves the cancel: left alone, `sleep 30`
        // ends with `killed: false`. The wait is generous, so a loaded
        // machine does not fail it.
        let reply = replied.recv_timeout(Duration::from_secs(60)).unwrap();
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
