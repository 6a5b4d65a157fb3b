//! Python plugins through a real `yoagent::Agent`:
//! - every hook kind works from Python, with `def` and with `async def`
//!   handlers: tools, call_tool, before_tool (deny and rewrite), after_tool,
//!   before_model, on_input, on_stop, on_event and finish;
//! - an exception, `sys.exit()`, `os._exit()`, a wrong reply shape or an
//!   unserializable reply fails closed (the call is denied, naming the
//!   plugin in fixed words; the detail and its `error_kind` go to the log),
//!   an exception's traceback is logged with the plugin and `run_id`, and
//!   the next run works;
//! - an exception and `HookError` are the plugin's own error: the plugin
//!   keeps serving the run;
//! - a hook past its deadline fails closed and is interrupted: a spinning
//!   loop stops, an awaiting coroutine is cancelled, and a `time.sleep` is
//!   interrupted when it returns;
//! - import errors, syntax errors, `sys.exit()` at import and a module
//!   without a `Plugin` are refused at load with the file and line, and the
//!   other plugins load;
//! - two plugin files never share handlers, a package plugin imports its
//!   own modules, and a changed file is imported as new code at the next run;
//! - log lines of two concurrent runs through one plugin (through `log` and
//!   `logging`, across an `await`) carry their own `run_id`;
//! - the embedded interpreter is the one `python3` names, not another
//!   `libpython` the loader knows;
//! - the Python examples (a policy, a tool, an on_stop verifier) load from
//!   `examples/` and do what they say.

use crate::support;

use serde_json::json;
use std::path::{Path, PathBuf};
use support::*;
use yohost::{PluginHost, Status};

/// A fixture of `tests/plugins/python/`.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/plugins/python")
        .join(name)
}

/// Copy the fixture file `file` to `dir/<name>.py`.
fn install(dir: &Path, name: &str, file: &str) {
    std::fs::copy(fixture(file), dir.join(format!("{name}.py"))).unwrap();
}

/// Copy the fixture file `file` into `dir/<name>/`, beside a manifest.
fn install_with_manifest(dir: &Path, name: &str, file: &str, manifest: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::copy(fixture(file), dir.join(name).join(file)).unwrap();
    write(dir, &format!("{name}/plugin.toml"), manifest);
}

