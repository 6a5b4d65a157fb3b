//! What each loaded example of the pinned pi package with tools or guards
//! does, through a real agent. The examples (from `VERDICTS` in
//! `pi_adapter.rs`: hooks `tools`, `before_tool`, `after_tool`, `on_input`, `before_model`):
//!
//! | Example | Shown here |
//! |---|---|
//! | bash-spawn-hook | `bash` runs through the exec service, only with `capabilities.exec` |
//! | built-in-tool-renderer | its `read`, `write`, `edit` and `bash` work as pi's, within the grants |
//! | dynamic-tools | `echo_session`, registered in `session_start`, echoes with its prefix |
//! | inline-bash | a prompt with `!{…}` is rewritten, so the host rejects it; others run |
//! | input-transform-streaming | a prompt about changes needs `git diff` (`exec`): without it the hook fails closed |
//! | minimal-mode | `read` and `ls` work within the grants; `find` names the agent's own `list_files` |
//! | question, questionnaire | no UI: the tool answers pi's "UI not available" error |
//! | reload-runtime | `reload_runtime` answers that a reload was requested |
//! | shutdown-command | `finish_and_exit` fails naming `ctx.shutdown` (the host has no app to end) |
//! | subagent | without `exec` the subagent cannot start; invalid parameters are an error result, marked by its `tool_result` handler |
//! | tic-tac-toe | `tic_tac_toe_see_board` shows the board; a move saves it with `pi.appendEntry` |
//! | tool-override | `read` denies `.env` with its reason and reads other files within the grants |
//! | truncated-tool | `rg` runs through `execSync` on Node, where the extension is sent |
//! | with-deps | `parse_duration` runs the `ms` package from its own `node_modules` |
//! | claude-rules, pirate, preset, tic-tac-toe (`before_agent_start`) | no note while their mode is off, and the hook fails nothing |
//!
//! hello, input-transform, permission-gate, protected-paths, todo and
//! structured-output are shown in `pi_adapter.rs`.

use crate::support;

use crate::package;

use package::*;
use serde_json::json;
use std::path::Path;
use support::*;
use yoagent::provider::mock::MockResponse;
use yohost::PluginHost;

/// Copy `from` (a file or a folder) to `to`.
fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// A plugin directory holding example `name` as a folder with `manifest`
/// as its `plugin.toml`, and a host over it; the example must load.
fn example(name: &str, manifest: &str) -> (tempfile::TempDir, PluginHost) {
    let dir = plugin_dir();
    let source = examples().join(name);
    let folder = dir.path().join(name);
    if source.is_dir() {
        copy(&source, &folder);
    } else {
        std::fs::create_dir(&folder).unwrap();
        std::fs::copy(source.with_extension("ts"), folder.join("index.ts")).unwrap();
    }
    std::fs::write(folder.join("plugin.toml"), manifest).unwrap();
    let host = open_with_node(dir.path());
    assert!(host.refused().is_empty(), "{name}: {:?}", host.refused());
    (dir, host)
}

/// The tool results of one run of `script` (then "done") with `host`'s
/// plugins.
async fn results(host: &PluginHost, script: Vec<MockResponse>) -> Vec<(String, String, bool)> {
    let mut script = script;
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
}

/// A manifest granting `capabilities.read` over `dir`.
fn reading(dir: &Path) -> String {
    format!("[capabilities]\nread = [{dir:?}]\n")
}

#[tokio::test]
async fn bash_spawn_hook_runs_bash_only_when_exec_is_granted() {
    let (_dir, host) = example("bash-spawn-hook", "");
    let got = results(&host, vec![call("bash", json!({"command": "echo hi"}))]).await;
    assert!(got[0].2, "{got:?}");
    assert!(got[0].1.contains("capabilities.exec"), "{got:?}");
    let (_dir, host) = example("bash-spawn-hook", "[capabilities]\nexec = true\n");
    let got = results(
        &host,
        vec![call("bash", json!({"command": "echo from-bash"}))],
    )
    .await;
    assert!(got[0].1.contains("from-bash"), "{got:?}");
}

#[tokio::test]
async fn built_in_tool_renderer_tools_work_within_the_grants() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("notes.txt");
    std::fs::write(&file, "alpha\nbeta\n").unwrap();
    let manifest = format!("[capabilities]\nwrite = [{:?}]\n", work.path());
    let (_dir, host) = example("built-in-tool-renderer", &manifest);
    let written = work.path().join("new.txt");
    let got = results(
        &host,
        vec![
            call("read", json!({"path": file})),
            call("write", json!({"path": written, "content": "one two"})),
            call(
                "edit",
                json!({"path": written, "edits": [{"oldText": "two", "newText": "three"}]}),
            ),
            call("read", json!({"path": "/etc/passwd"})),
        ],
    )
    .await;
    assert!(!got[0].2 && got[0].1.contains("alpha\nbeta"), "{got:?}");
    assert!(!got[1].2 && !got[2].2, "{got:?}");
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "one three");
    assert!(got[3].2 && got[3].1.contains("EACCES"), "{got:?}");
}

