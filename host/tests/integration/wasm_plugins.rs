//! Wasm component plugins through a real `yoagent::Agent`:
//! - a Wasm policy denies and rewrites calls; a Wasm tool returns text and
//!   an image; a Wasm after_tool filter redacts output, and the same source
//!   built as a dylib does the same;
//! - a plugin's log lines carry the run's `run_id`;
//! - hostile guests fail closed: an infinite loop is interrupted at its
//!   deadline (the instance is discarded, the next run is served), a memory
//!   bomb is stopped at the limit, a panic crashes only its run;
//! - the sandbox denies by default: no file outside granted directories
//!   (a permission error in the guest, and a log line naming the path and
//!   the grant to add), no read-only grant written, no environment variable not granted, no
//!   wall clock; granted directories and variables work;
//! - a component built against a newer WIT version than the host speaks, a
//!   core module and junk are refused at load with a reason;
//! - compiled components are cached, and a corrupt artifact is compiled
//!   again.

use crate::support;
use crate::wasm_guests;

use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;
use wasm_guests::guest;
use yohost::{PluginHost, Status};

/// Put the component `guest_name` in `dir/<name>/` with a manifest.
fn install(dir: &Path, name: &str, guest_name: &str, manifest_extra: &str) {
    let wasm = guest(guest_name);
    write(
        dir,
        &format!("{name}/plugin.toml"),
        &format!(
            "name = \"{name}\"\nentry = {:?}\n{manifest_extra}",
            wasm.display().to_string()
        ),
    );
}

/// Run one agent turn per `echo` text, all in one run.
async fn echo_all(host: &PluginHost, texts: &[&str]) -> Vec<(String, String, bool)> {
    let mut script: Vec<_> = texts
        .iter()
        .map(|t| call("echo", json!({ "text": t })))
        .collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
}

/// The one result of echoing `text` in a fresh run.
async fn echo(host: &PluginHost, text_arg: &str) -> (String, bool) {
    let results = echo_all(host, &[text_arg]).await;
    assert_eq!(results.len(), 1, "{results:?}");
    (results[0].1.clone(), results[0].2)
}

/// Whether a failed hook of `hostile` was logged with `error_kind` and a
/// message containing `detail`.
fn logged_failure(logs: &Captured, error_kind: &str, detail: &str) -> bool {
    lines_with(logs, "error_kind", error_kind).iter().any(|l| {
        l["fields"]["plugin"] == "hostile"
            && l["fields"]["message"].as_str().unwrap().contains(detail)
    })
}