/// Whether a plugin logs `message` within two seconds.
async fn logged_soon(logs: &Captured, message: &str) -> bool {
    for _ in 0..40 {
        if logs
            .plugin_lines()
            .iter()
            .any(|l| l["fields"]["message"] == message)
        {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

async fn echo_through(host: &PluginHost, text_arg: &str) -> Vec<(String, String, bool)> {
    let (agent, _) = scripted(vec![call("echo", json!({"text": text_arg})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
}

async fn every_hook_kind_works(file: &str, plugin: &str) {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(dir.path(), "hooks", file);
    let host = PluginHost::open(dir.path()).unwrap();
    let loaded = host.plugins();
    assert_eq!(loaded.len(), 1, "{:?}", host.refused());
    assert_eq!(loaded[0].name, plugin);
    assert_eq!(loaded[0].hooks.len(), 9, "{:?}", loaded[0].hooks);

    // on_input rejects.
    let (agent, requests) = scripted(vec![text("never sent")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "this is blocked").await;
    let rejection = input_rejection(&events).expect("the input is rejected");
    assert!(
        rejection.contains("python rejects this input"),
        "{rejection}"
    );
    assert!(requests.lock().unwrap().is_empty());

    // The rest, in one run.
    let (agent, requests) = scripted(vec![
        call("echo", json!({"text": "forbidden"})),
        call("echo", json!({"text": "rewrite me"})),
        call("shout", json!({"text": "hi"})),
        text("a draft answer"),
        text("the final answer"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[0].2 && results[0].1.contains("python says no"),
        "{results:?}"
    );
    assert_eq!(
        results[1],
        (
            "echo".into(),
            "rewritten by python [filtered]".into(),
            false
        )
    );
    assert_eq!(results[2], ("shout".into(), "HI!".into(), false));
    let requests = requests.lock().unwrap();
    assert_eq!(requests.len(), 5, "on_stop continued the run once");
    assert!(
        format!("{:?}", requests[0]).contains("python note for mock"),
        "before_model's note is sent"
    );
    assert!(
        last_user_text(&requests[4]).contains("please finalize the draft"),
        "on_stop continued"
    );
    assert_eq!(final_assistant(&events).0, yoagent::StopReason::Stop);
    let lines = logs.plugin_lines();
    let finished = lines
        .iter()
        .find(|l| {
            l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("finished: completed after"))
        })
        .unwrap_or_else(|| panic!("finish's log line in {lines:?}"));
    assert_ne!(
        finished["fields"]["message"], "finished: completed after 0 events",
        "on_event saw the events"
    );
    assert_eq!(finished["fields"]["plugin"], plugin);
}

#[tokio::test]
async fn every_hook_kind_works_from_plain_def_handlers() {
    every_hook_kind_works("every_hook.py", "every-hook").await;
}

#[tokio::test]
async fn every_hook_kind_works_from_async_def_handlers() {
    every_hook_kind_works("every_hook_async.py", "every-hook-async").await;
}

/// A host with the hostile policy, its `before_tool` limited to 300 ms.
fn hostile_host(dir: &Path) -> PluginHost {
    install_with_manifest(
        dir,
        "hostile",
        "hostile.py",
        "[timeouts]\nbefore_tool = 300\n",
    );
    let host = PluginHost::open(dir).unwrap();
    assert_eq!(host.plugins().len(), 1, "{:?}", host.refused());
    host
}

/// The hostile behaviour `what` is denied with fixed words that name the
/// plugin, the log has the failure's `error_kind` and `detail` (which the
/// model never reads), and the next run works.
async fn fails_closed(
    host: &PluginHost,
    logs: &Captured,
    what: &str,
    error_kind: &str,
    detail: &str,
) {
    let results = echo_through(host, what).await;
    assert_eq!(results.len(), 1, "{what}: {results:?}");
    let (_, message, is_error) = &results[0];
    assert!(is_error, "{what}: the call is denied: {message}");
    assert!(message.contains("plugin 'hostile'"), "{what}: {message}");
    assert!(!message.contains(detail), "{what}: {message}");
    assert!(
        lines_with(logs, "error_kind", error_kind)
            .iter()
            .any(|l| l["fields"]["plugin"] == "hostile"
                && l["fields"]["message"].as_str().unwrap().contains(detail)),
        "{what}: {error_kind} with {detail} in {:?}",
        logs.lines()
    );
    let results = echo_through(host, "fine").await;
    assert_eq!(
        results[0],
        ("echo".into(), "fine".into(), false),
        "after {what}"
    );
}

#[tokio::test]
async fn an_exception_fails_closed_and_its_traceback_is_logged_with_the_run() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    fails_closed(
        &host,
        &logs,
        "raise",
        "guest",
        "RuntimeError: hostile plugin raised on purpose",
    )
    .await;
    let lines = logs.plugin_lines();
    let traceback = lines
        .iter()
        .find(|l| {
            l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("Traceback"))
        })
        .unwrap_or_else(|| panic!("a traceback in {lines:?}"));
    let message = traceback["fields"]["message"].as_str().unwrap();
    assert!(message.contains("hostile.py\", line 19"), "{message}");
    assert_eq!(traceback["fields"]["plugin"], "hostile");
    assert_eq!(traceback["fields"]["level"], "error");
    assert!(!traceback["fields"]["run_id"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn sys_exit_and_os_exit_fail_closed_and_the_host_survives() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    fails_closed(&host, &logs, "exit", "crashed", "called sys.exit(3)").await;
    fails_closed(&host, &logs, "os exit", "crashed", "called os._exit(4)").await;
}

#[tokio::test]
async fn an_exception_is_the_plugins_answer_and_the_plugin_keeps_serving_the_run() {
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    let (agent, _) = scripted(vec![
        call("echo", json!({"text": "raise"})),
        call("echo", json!({"text": "fine"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(results[0].2, "{results:?}");
    assert_eq!(
        results[1],
        ("echo".into(), "fine".into(), false),
        "the same run goes on"
    );
}

#[tokio::test]
async fn a_wrong_reply_shape_or_an_unserializable_reply_fails_closed() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    fails_closed(
        &host,
        &logs,
        "wrong shape",
        "bad_reply",
        "unknown field `allow`",
    )
    .await;
    fails_closed(
        &host,
        &logs,
        "not json",
        "bad_reply",
        "not JSON-serializable",
    )
    .await;
}

#[tokio::test]
async fn a_hook_error_is_the_plugins_own_and_the_plugin_keeps_serving_the_run() {
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    let (agent, _) = scripted(vec![
        call("echo", json!({"text": "refuse"})),
        call("echo", json!({"text": "fine"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(results[0].2, "{results:?}");
    assert!(
        results[0]
            .1
            .contains("plugin 'hostile' returned an error in before_tool"),
        "{results:?}"
    );
    assert!(
        !results[0].1.contains("refuses on purpose"),
        "the plugin's own text stays in the log: {results:?}"
    );
    assert_eq!(
        results[1],
        ("echo".into(), "fine".into(), false),
        "the same run goes on"
    );
}

#[tokio::test]
async fn a_spinning_hook_fails_closed_and_is_interrupted() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    fails_closed(&host, &logs, "spin", "timeout", "300ms").await;
    // The loop itself was stopped, not only abandoned. The interrupt is
    // raised by another thread that must first get the GIL from the spinning
    // one, so on a loaded machine it may land after the calls above: ask a
    // few times before calling the loop unstoppable.
    let mut results = Vec::new();
    for _ in 0..20 {
        results = echo_through(&host, "still spinning?").await;
        if results[0].1.contains("stopped spinning") {
            return;
        }
    }
    panic!("the spinning hook was never stopped: {results:?}");
}

#[tokio::test]
async fn an_async_hook_spinning_or_awaiting_forever_fails_closed_and_is_stopped() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    fails_closed(&host, &logs, "async", "timeout", "300ms").await;
    assert!(
        logged_soon(&logs, "cancelled at the deadline").await,
        "the awaiting coroutine was cancelled: {:?}",
        logs.plugin_lines()
    );
    fails_closed(&host, &logs, "async spin", "timeout", "300ms").await;
    // A spinning coroutine ignores its cancellation; the exception raised
    // into its thread after the grace period stops it.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let results = echo_through(&host, "still spinning?").await;
    assert!(results[0].1.contains("stopped spinning"), "{results:?}");
}

#[tokio::test]
async fn a_sleeping_hook_fails_closed_and_is_interrupted_when_the_sleep_returns() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let host = hostile_host(dir.path());
    // `time.sleep(999)` keeps its worker; the next runs get other workers.
    fails_closed(&host, &logs, "sleep", "timeout", "300ms").await;
    // A 1.5 s nap is not cut short, but the code after it never runs.
    fails_closed(&host, &logs, "nap", "timeout", "300ms").await;
    tokio::time::sleep(std::time::Duration::from_millis(2000)).await;
    let lines = logs.plugin_lines();
    assert!(
        !lines
            .iter()
            .any(|l| l["fields"]["message"] == "woke up after the deadline"),
        "{lines:?}"
    );
}

#[tokio::test]
async fn import_and_syntax_errors_are_refused_at_load_with_file_and_line() {
    let dir = plugin_dir();
    install(dir.path(), "import_error", "import_error.py");
    install(dir.path(), "syntax_error", "syntax_error.py");
    install(dir.path(), "exits_on_import", "exits_on_import.py");
    install(dir.path(), "no_plugin", "no_plugin.py");
    install(dir.path(), "fine", "only_before.py");
    let host = PluginHost::open(dir.path()).unwrap();
    let report = host.report().await;
    let reason = |name: &str| {
        let entry = report
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{name} in {report:?}"));
        assert_eq!(entry.status, Status::Refused, "{entry:?}");
        entry.reason.clone().unwrap()
    };
    let import = reason("import_error");
    assert!(
        import.contains("import_error.py:3: ModuleNotFoundError"),
        "{import}"
    );
    assert!(import.contains("yohost_no_such_module"), "{import}");
    let syntax = reason("syntax_error");
    assert!(
        syntax.contains("syntax_error.py:3: SyntaxError"),
        "{syntax}"
    );
    let exits = reason("exits_on_import");
    assert!(
        exits.contains("exits_on_import.py:3: called sys.exit('not today')"),
        "{exits}"
    );
    let none = reason("no_plugin");
    assert!(none.contains("defines no `yohost.Plugin`"), "{none}");
    assert_eq!(host.plugins().len(), 1);
    assert_eq!(echo_through(&host, "x").await[0].1, "x +before");
}

#[tokio::test]
async fn two_plugin_files_never_share_handlers() {
    let dir = plugin_dir();
    install(dir.path(), "a_before", "only_before.py");
    install(dir.path(), "b_after", "only_after.py");
    let host = PluginHost::open(dir.path()).unwrap();
    let hooks: Vec<(String, Vec<&str>)> = host
        .plugins()
        .iter()
        .map(|p| (p.name.clone(), p.hooks.iter().map(|h| h.as_str()).collect()))
        .collect();
    assert_eq!(
        hooks,
        [
            ("a_before".to_string(), vec!["before_tool"]),
            ("b_after".to_string(), vec!["after_tool"])
        ]
    );
    assert_eq!(echo_through(&host, "x").await[0].1, "x +before +after");
}

#[tokio::test]
async fn a_package_plugin_imports_its_own_modules() {
    let dir = plugin_dir();
    let package = dir.path().join("package");
    std::fs::create_dir(&package).unwrap();
    for file in ["__init__.py", "helpers.py"] {
        std::fs::copy(fixture(&format!("package/{file}")), package.join(file)).unwrap();
    }
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 1, "{:?}", host.refused());
    let (agent, _) = scripted(vec![
        call("backwards", json!({"text": "abc"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results[0], ("backwards".into(), "cba".into(), false));
}

#[tokio::test]
async fn a_changed_plugin_file_is_imported_as_new_code_at_the_next_run() {
    let dir = plugin_dir();
    let tagger = |tag: &str| {
        format!(
            "from yohost import Plugin, Rewrite\n\nplugin = Plugin()\n\n\n@plugin.before_tool\ndef tag(call):\n    return Rewrite({{\"text\": call[\"args\"][\"text\"] + \" {tag}\"}})\n"
        )
    };
    write(dir.path(), "tagger.py", &tagger("+old"));
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(echo_through(&host, "x").await[0].1, "x +old");
    write(dir.path(), "tagger.py", &tagger("+newer"));
    host.reload();
    assert_eq!(echo_through(&host, "x").await[0].1, "x +newer");
}

#[tokio::test]
async fn logs_of_two_concurrent_runs_carry_their_own_run_id() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    install(dir.path(), "slow_logger", "slow_logger.py");
    let host = PluginHost::open(dir.path()).unwrap();
    let (one, two) = tokio::join!(echo_through(&host, "one"), echo_through(&host, "two"));
    assert_eq!(one[0].1, "one");
    assert_eq!(two[0].1, "two");
    let lines = logs.plugin_lines();
    // The runs overlapped: each started before the other ended (its hook
    // awaits 300 ms between the two lines). Shown by the order of the lines,
    // not by the clock, which a loaded machine cannot race.
    let at = |message: &str| line_index(&lines, message);
    assert!(
        at("start one") < at("end two") && at("start two") < at("end one"),
        "the runs overlapped: {lines:?}"
    );
    let run_of = |message: &str| -> String {
        let line = lines
            .iter()
            .find(|l| l["fields"]["message"] == message)
            .unwrap_or_else(|| panic!("{message:?} in {lines:?}"));
        let run_id = line["fields"]["run_id"].as_str().unwrap().to_string();
        assert_eq!(
            line["span"]["run_id"],
            run_id.as_str(),
            "the line is inside its call's span"
        );
        run_id
    };
    assert_eq!(run_of("start one"), run_of("end one"));
    assert_eq!(run_of("start two"), run_of("end two"));
    assert_ne!(run_of("start one"), run_of("start two"));
}

#[tokio::test]
async fn the_embedded_interpreter_is_the_one_python3_names() {
    let dir = plugin_dir();
    install(dir.path(), "interpreter", "interpreter.py");
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![call("interpreter", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    let embedded: serde_json::Value = serde_json::from_str(&results[0].1).unwrap();
    let python3 = |code: &str| {
        let out = std::process::Command::new("python3")
            .args(["-c", code])
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string()
    };
    assert_eq!(
        embedded["version"],
        python3("import sys; print(sys.version)")
    );
    assert_eq!(
        embedded["prefix"],
        python3("import sys; print(sys.base_prefix)")
    );
    let libdir = python3("import sysconfig; print(sysconfig.get_config_var('LIBDIR'))");
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let libpythons: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|path| path.contains("libpython"))
        .collect();
    assert!(!libpythons.is_empty(), "libpython is mapped");
    assert!(
        libpythons.iter().all(|p| p.starts_with(&libdir)),
        "{libpythons:?} not under {libdir}"
    );
}

#[tokio::test]
async fn the_python_examples_load_and_work() {
    // The Python examples alone: examples/ also holds policies in other
    // languages that would answer first.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let dir = plugin_dir();
    for entry in ["python-policy", "python-tool.py", "python-verifier"] {
        copy_tree(&examples.join(entry), &dir.path().join(entry));
    }
    let host = PluginHost::open(dir.path()).unwrap();
    let names: Vec<String> = host.plugins().iter().map(|p| p.name.clone()).collect();
    for name in ["python-policy", "python-tool", "python-verifier"] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} in {names:?}: {:?}",
            host.refused()
        );
    }
    let (agent, requests) = scripted(vec![
        call("bash", json!({"command": "rm -rf /tmp/x"})),
        call("word_stats", json!({"text": "a b a c a b", "top": 2})),
        text("TODO: write the answer"),
        text("still TODO"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(yoagent::tools::bash::BashTool::new())])
        .with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    let results = tool_results(&events);
    assert!(
        results[0].2
            && results[0]
                .1
                .contains("destructive commands are not allowed"),
        "{results:?}"
    );
    assert_eq!(results[1].1, "6 words; most common: a (3), b (2)");
    assert!(
        last_user_text(&requests.lock().unwrap()[3]).contains("Your answer is unfinished (TODO)")
    );
    let (stop, error) = final_assistant(&events);
    assert_eq!(stop, yoagent::StopReason::Error, "{error:?}");
    assert!(error
        .unwrap()
        .contains("the answer is still unfinished: TODO"));
}

/// Copy a file, or a folder and everything in it.
fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap().path();
            copy_tree(&entry, &to.join(entry.file_name().unwrap()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}