#[tokio::test]
async fn dynamic_tools_echo_session_echoes_with_its_prefix() {
    let (_dir, host) = example("dynamic-tools", "");
    let got = results(&host, vec![call("echo_session", json!({"message": "hi"}))]).await;
    assert_eq!(got, [("echo_session".into(), "[session] hi".into(), false)]);
}

#[tokio::test]
async fn inline_bash_rewrites_a_prompt_with_a_command_which_the_host_rejects() {
    let (_dir, host) = example("inline-bash", "[capabilities]\nexec = true\n");
    let (agent, _) = scripted(vec![text("plain answer")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "what does !{echo 42} print?").await;
    let reason = input_rejection(&events).expect("the rewritten prompt is rejected");
    assert!(reason.contains("transform"), "{reason}");
    let events = run(&mut agent, "no commands here").await;
    assert_eq!(input_rejection(&events), None);
    assert_eq!(
        final_assistant(&events).0,
        yoagent::StopReason::Stop,
        "the plain prompt runs"
    );
}

#[tokio::test]
async fn input_transform_streaming_fails_closed_without_exec() {
    let (_dir, host) = example("input-transform-streaming", "");
    let (agent, _) = scripted(vec![text("answer")]);
    let mut agent = agent.with_extension(host.extension());
    let (logs, _guard) = capture_logs();
    let events = run(&mut agent, "show my changes").await;
    let reason = input_rejection(&events).expect("the hook fails closed");
    assert!(
        reason.contains("input-transform-streaming") && reason.contains("on_input"),
        "{reason}"
    );
    let logged = format!("{:?}", logs.lines());
    assert!(logged.contains("capabilities.exec"), "{logged}");
    let events = run(&mut agent, "hello").await;
    assert_eq!(input_rejection(&events), None);
}

#[tokio::test]
async fn minimal_mode_reads_and_lists_within_the_grants() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "first line\n").unwrap();
    let (_dir, host) = example("minimal-mode", &reading(work.path()));
    let got = results(
        &host,
        vec![
            call("read", json!({"path": work.path().join("a.txt")})),
            call("ls", json!({"path": work.path()})),
            call("find", json!({"pattern": "*.txt", "path": work.path()})),
        ],
    )
    .await;
    assert!(!got[0].2 && got[0].1.contains("first line"), "{got:?}");
    assert!(!got[1].2 && got[1].1.contains("a.txt"), "{got:?}");
    assert!(got[2].2 && got[2].1.contains("list_files"), "{got:?}");
}

#[tokio::test]
async fn question_and_questionnaire_answer_that_there_is_no_ui() {
    // Both ask the user through pi's UI, which a host has not: the tools
    // answer pi's own error for print mode.
    for (name, tool, args) in [
        (
            "question",
            "question",
            json!({"question": "Which?", "options": [{"label": "a"}, {"label": "b"}]}),
        ),
        (
            "questionnaire",
            "questionnaire",
            json!({"questions": [{"id": "q", "prompt": "Which?", "options": [{"value": "a", "label": "A"}]}]}),
        ),
    ] {
        let (_dir, host) = example(name, "");
        let got = results(&host, vec![call(tool, args)]).await;
        assert!(got[0].1.contains("UI not available"), "{name}: {got:?}");
    }
}

#[tokio::test]
async fn reload_runtime_answers_that_a_reload_was_requested() {
    let (_dir, host) = example("reload-runtime", "");
    let got = results(&host, vec![call("reload_runtime", json!({}))]).await;
    assert_eq!(got[0].0, "reload_runtime");
    assert!(
        !got[0].2 && got[0].1.contains("Reload requested"),
        "{got:?}"
    );
}

#[tokio::test]
async fn shutdown_command_fails_naming_ctx_shutdown() {
    // The host has no app to end: `ctx.shutdown` throws, naming itself,
    // and the tool's call is an error result.
    let (_dir, host) = example("shutdown-command", "");
    let got = results(&host, vec![call("finish_and_exit", json!({}))]).await;
    assert!(got[0].2, "{got:?}");
    assert!(got[0].1.contains("shutdown"), "{got:?}");
}

