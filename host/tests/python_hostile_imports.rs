//! Python plugins that misbehave beyond one call, each scenario in a process
//! of its own (what they leave behind lasts as long as the process):
//! - a plugin that holds the interpreter at import (one C call that never
//!   returns) is refused at its load deadline; `PluginHost::open` returns in
//!   bounded time; a Python plugin after it is refused at once, naming it; a
//!   Python plugin loaded before it fails closed at once; a JS policy keeps
//!   working through a real run;
//! - a thread a plugin started that takes the interpreter and never lets go
//!   makes Python calls fail closed: the first at its deadline, the next at
//!   once;
//! - once the holder lets go, Python plugins serve and load again;
//! - a plugin that sleeps at import is refused at its load deadline, a plugin
//!   that calls `os._exit` at import is refused and the host lives on, and a
//!   plugin that leaves a thread spinning in Python loads and serves, as do
//!   the Python plugins beside them.

mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::*;
use yohost::PluginHost;

/// The environment variable that tells a child process which scenario to
/// run.
const SCENARIO: &str = "YOHOST_TEST_SCENARIO";

/// How long a scenario's process may take before it counts as hung. Its
/// hostile imports hold on for an hour or forever, so a hang still exceeds
/// this; it is generous so that a loaded machine (CI beside other builds)
/// does not fail a scenario that is merely slow.
const HUNG_AFTER: Duration = Duration::from_secs(180);

/// A generous bound on wall time for a step that must not wait for a
/// hostile import (which holds on for an hour or forever): a step that
/// waited would exceed it, a loaded machine would not. What the step did
/// (refused at its deadline, or at once, naming the holder) is asserted by
/// its outcome.
const NOT_HUNG: Duration = Duration::from_secs(60);

