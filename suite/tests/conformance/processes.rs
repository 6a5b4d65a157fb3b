//! The kernel sandbox of plugin processes, on every row whose plugins run
//! in a process or start one ([`Engine::processes`]): what such a process
//! can reach through links and `/proc`, whom it can signal, and that
//! nothing it starts outlives its call's deadline or the host.

use crate::engines::{Engine, Support};
use crate::harness::{drive, open};
use crate::support::{assert_all_end, call, plugin_dir, text, write};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use yohost::PluginHost;

/// How long a process a plugin started may take to end once it should.
/// How long a process may take to end once it should: the processes
/// watched sleep for over five minutes, are stopped, or live until killed,
/// so one never ended still exceeds this; it is generous, so a loaded
/// machine (CI beside other builds) does not fail a slow kill.
const ENDS_WITHIN: Duration = Duration::from_secs(30);

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

/// Wait up to 30 seconds for `file` to be written (generous, so a loaded
/// machine does not fail it; a file never written still fails).
fn assert_written(file: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !file.exists() {
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
/// the plugin outlives the host: not a background process, nor one that
/// forked, left its session (`setsid`) and exited its parent, nor a stopped
/// one.
pub async fn nothing_outlives_the_deadline_or_the_host(engine: Engine) {
    let Some(fx) = Processes::install(&engine, "[timeouts]\ncall_tool = 1500\n") else {
        return;
    };
    let out = fx.folder.join("out");
    // Durations no other process sleeps, to find what the script started.
    let marker = |name: &str| format!("313.{}{}", std::process::id(), name.len());
    let script = |name: &str, rest: &str| {
        let m = marker(name);
        sh(format!(
            "sleep {m}1 >/dev/null 2>&1 & \
             setsid sh -c 'sleep {m}2 >/dev/null 2>&1 & exit' & \
             sh -c 'sleep {m}3 & kill -STOP $!' >/dev/null 2>&1;  \
             echo > {}; {rest}",
            out.join(format!("{name}.started")).display(),
        ))
    };
    match engine.deadline_ends_processes {
        Support::Yes => {
            let results = fx.results(&[script("overran", "sleep 60")]).await;
            assert!(
                results[0].1,
                "the call past its deadline failed: {results:?}"
            );
            assert_written(&out.join("overran.started"));
            assert_all_end(
                &marker("overran"),
                ENDS_WITHIN,
                "a process started by a call that overran",
            );
        }
        Support::No(why) => eprintln!("a call's deadline: not applicable: {why}"),
    }

    let results = fx.results(&[script("left", "echo started")]).await;
    assert!(results[0].0.contains("started"), "{results:?}");
    assert_written(&out.join("left.started"));
    let folder = fx.folder.display().to_string();
    drop(fx);
    assert_all_end(
        &marker("left"),
        ENDS_WITHIN,
        "a process a plugin left running, once the host was dropped",
    );
    assert_all_end(
        &folder,
        ENDS_WITHIN,
        "the plugin's own process, once the host was dropped",
    );
}

/// The attacker's program (`attack.c`), compiled once for the suite.
fn attacker() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let program = dir.join("attack");
        let source =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/plugins/conformance/attack.c");
        let built = std::process::Command::new("cc")
            .arg("-O1")
            .arg("-o")
            .arg(&program)
            .arg(&source)
            .output()
            .expect("a C compiler (`cc`) builds the attacker");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        program
    })
}

/// What the attacker must find held, each by name.
const ATTACKS: &[&str] = &[
    "mknod_char",
    "mknod_block",
    "controlling_terminal",
    "tiocsti",
    "prlimit_host",
    "renice_host",
    "taskset_host",
    "ionice_host",
    "signal_host",
    "inherited_descriptor",
    "mptcp",
    "tcp",
    "raw_socket",
    "udp",
    "unix_socket",
    "netlink",
    "capabilities",
    "no_new_privs_missing",
    "unshare",
    "mount",
    "sethostname",
    "keyring",
    "kernel_log",
];