#[tokio::test]
async fn a_wasm_policy_denies_and_rewrites_calls() {
    let dir = plugin_dir();
    install(dir.path(), "policy", "guest_policy", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let results = echo_all(&host, &["shout:hello", "some forbidden words", "plain"]).await;
    assert_eq!(results[0], ("echo".into(), "HELLO".into(), false));
    assert!(results[1].2, "the denied call is an error result");
    assert!(
        results[1].1.contains("wasm-policy: forbidden text"),
        "{results:?}"
    );
    assert_eq!(results[2], ("echo".into(), "plain".into(), false));
}

#[tokio::test]
async fn a_wasm_tool_returns_text_and_an_image() {
    let dir = plugin_dir();
    install(dir.path(), "policy", "guest_policy", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![call("pixel", json!({})), text("drawn")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "draw").await;
    let result = events
        .iter()
        .find_map(|e| match e {
            yoagent::AgentEvent::ToolExecutionEnd {
                result, is_error, ..
            } => Some((result.clone(), *is_error)),
            _ => None,
        })
        .expect("the tool ran");
    assert!(!result.1, "{result:?}");
    assert_eq!(texts(&result.0.content), "one pixel");
    assert!(
        result.0.content.iter().any(
            |c| matches!(c, yoagent::Content::Image { mime_type, .. } if mime_type == "image/png")
        ),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_wasm_after_tool_filter_redacts_output_and_logs_with_the_run_id() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(dir.path(), "redactor", "wasm_redactor", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![
        call(
            "echo",
            json!({"text": "key sk-abcdef123456 and password=hunter2."}),
        ),
        call("redact", json!({"text": "token=xyz AKIAABCDEFGHIJKLMNOP"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(
        results[0],
        (
            "echo".into(),
            "key [redacted] and password=[redacted].".into(),
            false
        )
    );
    assert_eq!(
        results[1],
        ("redact".into(), "token=[redacted] [redacted]".into(), false)
    );
    let lines = logs.plugin_lines();
    let line = lines
        .iter()
        .find(|l| l["fields"]["message"] == "echo output: redacted 2 secrets")
        .unwrap_or_else(|| panic!("the plugin's log line in {lines:?}"));
    assert_eq!(line["fields"]["plugin"], "redactor");
    assert!(!line["fields"]["run_id"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn the_redactor_source_built_as_a_dylib_redacts_the_same() {
    let dir = plugin_dir();
    let lib = example_dylib("example_redactor");
    write(
        dir.path(),
        "redactor/plugin.toml",
        &format!("entry = {:?}", lib.display().to_string()),
    );
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(
        echo(&host, "use sk-abcdef123456").await,
        ("use [redacted]".into(), false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infinite_loop_is_interrupted_at_its_deadline_and_the_next_run_is_served() {
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "guest_hostile",
        "[timeouts]\nbefore_tool = 300",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let started = Instant::now();
    let results = echo_all(&host, &["spin", "fine"]).await;
    // The guest spins forever: the outcome (timed out) proves the deadline;
    // the bound catches a hang, generous so a loaded machine does not fail it.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
    assert!(results[0].2, "the spinning call is denied: {results:?}");
    assert!(
        results[0].1.contains("plugin 'hostile'") && results[0].1.contains("timed out"),
        "{results:?}"
    );
    // The guest was interrupted, not merely abandoned: its instance is
    // discarded, and the rest of the run fails closed without waiting.
    assert!(results[1].2, "{results:?}");
    assert!(
        results[1].1.contains("unloaded for the rest of this run"),
        "{results:?}"
    );
    assert_eq!(echo(&host, "fine").await, ("fine".into(), false));
}

#[tokio::test]
async fn a_memory_bomb_is_stopped_at_the_limit() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "guest_hostile",
        "[limits]\nmemory_mib = 16",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    let (message, denied) = echo(&host, "bomb").await;
    assert!(denied);
    assert!(
        message.contains("plugin 'hostile' ran out of memory"),
        "{message}"
    );
    assert!(
        logged_failure(&logs, "out_of_memory", "limit 16777216 bytes"),
        "{:?}",
        logs.lines()
    );
    assert_eq!(echo(&host, "fine").await, ("fine".into(), false));
}

#[tokio::test]
async fn a_panic_fails_closed_for_the_rest_of_its_run_only() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(dir.path(), "hostile", "guest_hostile", "");
    let host = PluginHost::open(dir.path()).unwrap();
    let results = echo_all(&host, &["panic", "fine"]).await;
    assert!(
        results[0].2 && results[0].1.contains("plugin 'hostile' crashed"),
        "{results:?}"
    );
    assert!(
        logged_failure(&logs, "crashed", "trapped"),
        "{:?}",
        logs.lines()
    );
    assert!(
        results[1].2 && results[1].1.contains("unloaded for the rest of this run"),
        "{results:?}"
    );
    let lines = logs.plugin_lines();
    assert!(
        lines.iter().any(|l| l["fields"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("wasm guest panicked on purpose")),
        "the panic message is logged: {lines:?}"
    );
    assert_eq!(echo(&host, "fine").await, ("fine".into(), false));
}

#[tokio::test]
async fn files_outside_granted_directories_cannot_be_read_or_written() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "guest_hostile",
        "[capabilities]\nread = [\"data\"]\nwrite = [\"out\"]",
    );
    write(dir.path(), "hostile/data/hello.txt", "hello from data\n");
    write(dir.path(), "hostile/secret/key.txt", "do not read\n");
    std::fs::create_dir_all(dir.path().join("hostile/out")).unwrap();
    let host = PluginHost::open(dir.path()).unwrap();

    assert_eq!(
        echo(&host, "read:data/hello.txt").await,
        ("hello from data".into(), false)
    );
    // (path read, path the host's log line names)
    for (path, named) in [
        ("/etc/passwd", "/etc/passwd"),
        ("secret/key.txt", "/secret/key.txt"),
        ("data/../secret/key.txt", "data/../secret/key.txt"),
        ("/", "/"),
    ] {
        let (message, denied) = echo(&host, &format!("read:{path}")).await;
        assert!(
            denied && message.contains("plugin 'hostile' returned an error"),
            "{path}: {message}"
        );
        // The guest sees a permission error (std's `PermissionDenied`), not
        // "No such file or directory".
        assert!(
            logged_failure(
                &logs,
                "guest",
                &format!("cannot read {path}: Permission denied")
            ),
            "{path}: {:?}",
            logs.lines()
        );
        // The host names the path and the grant to add.
        assert!(
            lines_with(&logs, "path", named).iter().any(|l| {
                l["fields"]["plugin"] == "hostile"
                    && l["fields"]["message"].as_str().unwrap().contains(&format!(
                        "reading {named} is not granted: add its folder to `capabilities.read` in the plugin's plugin.toml"
                    ))
            }),
            "{path}: {:?}",
            logs.lines()
        );
    }
    // A granted file still reads after the denials.
    assert_eq!(
        echo(&host, "read:/data/hello.txt").await,
        ("hello from data".into(), false)
    );
    let (message, denied) = echo(&host, "write:data/new.txt").await;
    assert!(denied, "{message}");
    assert!(
        logged_failure(&logs, "guest", "cannot write data/new.txt"),
        "{:?}",
        logs.lines()
    );
    assert!(
        lines_with(&logs, "path", "data/new.txt").iter().any(|l| {
            l["fields"]["message"].as_str().unwrap().contains(
                "writing data/new.txt is not granted: add its folder to `capabilities.write`",
            )
        }),
        "{:?}",
        logs.lines()
    );
    assert!(!dir.path().join("hostile/data/new.txt").exists());
    // A write outside every grant names the write grant to add.
    let (message, denied) = echo(&host, "write:/yohost-wasm-denied.txt").await;
    assert!(denied, "{message}");
    assert!(
        logged_failure(
            &logs,
            "guest",
            "cannot write /yohost-wasm-denied.txt: Permission denied"
        ),
        "{:?}",
        logs.lines()
    );
    assert!(
        lines_with(&logs, "path", "/yohost-wasm-denied.txt")
            .iter()
            .any(|l| {
                l["fields"]["message"].as_str().unwrap().contains(
                "writing /yohost-wasm-denied.txt is not granted: add its folder to `capabilities.write`",
            )
            }),
        "{:?}",
        logs.lines()
    );
    assert_eq!(
        echo(&host, "write:out/new.txt").await,
        ("wrote".into(), false)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hostile/out/new.txt")).unwrap(),
        "written"
    );
}

#[tokio::test]
async fn a_file_grant_refuses_a_wasm_component_naming_the_folder_to_grant() {
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "guest_hostile",
        "[capabilities]\nread = [\"data/hello.txt\"]",
    );
    write(dir.path(), "hostile/data/hello.txt", "hello from data\n");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let plugin = reported(&report, "hostile");
    assert_eq!(plugin.status, yohost::Status::Refused, "{plugin:?}");
    assert!(
        plugin
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("grant the folder of data/hello.txt")),
        "{plugin:?}"
    );
}

#[tokio::test]
async fn only_granted_environment_variables_are_visible_and_the_wall_clock_is_frozen() {
    std::env::set_var("YOHOST_WASM_TEST_GRANTED", "granted value");
    std::env::set_var("YOHOST_WASM_TEST_SECRET", "secret value");
    let dir = plugin_dir();
    install(
        dir.path(),
        "hostile",
        "guest_hostile",
        "[capabilities]\nenv = [\"YOHOST_WASM_TEST_GRANTED\"]",
    );
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(
        echo(&host, "env:YOHOST_WASM_TEST_GRANTED").await,
        ("granted value".into(), false)
    );
    assert_eq!(
        echo(&host, "env:YOHOST_WASM_TEST_SECRET").await,
        ("unset".into(), false)
    );
    assert_eq!(echo(&host, "env:PATH").await, ("unset".into(), false));
    assert_eq!(echo(&host, "clock").await, ("0".into(), false));
}

#[tokio::test]
async fn a_component_writes_in_the_data_folder_its_environment_names_and_nowhere_beside() {
    let dir = plugin_dir();
    let data = tempfile::tempdir().unwrap();
    install(dir.path(), "hostile", "guest_hostile", "");
    let host = PluginHost::builder(dir.path())
        .data_dir(data.path())
        .open()
        .unwrap();
    let (folder, failed) = echo(&host, "env:YOHOST_DATA_DIR").await;
    assert!(!failed, "{folder}");
    assert_eq!(echo(&host, "data_dir").await, (folder.clone(), false));
    let real = Path::new(&folder);
    assert!(
        real.starts_with(data.path().canonicalize().unwrap()) && real.ends_with("hostile"),
        "{folder}"
    );
    assert_eq!(
        echo(&host, &format!("write:{folder}/note")).await,
        ("wrote".into(), false)
    );
    assert_eq!(
        std::fs::read_to_string(real.join("note")).unwrap(),
        "written"
    );
    // The folder that holds every plugin's of this directory is not its.
    let (_, failed) = echo(&host, &format!("write:{folder}/../other")).await;
    assert!(failed, "wrote beside its data folder");
    assert!(!real.with_file_name("other").exists());
}

#[tokio::test]
async fn other_wit_versions_core_modules_and_junk_are_refused_at_load() {
    let dir = plugin_dir();
    install(dir.path(), "future", "guest_next_wit", "");
    install(dir.path(), "policy", "guest_policy", "");
    write(dir.path(), "core.wasm", "\0asm\x01\0\0\0");
    write(dir.path(), "junk.wasm", "not wasm at all");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let by_name = |n: &str| reported(&report, n);
    assert_eq!(by_name("policy").status, Status::Loaded);
    let future = by_name("future");
    assert_eq!(future.status, Status::Refused);
    let reason = future.reason.as_deref().unwrap();
    assert!(
        reason.contains(
            "built against yohost:plugin@0.2.0, newer than this host speaks (yohost:plugin@0.1.0)"
        ) && reason.contains("update yohost"),
        "{reason}"
    );
    let core = by_name("core").reason.clone().unwrap();
    assert!(
        core.contains("a core Wasm module, not a component"),
        "{core}"
    );
    let junk = by_name("junk").reason.clone().unwrap();
    assert!(junk.contains("not a valid component"), "{junk}");
}

#[tokio::test]
async fn compiled_components_are_cached_and_a_corrupt_artifact_is_compiled_again() {
    let wasm = std::fs::read(guest("guest_policy")).unwrap();
    let dir = plugin_dir();
    install(dir.path(), "policy", "guest_policy", "");
    PluginHost::open(dir.path()).unwrap();
    let artifact = yohost::internal::cached_artifact(&wasm).expect("a cache directory");
    assert!(
        artifact.is_file(),
        "{} is written at load",
        artifact.display()
    );
    std::fs::write(&artifact, b"corrupt").unwrap();
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 1, "{:?}", host.refused());
    assert_ne!(
        std::fs::read(&artifact).unwrap(),
        b"corrupt",
        "the artifact is rewritten"
    );
    assert_eq!(echo(&host, "shout:ok").await, ("OK".into(), false));
}