#[tokio::test]
async fn subagent_marks_an_invalid_call_as_an_error_and_cannot_start_without_exec() {
    // A subagent is a second `pi` process: without `capabilities.exec` it
    // cannot start. A call with no mode is the tool's own error, which its
    // `tool_result` handler marks as one.
    let (_dir, host) = example("subagent", "");
    let got = results(&host, vec![call("subagent", json!({}))]).await;
    assert!(got[0].2, "{got:?}");
    assert!(got[0].1.contains("Provide exactly one mode"), "{got:?}");
    let got = results(
        &host,
        vec![call("subagent", json!({"agent": "scout", "task": "look"}))],
    )
    .await;
    assert!(got[0].2, "{got:?}");
}

#[tokio::test]
async fn tic_tac_toe_shows_its_board_and_a_move_saves_it_into_the_session() {
    let (_dir, host) = example("tic-tac-toe", "");
    let got = results(
        &host,
        vec![
            call("tic_tac_toe_see_board", json!({})),
            call("tic_tac_toe", json!({"action": "move_down"})),
        ],
    )
    .await;
    assert!(!got[0].2 && got[0].1.contains("Your cursor"), "{got:?}");
    // Every move saves the board into the session (`pi.appendEntry`),
    // which the host keeps as pi does: the move goes through.
    assert!(!got[1].2, "{got:?}");
}

#[tokio::test]
async fn tool_override_denies_secrets_and_reads_within_the_grants() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join(".env"), "KEY=1").unwrap();
    std::fs::write(work.path().join("readme.md"), "hello\nworld").unwrap();
    let (_dir, host) = example("tool-override", &reading(work.path()));
    let got = results(
        &host,
        vec![
            call("read", json!({"path": work.path().join(".env")})),
            call(
                "read",
                json!({"path": work.path().join("readme.md"), "limit": 1}),
            ),
        ],
    )
    .await;
    assert!(got[0].1.starts_with("Access denied"), "{got:?}");
    assert!(!got[0].1.contains("KEY=1"), "{got:?}");
    assert_eq!(got[1], ("read".into(), "hello".into(), false));
}

#[tokio::test]
async fn truncated_tool_runs_rg_through_exec_sync_on_node() {
    // `rg` runs through `execSync`, which only Node has: the extension runs
    // there, and `rg` runs (or, where it is not installed, the shell's
    // failure to find it is the tool's error, as in pi).
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let (_dir, host) = example("truncated-tool", "[capabilities]\nexec = true\n");
    assert_eq!(
        host.plugins()[0].engine,
        yohost::EngineKind::NODE,
        "routed to Node"
    );
    let got = results(&host, vec![call("rg", json!({"pattern": "x"}))]).await;
    assert!(!got[0].1.contains("would block"), "{got:?}");
    assert!(!got[0].2 || got[0].1.contains("rg"), "{got:?}");
}

#[tokio::test]
async fn with_deps_parses_a_duration_with_its_own_package() {
    let (_dir, host) = example("with-deps", "");
    let got = results(
        &host,
        vec![
            call("parse_duration", json!({"duration": "1h"})),
            call("parse_duration", json!({"duration": "soon"})),
        ],
    )
    .await;
    assert_eq!(
        got[0],
        (
            "parse_duration".into(),
            "1h = 3600000 milliseconds".into(),
            false
        )
    );
    assert!(got[1].2 && got[1].1.contains("Invalid duration"), "{got:?}");
}

#[tokio::test]
async fn before_agent_start_guards_add_no_note_while_their_mode_is_off() {
    // Each adds to the system prompt only in a state the host cannot reach:
    // pirate and preset after a command or flag (an app's), tic-tac-toe
    // while a game started in the TUI runs, claude-rules when the host's
    // working directory has `.claude/rules/` (this crate's has none). Their
    // `before_agent_start` runs at the first model request, adds nothing and
    // fails nothing.
    for (name, marker) in [
        ("pirate", "PIRATE MODE"),
        ("preset", "preset"),
        ("tic-tac-toe", "Tic-Tac-Toe"),
        ("claude-rules", "Project Rules"),
    ] {
        let (_dir, host) = example(name, "");
        let (logs, _guard) = capture_logs();
        let (agent, requests) = scripted(vec![text("ok")]);
        let mut agent = agent.with_extension(host.extension());
        let events = run(&mut agent, "hi").await;
        assert_eq!(
            final_assistant(&events).0,
            yoagent::StopReason::Stop,
            "{name}"
        );
        let first = last_user_text(&requests.lock().unwrap()[0]);
        assert!(!first.contains(marker), "{name}: {first}");
        let failed: Vec<_> = logs
            .lines()
            .into_iter()
            .filter(|l| l["fields"]["error_kind"].is_string())
            .collect();
        assert!(failed.is_empty(), "{name}: {failed:?}");
    }
}
