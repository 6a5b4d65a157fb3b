//! A plugin directory written by someone hostile or careless never crashes
//! or hangs the host, and never stops the other plugins from loading:
//! - a FIFO, a socket or a device under a plugin's name, or as its manifest
//!   or `package.json`, is refused as "not a regular file" without blocking;
//! - a file name that is not UTF-8, or a name that is empty, too long or
//!   holds control characters, is refused saying what a valid name is, and
//!   the report still serializes (with the name made valid UTF-8);
//! - out-of-range memory limits and timeouts, and a manifest nested 10,000
//!   levels deep, are refused with the bounds;
//! - a source that cannot be read (too large, not UTF-8) is refused, not
//!   guessed to be a yohost plugin;
//! - a plugin written for an ecosystem its engine has no adapter for (a DSH
//!   module, `ecosystem = "pi"` on a Python file) is refused, naming both;
//! - a plugin with no hooks loads with a warning that it is never called;
//! - symlinks that point a folder at itself do not make discovery loop;
//! - a plugin file that did not change is never loaded twice, whether it
//!   loaded or was refused: its top-level code runs once, however many runs
//!   and snapshots follow, and once more after it changes.

use crate::support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use support::*;
use yohost::adapter::source::ReadError;
use yohost::manifest::{ManifestError, NameError};
use yohost::{Ecosystem, EngineKind, LoadError, PluginHost, Status};

/// A JS policy that appends ` +js` to every `echo`. On a recheck (the
/// text starts with what it made) it allows, so that two of them converge.
const JS_TAGGER: &str = r#"import { definePlugin } from "yohost";
const made = new Set();
export default definePlugin({
  before_tool({ tool, args }) {
    if (tool !== "echo") return null;
    if ([...made].some((text) => args.text.startsWith(text))) return null;
    const text = args.text + " +js";
    made.add(text);
    return { args: { text } };
  },
});
"#;

/// Open the host on another thread, failing the test (instead of hanging
/// it) if that takes more than 30 s.
fn open_within_time(dir: &Path) -> PluginHost {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(PluginHost::open(&dir));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("opening the host must not hang")
        .expect("the host opens")
}

async fn echo_through(host: &PluginHost) -> String {
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)[0].1.clone()
}

/// With a refused plugin whose manifest cannot be read (which counts as
/// required), `good` still loads, but every run fails closed before any
/// tool runs.
async fn good_loads_and_runs_fail_closed(host: &PluginHost) {
    assert!(
        host.plugins().iter().any(|p| p.name == "good"),
        "the other plugins still load: {:?}",
        host.plugins()
    );
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    assert!(
        tool_results(&events).is_empty(),
        "a required refusal fails the run before any tool runs"
    );
}

/// The reason the plugin at `file` was refused.
fn refusal(host: &PluginHost, file: &Path) -> LoadError {
    host.refused()
        .into_iter()
        .find(|r| r.file == file)
        .unwrap_or_else(|| panic!("{} is not refused: {:?}", file.display(), host.refused()))
        .reason
}

/// The report `yohost check --json` prints, as JSON (the command itself is
/// tested in the `yohost-cli` package).
async fn check_json(host: &PluginHost) -> serde_json::Value {
    let report = serde_json::to_value(host.report().await).expect("the report serializes");
    json!({ "plugins": report })
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
}