/// A plugin process cannot make devices, touch a terminal, change the
/// host's limits, priority or CPUs, use a descriptor the host inherited,
/// reach the network (TCP, MPTCP, raw, UDP or Unix sockets with a path,
/// netlink) without a network grant, hold a capability, make namespaces
/// or mounts, set the host name, or reach the keyring or the kernel log;
/// it has a private temporary folder, removed with it, and Unix socket
/// pairs and FIFOs still work. The attacker is a native program that the
/// plugin's process starts, as root when the suite runs as root.
pub async fn process_cannot_reach_the_kernel_surface(engine: Engine) {
    use std::os::fd::AsRawFd;
    if engine.processes.is_none() {
        Processes::install(&engine, "");
        return;
    }
    let listeners = tempfile::tempdir().unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let unix_path = listeners.path().join("host.sock");
    let unix = std::os::unix::net::UnixListener::bind(&unix_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    // A descriptor the host holds without close-on-exec, as one inherited
    // from whoever started it (`3<secret`).
    let secret_file = listeners.path().join("secret");
    std::fs::write(&secret_file, "inherited-secret").unwrap();
    let secret = std::fs::File::open(&secret_file).unwrap();
    // SAFETY: duplicating a descriptor this test owns, without CLOEXEC.
    let inherited = unsafe { libc::fcntl(secret.as_raw_fd(), libc::F_DUPFD, 300) };
    assert!(inherited >= 300);

    let fx = Processes::install(&engine, "").unwrap();
    let program = fx.folder.join("attack");
    std::fs::copy(attacker(), &program).unwrap();
    let out = fx.folder.join("out");
    let results = fx
        .results(&[sh(format!(
            "{} {} {} {} {} {inherited} {}",
            program.display(),
            std::process::id(),
            tcp.local_addr().unwrap().port(),
            udp.local_addr().unwrap().port(),
            unix_path.display(),
            out.display(),
        ))])
        .await;
    // SAFETY: closing the duplicate made above.
    unsafe { libc::close(inherited) };
    let report = &results[0].0;
    for attack in ATTACKS {
        let line = report
            .lines()
            .find(|l| l.split_whitespace().next() == Some(attack))
            .unwrap_or_else(|| panic!("the attacker did not try {attack}: {report}"));
        assert!(
            line.contains(" held "),
            "{}: {attack} got through: {report}",
            engine.name
        );
    }
    for control in ["socketpair", "tmpdir", "fifo"] {
        assert!(
            report.contains(&format!("{control} works")),
            "{control} must still work: {report}"
        );
    }
    let tmpdir = report
        .lines()
        .find_map(|l| l.strip_prefix("tmpdir works "))
        .map(PathBuf::from)
        .unwrap();
    assert_ne!(tmpdir, std::env::temp_dir(), "TMPDIR is the host's own");
    assert!(
        tcp.accept().is_err(),
        "a TCP connection reached the host's listener"
    );
    let mut datagram = [0u8; 16];
    assert!(
        udp.recv(&mut datagram).is_err(),
        "a UDP datagram reached the host"
    );
    assert!(
        unix.accept().is_err(),
        "a Unix socket connection reached the host"
    );
    for device in ["kmsg", "disk"] {
        assert!(
            std::fs::symlink_metadata(out.join(device)).is_err(),
            "{device} was made"
        );
    }
    drop(fx);
    // Generous, so a loaded machine does not fail it; a folder never
    // removed still fails.
    let deadline = Instant::now() + Duration::from_secs(30);
    while tmpdir.exists() {
        assert!(
            Instant::now() < deadline,
            "the private temporary folder {} outlived its process",
            tmpdir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What the fixture's process runs to try the network: a tunnel through the
/// proxy its environment names (`HTTPS_PROXY`) to `localhost` and to
/// `127.0.0.1` at the port given, and a direct connection; one line each.
const NETWORK_PROBE: &str = r#"
import os, socket, sys, urllib.parse
port = int(sys.argv[1])
proxy = urllib.parse.urlsplit(os.environ.get("HTTPS_PROXY", "http://none:1"))
def tunnel(host):
    try:
        s = socket.create_connection((proxy.hostname, proxy.port), timeout=5)
        s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        status = s.recv(4096).split(b"\r\n")[0].decode()
        if " 200 " not in status:
            return status
        s.sendall(b"ping")
        return "reached " + s.recv(16).decode()
    except OSError as e:
        return f"error {e.errno}"
def direct():
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5)
        return "reached"
    except OSError as e:
        return f"error {e.errno}"
print("listed", tunnel("localhost"))
print("unlisted", tunnel("127.0.0.1"))
print("direct", direct())
"#;

/// A plugin process with a list of hosts reaches a listed host through the
/// host's proxy, is refused (403) for a host not in the list, and cannot
/// connect to anything by itself.
pub async fn process_reaches_only_the_listed_hosts_through_the_proxy(engine: Engine) {
    let Some(python) = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        eprintln!("skipped: no system python3 to run the network probe");
        return;
    };
    let Some(fx) = Processes::install(&engine, "network = [\"localhost\"]\n") else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut stream in listener.incoming().flatten() {
            let mut ping = [0u8; 4];
            if stream.read_exact(&mut ping).is_ok() {
                let _ = stream.write_all(b"pong");
            }
        }
    });
    let probe = fx.folder.join("probe.py");
    std::fs::write(&probe, NETWORK_PROBE).unwrap();
    let results = fx
        .results(&[sh(format!("{python} {} {port}", probe.display()))])
        .await;
    let report = &results[0].0;
    assert!(
        report.contains("listed reached pong"),
        "{}: {report}",
        engine.name
    );
    assert!(
        report.contains("unlisted HTTP/1.1 403 Forbidden"),
        "{}: {report}",
        engine.name
    );
    assert!(
        report.lines().any(|l| l.starts_with("direct error")),
        "{}: {report}",
        engine.name
    );
}

