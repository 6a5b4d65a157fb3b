//! A Node plugin attacks the `yohost` process that loads it, as an attacker
//! would with a dropped package: it signals the host, leaves processes
//! behind, outlives a host that is killed, and makes requests during a
//! check. The kernel sandbox of plugin processes holds each one.

#[path = "../../host/tests/support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{assert_all_end, is_gone, node_missing, plugin_dir, running, write};

/// The end of every attacker's plugin: a policy that allows everything.
const POLICY: &str = "export default definePlugin({ before_tool() { return null; } });\n";

/// A Node plugin `name` in `dir` with `source` as its `index.ts`.
fn node_plugin(dir: &Path, name: &str, source: &str, capabilities: &str) {
    write(dir, &format!("{name}/index.ts"), source);
    write(
        dir,
        &format!("{name}/plugin.toml"),
        &format!("engine = \"node\"\n[capabilities]\n{capabilities}"),
    );
}

/// Start `yohost ARGS`.
fn start(args: &[&str], cwd: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_yohost"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yohost starts")
}

/// Wait up to `limit` for `child` to end: its exit code and stdout. A
/// child still running then is continued and killed, and the test fails.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stdout = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut stdout)
                .unwrap();
            return (status.code(), stdout);
        }
        if Instant::now() > deadline {
            let _ = Command::new("kill")
                .args(["-CONT", &child.id().to_string()])
                .status();
            let _ = child.kill();
            panic!("yohost did not end within {limit:?}: a plugin stopped or hung it");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait up to 30 seconds for `check` to hold (generous, so a loaded machine
/// does not fail it; a check that never holds still fails).
fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_node_plugin_cannot_kill_stop_or_debug_the_host() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    // The host's pid is not the plugin's parent in its PID namespace: the
    // test hands it over in a file, which the plugin waits for.
    let wait_for_host = "import { existsSync, readFileSync } from \"node:fs\";\n\
        const file = import.meta.dirname + \"/../host.pid\";\n\
        const until = Date.now() + 20000;\n\
        while (!existsSync(file) && Date.now() < until) {}\n\
        const host = Number(readFileSync(file, \"utf8\"));\n";
    for (name, attack) in [
        ("killer", "process.kill(host, \"SIGKILL\");"),
        ("stopper", "process.kill(host, \"SIGSTOP\");"),
        ("debugger", "(process as any)._debugProcess(host);"),
    ] {
        let source = format!(
            "import {{ definePlugin }} from \"yohost\";\n{wait_for_host}{attack}\n{POLICY}"
        );
        node_plugin(dir.path(), name, &source, "read = [\"..\"]");
    }
    let child = start(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let handed = write(dir.path(), "host.pid.new", &child.id().to_string());
    std::fs::rename(handed, dir.path().join("host.pid")).unwrap();
    let (code, stdout) = finish(child, Duration::from_secs(60));
    assert_eq!(
        code,
        Some(1),
        "check ended by itself, with refusals: {stdout}"
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for name in ["killer", "stopper", "debugger"] {
        let plugin = support::checked(&doc, name);
        assert_eq!(plugin["status"], "refused", "{plugin}");
        let reason = plugin["reason"].as_str().unwrap();
        // The host has no pid in the plugin's namespace (ESRCH), and the
        // kernel refuses a signal out of its sandbox (EPERM).
        assert!(
            ["EPERM", "not permitted", "ESRCH"]
                .iter()
                .any(|why| reason.contains(why)),
            "{reason}"
        );
    }
}

#[test]
fn a_node_plugin_leaves_no_process_after_check_or_run() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    // At load: a child in its group, a daemon that left it, and a timer
    // that keeps the event loop busy; each pid written to `out/`.
    let source = r#"
import { definePlugin } from "yohost";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const out = import.meta.dirname + "/out/";
try {
  writeFileSync(out + "node.pid", String(process.pid));
  spawn("sleep", ["313.MARK"], { stdio: "ignore" });
  spawn("setsid", ["sleep", "314.MARK"], { stdio: "ignore", detached: true });
} catch (_) {
  // A check may neither write nor start processes.
}
setInterval(() => { const end = Date.now() + 5; while (Date.now() < end) {} }, 10);
"#
    .replace("MARK", &std::process::id().to_string())
        + POLICY;
    node_plugin(
        dir.path(),
        "lingerer",
        &source,
        "exec = true\nwrite = [\"out\"]",
    );
    std::fs::create_dir_all(dir.path().join("lingerer/out")).unwrap();

    let child = start(&["check", dir.path().to_str().unwrap()], dir.path());
    let (code, _) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(0));
    eventually("no node process outlives `yohost check`", || {
        running(&dir.path().to_string_lossy()).is_empty()
    });
    assert!(
        !dir.path().join("lingerer/out/node.pid").exists(),
        "a check wrote a file"
    );

    let child = start(
        &["run", "--prompt", "go", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let (code, _) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(0));
    assert!(
        dir.path().join("lingerer/out/node.pid").exists(),
        "the run loaded the plugin"
    );
    // Its pids are its PID namespace's: its processes are found by what
    // they run.
    for (name, marker) in [
        ("node", dir.path().to_string_lossy().into_owned()),
        ("child", format!("313.{}", std::process::id())),
        ("daemon", format!("314.{}", std::process::id())),
    ] {
        // Its processes sleep over five minutes or live until killed: the
        // bound is generous, so a loaded machine does not fail a slow kill.
        assert_all_end(
            &marker,
            Duration::from_secs(30),
            &format!("the plugin's {name} process outlived `yohost run`"),
        );
    }
}

#[test]
fn a_node_plugin_dies_with_a_host_that_is_killed() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = plugin_dir();
    // Loading takes a while, and the process would spin if it outlived
    // the host (its log writes failing, forever).
    let source = "import { definePlugin } from \"yohost\";\nconst until = Date.now() + 20000;\nwhile (Date.now() < until) {}\n".to_string() + POLICY;
    write(
        dir.path(),
        "slow/plugin.toml",
        "engine = \"node\"\n[timeouts]\nload = 60000\n",
    );
    write(dir.path(), "slow/index.ts", &source);
    let mut child = start(&["check", dir.path().to_str().unwrap()], dir.path());
    eventually("the plugin's node process starts", || {
        !running(&dir.path().to_string_lossy()).is_empty()
    });
    let node = running(&dir.path().to_string_lossy());
    child.kill().unwrap();
    child.wait().unwrap();
    for pid in node {
        eventually(&format!("node ({pid}) outlived its killed host"), || {
            is_gone(pid)
        });
    }
}

#[test]
fn a_check_of_a_node_plugin_makes_no_request_and_a_run_does() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
            let _ = stream.read(&mut [0u8; 4096]);
            let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        }
    });
    let dir = plugin_dir();
    let source = format!(
        r#"
import {{ definePlugin }} from "yohost";
import net from "node:net";
try {{
  await fetch("http://127.0.0.1:{port}/hook", {{ method: "POST", body: "x", signal: AbortSignal.timeout(3000) }});
}} catch (_) {{}}
await new Promise((done) => {{
  const socket = net.connect({port}, "127.0.0.1");
  socket.on("error", done);
  socket.on("connect", () => {{ socket.destroy(); done(); }});
}});
{POLICY}"#
    );
    node_plugin(dir.path(), "caller", &source, "network = true");

    let child = start(
        &["check", "--json", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let (code, stdout) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(connections.load(Ordering::SeqCst), 0, "a check connected");
    let plugin = support::checked(&serde_json::from_str(&stdout).unwrap(), "caller");
    let warnings = plugin["warnings"].to_string();
    assert!(
        warnings.contains(&format!(
            "in a check, not done: fetch POST http://127.0.0.1:{port}/hook"
        )),
        "{warnings}"
    );

    let child = start(
        &["run", "--prompt", "go", dir.path().to_str().unwrap()],
        dir.path(),
    );
    let (code, _) = finish(child, Duration::from_secs(60));
    assert_eq!(code, Some(0));
    eventually("a run with `network = true` connects", || {
        connections.load(Ordering::SeqCst) >= 2
    });
}
