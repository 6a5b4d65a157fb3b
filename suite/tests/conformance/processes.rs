//! The kernel sandbox of plugin processes, on every row whose plugins run
//! in a process or start one ([`Engine::processes`]): what such a process
//! can reach through links and `/proc`, whom it can signal, and that
//! nothing it starts outlives its call's deadline or the host.

use crate::engines::Engine;
use crate::harness::{drive, open};
use crate::support::{call, plugin_dir, text, write};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yohost::PluginHost;

/// A variable of the host's that no plugin is granted.
const HOST_SECRET: (&str, &str) = ("YOHOST_CONFORMANCE_HOST_SECRET", "host-secret-5d1c");

/// A variable of the host's that the fixtures are granted.
const GRANTED: (&str, &str) = ("YOHOST_CONFORMANCE_GRANTED", "granted-value-9e2b");

/// A row's process fixture in a plugin directory of its own.
struct Processes {
    host: PluginHost,
    /// The fixture's folder.
    folder: PathBuf,
    /// A folder outside every grant.
    outside: tempfile::TempDir,
    _dir: tempfile::TempDir,
}

impl Processes {
    /// The process fixture of `engine`, with a read grant `data/`, a write
    /// grant `out/` and `exec`, plus `manifest`; `None` for a row that
    /// starts no process. Its folder holds links out: `sys -> /etc`,
    /// `proc -> /proc`, and `out/escape`, dangling, to a file outside.
    fn install(engine: &Engine, manifest: &str) -> Option<Processes> {
        let Some(install) = engine.processes else {
            eprintln!(
                "not applicable: {} has no process fixture (the table says why)",
                engine.name
            );
            return None;
        };
        std::env::set_var(HOST_SECRET.0, HOST_SECRET.1);
        std::env::set_var(GRANTED.0, GRANTED.1);
        let dir = plugin_dir();
        let name = format!("fx-{}", engine.name);
        let grants = format!(
            "[capabilities]\nexec = true\nread = [\"data\"]\nwrite = [\"out\"]\nenv = [\"{}\"]\n{manifest}",
            GRANTED.0
        );
        install(dir.path(), &name, &grants);
        let folder = dir.path().join(&name).canonicalize().unwrap();
        write(&folder, "data/granted.txt", "granted text");
        std::fs::create_dir_all(folder.join("out")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc", folder.join("sys")).unwrap();
        std::os::unix::fs::symlink("/proc", folder.join("proc")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("planted"), folder.join("out/escape"))
            .unwrap();
        let host = open(dir.path());
        assert!(
            host.plugins().iter().any(|p| p.name == name),
            "{name} loads: {:?}",
            host.refused()
        );
        Some(Processes {
            host,
            folder,
            outside,
            _dir: dir,
        })
    }

    /// The text of each of `calls` (tool, arguments), made in one run.
    async fn results(&self, calls: &[(&str, serde_json::Value)]) -> Vec<(String, bool)> {
        let mut script: Vec<_> = calls.iter().map(|(t, a)| call(t, a.clone())).collect();
        script.push(text("done"));
        let out = drive(vec![Arc::new(self.host.extension())], script, "go").await;
        let results = out.results();
        assert_eq!(results.len(), calls.len(), "{results:?}");
        results.into_iter().map(|(_, t, e)| (t, e)).collect()
    }
}

fn sh(script: String) -> (&'static str, serde_json::Value) {
    ("fx_sh", json!({ "script": script }))
}

fn read(path: &Path) -> (&'static str, serde_json::Value) {
    ("fx_read", json!({ "path": path }))
}

/// Whether process `pid` is gone (or a zombie that init will reap).
fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

/// Wait up to five seconds for process `pid` to be gone.
fn assert_ends(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(pid) {
        assert!(
            Instant::now() < deadline,
            "{what} (pid {pid}) is still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid a fixture's script wrote to `file`.
fn pid_in(file: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} was not written",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A plugin's process stays inside its grants through links, `/proc` and
/// dangling links, and gets only the environment it is granted; what its
/// grants allow still works.
pub async fn process_stays_inside_its_grants(engine: Engine) {
    let Some(fx) = Processes::install(&engine, "") else {
        return;
    };
    let folder = &fx.folder;
    let host_environ = format!("/proc/{}/environ", std::process::id());
    let results = fx
        .results(&[
            read(&folder.join("sys/passwd")),
            sh(format!("cat {}", folder.join("sys/passwd").display())),
            read(Path::new(&host_environ)),
            sh(format!("cat {host_environ}")),
            sh(format!("cat {}/proc/1/environ", folder.display())),
            sh(format!(
                "echo planted > {}",
                folder.join("out/escape").display()
            )),
            sh("env".into()),
            sh(format!("cat {}", folder.join("data/granted.txt").display())),
            sh(format!(
                "echo made > {}",
                folder.join("out/made.txt").display()
            )),
        ])
        .await;
    for (i, (text, _)) in results[..5].iter().enumerate() {
        assert!(!text.contains("root:"), "call {i} read /etc/passwd: {text}");
        assert!(
            !text.contains(HOST_SECRET.1),
            "call {i} read the host's environment: {text}"
        );
        assert!(
            !text.starts_with("read:"),
            "call {i} read outside its grants: {text}"
        );
    }
    assert!(
        !fx.outside.path().join("planted").exists(),
        "a dangling link in a write grant wrote outside it: {:?}",
        results[5]
    );
    let env = &results[6].0;
    assert!(
        !env.contains(HOST_SECRET.0),
        "the host's environment leaked: {env}"
    );
    assert!(
        env.contains(GRANTED.1),
        "the granted variable is missing: {env}"
    );
    assert!(
        env.contains("PATH="),
        "the base environment is missing: {env}"
    );
    assert!(results[7].0.contains("granted text"), "{:?}", results[7]);
    assert_eq!(
        std::fs::read_to_string(folder.join("out/made.txt"))
            .ok()
            .as_deref(),
        Some("made\n"),
        "{:?}",
        results[8]
    );
}

/// A plugin's process, and what it starts, cannot signal the host.
pub async fn process_cannot_signal_the_host(engine: Engine) {
    let Some(fx) = Processes::install(&engine, "") else {
        return;
    };
    let host = std::process::id();
    let results = fx
        .results(&[
            ("fx_signal", json!({ "pid": host })),
            sh(format!("kill -CONT {host}; echo rc=$?")),
        ])
        .await;
    assert!(!results[0].0.contains("signalled"), "{:?}", results[0]);
    assert!(results[1].0.contains("rc=1"), "{:?}", results[1]);
}

/// Nothing a plugin started outlives its call's deadline, and nothing of
/// the plugin outlives the host.
pub async fn nothing_outlives_the_deadline_or_the_host(engine: Engine) {
    let Some(fx) = Processes::install(&engine, "[timeouts]\ncall_tool = 1500\n") else {
        return;
    };
    let out = fx.folder.join("out");
    let script = |name: &str, rest: &str| {
        sh(format!(
            "sleep 313 >/dev/null 2>&1 & echo $! > {}; echo $PPID > {}; {rest}",
            out.join(format!("{name}.pid")).display(),
            out.join(format!("{name}.parent")).display()
        ))
    };
    let results = fx.results(&[script("overran", "sleep 60")]).await;
    assert!(
        results[0].1,
        "the call past its deadline failed: {results:?}"
    );
    assert_ends(
        pid_in(&out.join("overran.pid")),
        "a process started by a call that overran",
    );

    let results = fx.results(&[script("left", "echo started")]).await;
    assert!(results[0].0.contains("started"), "{results:?}");
    let left = pid_in(&out.join("left.pid"));
    let parent = pid_in(&out.join("left.parent"));
    drop(fx);
    assert_ends(
        left,
        "a process a plugin left running, once the host was dropped",
    );
    if parent != std::process::id() {
        assert_ends(
            parent,
            "the plugin's own process, once the host was dropped",
        );
    }
}