/// Run `scenario` in a child process of this test binary, named by `test`
/// (the calling test's name), and fail if it fails or hangs.
fn in_own_process(test: &str, scenario: impl std::future::Future<Output = ()>) {
    if std::env::var(SCENARIO).is_ok_and(|s| s == test) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(scenario);
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO, test)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HUNG_AFTER {
            child.kill().unwrap();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    assert!(
        status.success() && started.elapsed() <= HUNG_AFTER,
        "scenario {test} failed or hung ({status}, {:?}):\n{}\n{}",
        started.elapsed(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A fixture of `tests/plugins/python/`.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/plugins/python")
        .join(name)
}

/// Copy the Python fixture `file` to `dir/<name>.py`.
fn install(dir: &Path, name: &str, file: &str) {
    std::fs::copy(fixture(file), dir.join(format!("{name}.py"))).unwrap();
}

/// Copy the Python fixture `file` into `dir/<name>/`, beside a manifest.
fn install_with_manifest(dir: &Path, name: &str, file: &str, manifest: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::copy(fixture(file), dir.join(name).join(file)).unwrap();
    write(dir, &format!("{name}/plugin.toml"), manifest);
}

/// A JS policy that denies the text `forbidden`.
const JS_POLICY: &str = r#"import { definePlugin } from "yohost";

export default definePlugin({
  before_tool({ args }) {
    if (args.text === "forbidden") return { deny: "the js policy says no" };
    return null;
  },
});
"#;

/// Why the plugin named `name` was refused when it was first loaded (the
/// directory watcher may have rescanned it since: a refused plugin is loaded
/// again at each rescan).
fn first_refusal(logs: &Captured, name: &str) -> String {
    let lines = logs.lines();
    let refused = lines
        .iter()
        .find(|l| {
            l["fields"]["plugin"] == name
                && l["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("plugin refused"))
        })
        .unwrap_or_else(|| panic!("{name} is refused in {lines:?}"));
    refused["fields"]["message"].as_str().unwrap().to_string()
}

/// Why the plugin named `name` is refused now.
fn refusal(host: &PluginHost, name: &str) -> String {
    let refused = host.refused();
    refused
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{name} is refused: {refused:?}"))
        .reason
        .to_string()
}

#[test]
fn a_plugin_holding_the_interpreter_at_import_leaves_the_other_engines_serving() {
    in_own_process(
        "a_plugin_holding_the_interpreter_at_import_leaves_the_other_engines_serving",
        async {
            let (logs, _guard) = capture_logs();
            let dir = plugin_dir();
            install(dir.path(), "a_after", "only_after.py");
            install_with_manifest(
                dir.path(),
                "b_holder",
                "holds_the_interpreter.py",
                "[timeouts]\nload = 1000\n",
            );
            install(dir.path(), "c_before", "only_before.py");
            write(dir.path(), "d_policy.ts", JS_POLICY);

            let started = Instant::now();
            let host = PluginHost::open(dir.path()).unwrap();
            let opened_in = started.elapsed();
            // The holder's deadline (1 s), then a second's wait for the
            // interpreter, and the rest is quick. The holder never lets go,
            // so the refusals below prove the deadline; the bound only
            // catches a hang, generously, so a busy machine does not fail it.
            assert!(opened_in < NOT_HUNG, "{opened_in:?}");
            let holder = first_refusal(&logs, "b_holder");
            assert!(
                holder.contains("did not finish within its load deadline of 1s"),
                "{holder}"
            );
            let after_it = first_refusal(&logs, "c_before");
            assert!(
                after_it.contains("held by plugin 'b_holder' (its import)"),
                "{after_it}"
            );
            let loaded: Vec<String> = host.plugins().iter().map(|p| p.name.clone()).collect();
            assert_eq!(loaded, ["a_after", "d_policy"]);

            // A later Python load is refused at once, naming the holder.
            install(dir.path(), "e_before", "only_before.py");
            let started = Instant::now();
            host.reload();
            let _ = host.snapshot();
            // Refused as wedged, not at its load deadline: the outcome
            // proves "at once"; the clock only catches a hang, generously.
            assert!(started.elapsed() < NOT_HUNG, "{:?}", started.elapsed());
            let later = refusal(&host, "e_before");
            assert!(later.contains("plugin 'b_holder'"), "{later}");
            assert!(later.contains("unavailable until it lets go"), "{later}");
            assert!(!later.contains("load deadline"), "{later}");

            // The JS policy judges calls; the Python filter loaded before
            // the holder fails closed at once, withholding the output.
            let (agent, _) = scripted(vec![
                call("echo", json!({"text": "forbidden"})),
                call("echo", json!({"text": "fine"})),
                text("done"),
            ]);
            let mut agent = agent.with_extension(host.extension());
            let started = Instant::now();
            let results = tool_results(&run(&mut agent, "go").await);
            // Failing closed at once shows in the outcome (the filter is
            // unavailable, it did not time out); the clock only catches a
            // hang, generously.
            assert!(started.elapsed() < NOT_HUNG, "{:?}", started.elapsed());
            assert_eq!(results.len(), 2, "{results:?}");
            assert!(
                results[0].2 && results[0].1.contains("the js policy says no"),
                "{results:?}"
            );
            assert!(
                results[1].2 && results[1].1.contains("a_after"),
                "{results:?}"
            );
            assert!(
                results[1].1.contains("is unloaded") && !results[1].1.contains("timed out"),
                "failed closed at once, not at its deadline: {results:?}"
            );
            assert!(!results[1].1.contains("fine"), "withheld: {results:?}");
        },
    );
}

#[test]
fn python_plugins_serve_again_once_the_interpreter_is_let_go() {
    in_own_process(
        "python_plugins_serve_again_once_the_interpreter_is_let_go",
        async {
            let dir = plugin_dir();
            install(dir.path(), "a_before", "only_before.py");
            install_with_manifest(
                dir.path(),
                "z_holder",
                "holds_the_interpreter_for_a_while.py",
                // Its import must start before its load times out, or it
                // never runs: long enough for a busy machine, and well
                // inside its hold.
                "[timeouts]\nload = 2000\n",
            );
            let opened = Instant::now();
            let host = PluginHost::open(dir.path()).unwrap();
            let echo = || async {
                let (agent, _) = scripted(vec![call("echo", json!({"text": "x"})), text("done")]);
                let mut agent = agent.with_extension(host.extension());
                tool_results(&run(&mut agent, "go").await)
            };
            // Held: the import ran past its load deadline, so the host has
            // waited for the interpreter, to interrupt it, since then. Once
            // that wait counts as a wedge, the policy fails closed at once,
            // naming itself.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let started = Instant::now();
            let results = echo().await;
            // Failing closed at once shows in the outcome (unavailable, not
            // timed out); the clock only catches a hang, generously.
            assert!(started.elapsed() < NOT_HUNG, "{:?}", started.elapsed());
            assert!(
                results[0].2 && results[0].1.contains("plugin 'a_before'"),
                "{results:?}"
            );
            assert!(
                results[0].1.contains("is unloaded") && !results[0].1.contains("timed out"),
                "failed closed at once, not at its deadline: {results:?}"
            );
            // Eight seconds after the import began, it lets go. (Waited for
            // generously: a loaded machine may be slow to see it.)
            let mut results = echo().await;
            while results[0].2 && opened.elapsed() < Duration::from_secs(60) {
                tokio::time::sleep(Duration::from_millis(200)).await;
                results = echo().await;
            }
            assert_eq!(results[0], ("echo".into(), "x +before".into(), false));
            // A new Python plugin loads (the holder, gone, is not retried).
            std::fs::remove_dir_all(dir.path().join("z_holder")).unwrap();
            install(dir.path(), "b_after", "only_after.py");
            host.reload();
            assert_eq!(echo().await[0].1, "x +before +after");
        },
    );
}

#[test]
fn a_thread_holding_the_interpreter_makes_python_calls_fail_closed() {
    in_own_process(
        "a_thread_holding_the_interpreter_makes_python_calls_fail_closed",
        async {
            let dir = plugin_dir();
            install_with_manifest(
                dir.path(),
                "holder",
                "thread_holds_the_interpreter.py",
                "[timeouts]\nafter_tool = 300\n",
            );
            write(dir.path(), "policy.ts", JS_POLICY);
            let host = PluginHost::open(dir.path()).unwrap();
            assert_eq!(host.plugins().len(), 2, "{:?}", host.refused());
            // The thread takes the interpreter half a second after import.
            tokio::time::sleep(Duration::from_millis(700)).await;

            let echo = |what: &'static str| {
                let host = &host;
                async move {
                    let (agent, _) =
                        scripted(vec![call("echo", json!({"text": what})), text("done")]);
                    let mut agent = agent.with_extension(host.extension());
                    let started = Instant::now();
                    let results = tool_results(&run(&mut agent, "go").await);
                    (results, started.elapsed())
                }
            };
            // The first call waits for the interpreter until its deadline.
            let (results, took) = echo("fine").await;
            assert!(
                results[0].2
                    && results[0]
                        .1
                        .contains("plugin 'thread-holds-the-interpreter'"),
                "{results:?}"
            );
            assert!(took >= Duration::from_millis(300), "{took:?}");
            assert!(results[0].1.contains("timed out"), "{results:?}");
            // Once a wait has lasted a second, calls fail closed at once.
            tokio::time::sleep(Duration::from_millis(1000)).await;
            let (results, took) = echo("fine").await;
            assert!(
                results[0].2
                    && results[0]
                        .1
                        .contains("plugin 'thread-holds-the-interpreter'"),
                "{results:?}"
            );
            // At once: refused as unavailable, not timed out at its
            // deadline. The outcome proves it; the clock only catches a
            // hang, generously, so a busy machine does not fail it.
            assert!(
                results[0].1.contains("is unloaded") && !results[0].1.contains("timed out"),
                "failed closed at once, not at its deadline: {results:?}"
            );
            assert!(took < NOT_HUNG, "{took:?}");
            // The JS policy still judges.
            let (results, _) = echo("forbidden").await;
            assert!(
                results[0].1.contains("the js policy says no"),
                "{results:?}"
            );
        },
    );
}

#[test]
fn sleeping_exiting_and_thread_leaving_imports_never_take_the_host_down() {
    in_own_process(
        "sleeping_exiting_and_thread_leaving_imports_never_take_the_host_down",
        async {
            let dir = plugin_dir();
            install_with_manifest(
                dir.path(),
                "a_sleeper",
                "sleeps_on_import.py",
                "[timeouts]\nload = 500\n",
            );
            install(dir.path(), "b_exits", "os_exit_on_import.py");
            install(dir.path(), "c_spinner", "leaves_a_thread_spinning.py");
            install(dir.path(), "d_after", "only_after.py");
            let started = Instant::now();
            let host = PluginHost::open(dir.path()).unwrap();
            // The sleeper sleeps for an hour and the spinner spins forever:
            // the refusals below prove the deadlines; the bound only
            // catches a hang, generously, so a busy machine does not fail it.
            assert!(started.elapsed() < NOT_HUNG, "{:?}", started.elapsed());
            let sleeper = refusal(&host, "a_sleeper");
            assert!(
                sleeper.contains("did not finish within its load deadline of 500ms"),
                "{sleeper}"
            );
            let exits = refusal(&host, "b_exits");
            assert!(
                exits.contains("b_exits.py:3: ExitRefused: called os._exit(0)"),
                "{exits}"
            );
            let loaded: Vec<String> = host.plugins().iter().map(|p| p.name.clone()).collect();
            assert_eq!(loaded, ["d_after", "leaves-a-thread-spinning"]);

            let (agent, _) = scripted(vec![call("echo", json!({"text": "x"})), text("done")]);
            let mut agent = agent.with_extension(host.extension());
            let results = tool_results(&run(&mut agent, "go").await);
            assert_eq!(
                results[0],
                ("echo".into(), "x +spinning +after".into(), false)
            );
        },
    );
}