/// Where the host can make control groups, a plugin's processes together
/// hold at most [`yohost::adapter::sandbox::MAX_TASKS`] tasks: a fork bomb in its
/// process meets that bound (root or not), and the call's end ends them.
pub async fn a_fork_bomb_meets_the_plugin_s_task_limit(engine: Engine) {
    let Some(fx) = Processes::install(&engine, "") else {
        return;
    };
    // A length no other row's bomb sleeps: the rows run side by side.
    let marker = format!(
        "314.{}{}",
        std::process::id(),
        engine.name.len() * 100 + engine.name.as_bytes()[0] as usize
    );
    let script = format!(
        "i=0; while [ $i -lt {} ]; do sleep {marker} >/dev/null 2>&1 & i=$((i+1)); done 2>/dev/null; echo forked",
        yohost::adapter::sandbox::MAX_TASKS + 100
    );
    let results = fx.results(&[sh(script)]).await;
    let running = crate::support::running(&marker);
    let grouped = running.iter().any(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|c| c.contains("yohost-"))
    });
    if running.is_empty() {
        eprintln!("{}: the bomb's processes ended with its call", engine.name);
    } else if grouped {
        assert!(
            running.len() as u64 <= yohost::adapter::sandbox::MAX_TASKS,
            "{}: {} processes ran: {results:?}",
            engine.name,
            running.len()
        );
    } else {
        eprintln!(
            "not applicable here: the host cannot make control groups ({} processes ran)",
            running.len()
        );
    }
    drop(fx);
    // Generous, so a loaded machine does not fail a slow reaping.
    assert_all_end(
        &marker,
        Duration::from_secs(60),
        "the bomb's processes, once the host was dropped",
    );
}

/// A write grant over what the host later trusts refuses the plugin on
/// every row, naming why: one that holds the plugin directory, one in the
/// directory outside the plugin's own folder (a file written there would
/// load as a plugin, a Python or dylib one in the host's process), and one
/// in the host's private cache (compiled components and dylib copies run
/// unchecked).
pub async fn a_write_grant_over_what_the_host_trusts_is_refused(engine: Engine) {
    let cache = yohost::adapter::private_dir::cache_folder("wasm").unwrap();
    for (grant, problem) in [
        ("..".to_string(), "holds the plugin directory"),
        ("../beside".to_string(), "outside the plugin's own folder"),
        (cache.display().to_string(), "the host's private cache"),
    ] {
        let dir = plugin_dir();
        std::fs::create_dir_all(dir.path().join("beside")).unwrap();
        let name = format!("fx-{}", engine.name);
        (engine.install)(
            dir.path(),
            &name,
            &format!("[capabilities]\nwrite = [{grant:?}]\n"),
        );
        let host = open(dir.path());
        let refusal = host
            .refused()
            .into_iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{}: a write grant of {grant} loaded", engine.name));
        let reason = refusal.reason.to_string();
        assert!(reason.contains(problem), "{}: {reason}", engine.name);
    }
}