#[cfg(unix)]
#[tokio::test]
async fn fifos_sockets_and_devices_are_refused_without_blocking() {
    let dir = plugin_dir();
    write(dir.path(), "good/index.ts", JS_TAGGER);
    let fifo = dir.path().join("x.ts");
    mkfifo(&fifo);
    let socket = dir.path().join("s.py");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let device = dir.path().join("zero.js");
    std::os::unix::fs::symlink("/dev/zero", &device).unwrap();
    let fifo_manifest = dir.path().join("fifo-manifest");
    std::fs::create_dir(&fifo_manifest).unwrap();
    write(&fifo_manifest, "index.ts", JS_TAGGER);
    mkfifo(&fifo_manifest.join("plugin.toml"));
    let fifo_package = dir.path().join("fifo-package");
    std::fs::create_dir(&fifo_package).unwrap();
    write(&fifo_package, "index.ts", JS_TAGGER);
    mkfifo(&fifo_package.join("package.json"));

    let host = open_within_time(dir.path());
    good_loads_and_runs_fail_closed(&host).await;
    for (file, kind) in [
        (&fifo, "a FIFO"),
        (&socket, "a socket"),
        (&device, "a character device"),
    ] {
        match refusal(&host, file) {
            LoadError::Unreadable {
                problem: ReadError::NotRegular(k),
                ..
            } => assert_eq!(k, kind),
            other => panic!("{}: {other}", file.display()),
        }
    }
    assert!(matches!(
        refusal(&host, &fifo_manifest),
        LoadError::Manifest {
            problem: ManifestError::Unreadable(ReadError::NotRegular("a FIFO")),
            ..
        }
    ));
    assert!(matches!(
        refusal(&host, &fifo_package),
        LoadError::Unreadable {
            problem: ReadError::NotRegular("a FIFO"),
            ..
        }
    ));

    let doc = check_json(&host).await;
    assert_eq!(checked(&doc, "good")["status"], "loaded");
    for name in ["x", "s", "zero", "fifo-manifest", "fifo-package"] {
        assert_eq!(checked(&doc, name)["status"], "refused", "{name}");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_file_name_that_is_not_utf8_is_refused_and_reported() {
    use std::os::unix::ffi::OsStrExt;
    let dir = plugin_dir();
    write(dir.path(), "good/index.ts", JS_TAGGER);
    let bad = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xff.ts"));
    std::fs::write(&bad, JS_TAGGER).unwrap();
    let host = open_within_time(dir.path());
    assert_eq!(echo_through(&host).await, "hi +js");
    assert!(matches!(
        refusal(&host, &bad),
        LoadError::BadName {
            problem: NameError::NotUtf8,
            ..
        }
    ));

    let doc = check_json(&host).await;
    let plugin = checked(&doc, "bad\u{fffd}");
    assert_eq!(plugin["status"], "refused");
    assert!(plugin["file"].as_str().unwrap().ends_with("bad\u{fffd}.ts"));
}

#[tokio::test]
async fn invalid_names_are_refused_and_the_others_load() {
    let dir = plugin_dir();
    write(dir.path(), "good/index.ts", JS_TAGGER);
    let cases = [
        ("nul", "name = \"a\\u0000b\"", NameError::BadChar('\0')),
        (
            "escape",
            "name = \"red\\u001b[31m\"",
            NameError::BadChar('\u{1b}'),
        ),
        ("empty", "name = \"\"", NameError::Empty),
        (
            "long",
            &format!("name = \"{}\"", "x".repeat(10_000)),
            NameError::TooLong(10_000),
        ),
    ];
    // Each asks to be required: its refusal fails every run.
    for (folder, manifest, _) in &cases {
        write(
            dir.path(),
            &format!("{folder}/plugin.toml"),
            &format!("mode = \"required\"\n{manifest}"),
        );
        write(dir.path(), &format!("{folder}/index.ts"), JS_TAGGER);
    }
    let spaced = write(dir.path(), "two words.ts", JS_TAGGER);
    let host = open_within_time(dir.path());
    good_loads_and_runs_fail_closed(&host).await;
    for (folder, _, problem) in cases {
        match refusal(&host, &dir.path().join(folder)) {
            LoadError::Manifest {
                problem: ManifestError::Name(p),
                ..
            } => assert_eq!(p, problem, "{folder}"),
            other => panic!("{folder}: {other}"),
        }
    }
    let reason = refusal(&host, &spaced);
    assert!(
        matches!(
            reason,
            LoadError::BadName {
                problem: NameError::BadChar(' '),
                ..
            }
        ),
        "{reason}"
    );
    assert!(
        reason.to_string().contains("1 to 64 characters"),
        "{reason}"
    );
}

#[tokio::test]
async fn out_of_range_limits_and_deep_manifests_are_refused_with_the_bounds() {
    let dir = plugin_dir();
    write(dir.path(), "good/index.ts", JS_TAGGER);
    let cases = [
        (
            "no-memory",
            "[limits]\nmemory_mib = 0".to_string(),
            Some("limits.memory_mib"),
        ),
        (
            "huge-memory",
            "[limits]\nmemory_mib = 17592186044416".into(),
            Some("limits.memory_mib"),
        ),
        (
            "no-time",
            "[timeouts]\nbefore_tool = 0".into(),
            Some("timeouts.before_tool"),
        ),
        (
            "forever",
            "[timeouts]\nbefore_tool = 18446744073709551615".into(),
            Some("timeouts.before_tool"),
        ),
        ("deep", format!("x = {}", "[".repeat(10_000)), None),
    ];
    // Each asks to be required: its refusal fails every run.
    for (folder, manifest, _) in &cases {
        write(
            dir.path(),
            &format!("{folder}/plugin.toml"),
            &format!("mode = \"required\"\n{manifest}"),
        );
        write(dir.path(), &format!("{folder}/index.ts"), JS_TAGGER);
    }
    let host = open_within_time(dir.path());
    good_loads_and_runs_fail_closed(&host).await;
    for (folder, _, field) in cases {
        match (refusal(&host, &dir.path().join(folder)), field) {
            (
                LoadError::Manifest {
                    problem:
                        ManifestError::OutOfRange {
                            field: f, min, max, ..
                        },
                    ..
                },
                Some(field),
            ) => {
                assert_eq!(f, field);
                assert!(min >= 1 && max < u64::MAX / (1 << 20));
            }
            (
                LoadError::Manifest {
                    problem: ManifestError::TooDeep,
                    ..
                },
                None,
            ) => {}
            (other, _) => panic!("{folder}: {other}"),
        }
    }
}

#[tokio::test]
async fn sources_that_cannot_be_read_are_refused_not_guessed() {
    let dir = plugin_dir();
    write(dir.path(), "good/index.ts", JS_TAGGER);
    let huge = dir.path().join("huge.ts");
    std::fs::write(&huge, vec![b' '; 17 * 1024 * 1024]).unwrap();
    let binary = dir.path().join("binary.js");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let host = open_within_time(dir.path());
    assert_eq!(echo_through(&host).await, "hi +js");
    assert!(matches!(
        refusal(&host, &huge),
        LoadError::Unreadable {
            problem: ReadError::TooLarge { .. },
            ..
        }
    ));
    assert!(matches!(
        refusal(&host, &binary),
        LoadError::Unreadable {
            problem: ReadError::NotUtf8,
            ..
        }
    ));
}

#[tokio::test]
async fn ecosystems_without_an_adapter_are_refused_naming_engine_and_ecosystem() {
    let dir = plugin_dir();
    write(dir.path(), "good/index.ts", JS_TAGGER);
    let dsh = write(
        dir.path(),
        "dsh-tool.ts",
        &format!("import {{ tool }} from \"@deepseek-ai/dsh-sdk\";\n{JS_TAGGER}"),
    );
    write(dir.path(), "pi-python/plugin.toml", "ecosystem = \"pi\"");
    let pi_python = write(
        dir.path(),
        "pi-python/main.py",
        "from yohost import Plugin\nplugin = Plugin()\n",
    );
    // A yohost plugin that merely mentions DSH says so in its manifest.
    write(
        dir.path(),
        "mentions-dsh/plugin.toml",
        "ecosystem = \"yohost\"",
    );
    write(
        dir.path(),
        "mentions-dsh/index.ts",
        &format!("// unlike @deepseek-ai/dsh tools\n{JS_TAGGER}"),
    );
    let host = open_within_time(dir.path());
    for (file, engine, ecosystem) in [
        (dsh, EngineKind::JS, Ecosystem::new("dsh")),
        (pi_python, EngineKind::PYTHON, Ecosystem::new("pi")),
    ] {
        let root = if file.parent() == Some(dir.path()) {
            file.clone()
        } else {
            file.parent().unwrap().to_path_buf()
        };
        match refusal(&host, &root) {
            LoadError::NoAdapter {
                engine: e,
                ecosystem: eco,
                path,
                ..
            } => {
                assert_eq!((e, eco), (engine, ecosystem));
                assert_eq!(path, file);
            }
            other => panic!("{}: {other}", file.display()),
        }
    }
    let loaded: Vec<String> = host.plugins().iter().map(|p| p.name.clone()).collect();
    assert_eq!(loaded, ["good", "mentions-dsh"]);
}

#[tokio::test]
async fn a_plugin_with_no_hooks_loads_with_a_warning() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "idle.ts",
        "import { definePlugin } from \"yohost\";\nexport default definePlugin({});\n",
    );
    write(
        dir.path(),
        "idle-py.py",
        "from yohost import Plugin\nplugin = Plugin()\n",
    );
    let host = open_within_time(dir.path());
    let report = host.report().await;
    for name in ["idle", "idle-py"] {
        let plugin = reported(&report, name);
        assert_eq!(plugin.status, Status::Loaded, "{plugin:?}");
        assert!(plugin.hooks.is_empty());
        assert_eq!(plugin.warnings.len(), 1, "{plugin:?}");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn folders_linked_to_themselves_do_not_make_discovery_loop() {
    let dir = plugin_dir();
    write(dir.path(), "good/index.ts", JS_TAGGER);
    for i in 0..12 {
        std::os::unix::fs::symlink(".", dir.path().join(format!("good/loop{i}"))).unwrap();
    }
    let host = open_within_time(dir.path());
    assert_eq!(echo_through(&host).await, "hi +js");
}

/// A Python plugin whose top level appends a line to `log` each time it is
/// loaded, then either loads or (with `refuse`) raises.
fn counting_plugin(log: &Path, refuse: bool) -> String {
    format!(
        "with open({log:?}, 'a') as f:\n    f.write('loaded\\n')\n{}from yohost import Plugin\nplugin = Plugin()\n\n@plugin.on_input\ndef look(args):\n    return None\n",
        if refuse { "raise RuntimeError('refusing on purpose')\n" } else { "" },
        log = log.display().to_string()
    )
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[tokio::test]
async fn an_unchanged_plugin_is_never_loaded_twice_loaded_or_refused() {
    let dir = plugin_dir();
    let logs = plugin_dir();
    let loaded_log = logs.path().join("loaded.log");
    let refused_log = logs.path().join("refused.log");
    write(dir.path(), "good/index.ts", JS_TAGGER);
    let loaded_file = write(
        dir.path(),
        "counted.py",
        &counting_plugin(&loaded_log, false),
    );
    let refused_file: PathBuf = write(
        dir.path(),
        "refusing.py",
        &counting_plugin(&refused_log, true),
    );
    let host = open_within_time(dir.path());
    for _ in 0..4 {
        assert_eq!(echo_through(&host).await, "hi +js");
        // Let the watcher's events about the loads arrive.
        tokio::time::sleep(Duration::from_millis(200)).await;
        host.snapshot();
    }
    assert_eq!(host.refused().len(), 1, "{:?}", host.refused());
    assert_eq!(lines(&loaded_log), 1, "the loaded plugin was loaded again");
    assert_eq!(
        lines(&refused_log),
        1,
        "the refused plugin was loaded again"
    );

    // Another plugin arrives: the directory is rescanned, and the plugins
    // whose files did not change are not loaded again.
    write(dir.path(), "other.ts", JS_TAGGER);
    assert_eq!(echo_through(&host).await, "hi +js +js");
    assert_eq!(lines(&loaded_log), 1, "the loaded plugin was loaded again");
    assert_eq!(
        lines(&refused_log),
        1,
        "the refused plugin was loaded again"
    );

    for file in [&loaded_file, &refused_file] {
        let mut text = std::fs::read_to_string(file).unwrap();
        text.push_str("# changed\n");
        std::fs::write(file, text).unwrap();
    }
    for _ in 0..3 {
        assert_eq!(echo_through(&host).await, "hi +js +js");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(lines(&loaded_log), 2);
    assert_eq!(lines(&refused_log), 2);
}
