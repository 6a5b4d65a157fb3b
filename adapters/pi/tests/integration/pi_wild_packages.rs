//! A corpus of third-party pi packages from npm, installed as a user
//! installs them, each with a pinned verdict: refused by design, naming the
//! event or method; idle by design (loaded, every handler answering an
//! event the host never emits, which it reports); loaded, with a tool or
//! hook run through a real agent
//! that gives what the package's source says pi would give (effective); or
//! loaded with nothing for the loop (what it does belongs to pi's UI). At
//! least 80% of the packages not refused by design are effective. The test
//! prints one line per package (`name@version: verdict`). Where a package
//! does less than in pi for a reason that is not by design, its test pins
//! what it does now (rpiv-ask-user-question's log).
//!
//! The packages are installed once under the target dir (as `.ci/run`
//! does: pinned versions, `devDependencies` dropped, peers as npm resolves
//! them, `npm install --omit=dev --ignore-scripts`), or found at
//! `$YOHOST_PI_WILD_PACKAGES`. Every test is skipped, saying why, when
//! `node` is missing. Nothing reaches the internet: a fetch is of a
//! loopback address, and pandoc is a local stand-in.

use crate::support;

use crate::package;

use package::{link_copy, npm_install, open_with_node, PiPeers};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use support::*;
use yohost::Status;

/// What a package does under the host.
enum Verdict {
    /// Loaded on `engine`; `exercised` is what its test runs through an
    /// agent.
    Effective {
        engine: &'static str,
        exercised: &'static str,
    },
    /// Loaded on `engine`, with nothing for the loop: `why`.
    Loaded {
        engine: &'static str,
        why: &'static str,
    },
    /// Refused by design: the reason names this event or method.
    ByDesign(&'static str),
    /// Loaded on `engine`, and idle by design: everything it does answers
    /// events the host never emits (`why`), which it reports. Counted with
    /// the packages refused by design, as it was refused before the host
    /// reported such handlers.
    Idle {
        engine: &'static str,
        why: &'static str,
    },
}

/// The corpus: each package, pinned, and its verdict.
const CORPUS: [(&str, Verdict); 15] = [
    (
        "checkpoint-pi@1.0.5",
        Verdict::Idle {
            engine: "js",
            why: "its checkpoints follow the session's forks and tree moves, which the host never makes",
        },
    ),
    ("@agentuity/pi@2.0.21", Verdict::ByDesign("calls `pi.registerProvider`")),
    (
        "@tintinweb/pi-subagents@0.14.1",
        Verdict::ByDesign("createCodingTools is not supported by yohost: it is part of pi's app"),
    ),
    // Refused until granted (the sandbox, by design): on Node, which it
    // needs, it makes its sessions folder under `~/.pi` at start-up, and the
    // denial names the grant; its `context` handler would be left out.
    (
        "context-mode@1.0.169",
        Verdict::ByDesign(".pi/context-mode/sessions"),
    ),
    (
        "pi-bash-confirm@3.3.2",
        Verdict::Effective {
            engine: "node",
            exercised: "`tool_call` blocks a bash command that needs confirmation (no UI)",
        },
    ),
    (
        "@aliou/pi-processes@0.12.0",
        Verdict::Effective {
            engine: "node",
            exercised: "`process` starts a command in the background and lists it",
        },
    ),
    (
        "@baochunli/pi-collaborating-agents@0.4.6",
        Verdict::Effective {
            engine: "node",
            exercised: "`agent_message` reports the agent it registered in its folder",
        },
    ),
    (
        "pi-markdown-preview@0.16.0",
        Verdict::Effective {
            engine: "node",
            exercised: "`preview_export` renders Markdown to an HTML file through pandoc",
        },
    ),
    (
        "@juicesharp/rpiv-todo@2.11.0",
        Verdict::Effective {
            engine: "node",
            exercised: "`todo` creates, updates and lists tasks",
        },
    ),
    (
        "@juicesharp/rpiv-ask-user-question@2.11.0",
        Verdict::Effective {
            engine: "node",
            exercised: "`ask_user_question` answers its no-UI error",
        },
    ),
    (
        "@juicesharp/rpiv-web-tools@2.11.0",
        Verdict::Effective {
            engine: "node",
            exercised: "`web_fetch` refuses a loopback address",
        },
    ),
    (
        "@juicesharp/rpiv-args@2.11.0",
        Verdict::Effective {
            engine: "js",
            exercised: "`before_agent_start` adds its skill protocol; `input` lets an unknown skill run",
        },
    ),
    (
        "@juicesharp/rpiv-workflow@2.11.0",
        // Its files imported with `import()` use `openSync` and `readSync`,
        // which only Node's `node:fs` has.
        Verdict::Effective {
            engine: "node",
            exercised: "`before_agent_start` adds its documentation note",
        },
    ),
    (
        "pi-mermaid@0.3.0",
        Verdict::Loaded {
            engine: "node",
            why: "it renders a prompt's diagrams for pi's TUI; here the message it shows is a log line",
        },
    ),
    (
        "pi-chrome@0.15.38",
        Verdict::Loaded {
            engine: "node",
            why: "its tools are registered only by its `/chrome` command",
        },
    ),
];

/// Skip the test (printing why) when Node is missing.
macro_rules! needs_node {
    () => {
        if let Some(why) = node_missing() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// The package's name, without its version.
fn name_of(spec: &str) -> &str {
    &spec[..spec.rfind('@').unwrap()]
}

/// The plugin a package is installed as: its name without `@` and `/`
/// (`@aliou/pi-processes` is `aliou-pi-processes`).
fn plugin_name(name: &str) -> String {
    name.trim_start_matches('@').replace('/', "-")
}

/// The folder holding the installed packages (`<name>`, scoped names in
/// their scope's folder): `$YOHOST_PI_WILD_PACKAGES`, else
/// `<target>/tmp/pi-wild-packages`, installed with npm if missing.
fn packages() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("YOHOST_PI_WILD_PACKAGES") {
            return PathBuf::from(dir);
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-wild-packages");
        for (spec, _) in &CORPUS {
            npm_install(
                &dir.join(name_of(spec)),
                spec,
                PiPeers::Resolved,
                "run .ci/run, or set YOHOST_PI_WILD_PACKAGES to a folder of installed copies",
            );
        }
        dir
    })
}

/// The folder the tests' environment points at, set once for this test
/// binary: `COLLABORATING_AGENTS_DIR` (pi-collaborating-agents registers
/// its agents there) and `PANDOC_PATH` (pi-markdown-preview's pandoc, the
/// stand-in in `fixtures/`).
fn environment() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-wild-agents");
        std::fs::create_dir_all(&dir).unwrap();
        std::env::set_var("COLLABORATING_AGENTS_DIR", &dir);
        std::env::set_var("PANDOC_PATH", fixtures().join("pandoc-stand-in.sh"));
        dir
    })
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The folder pi-markdown-preview may write its exports to.
fn exports() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-wild-exports");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A plugin directory outside the system's temporary folder, which
/// pi-processes is granted to write (a write grant that holds the plugin
/// directory is refused): in the target dir, or else the home folder, or
/// else the working directory, whichever is outside it (a checkout may lie
/// under `/tmp`).
fn outside_the_temporary_folder() -> tempfile::TempDir {
    let temp = std::env::temp_dir()
        .canonicalize()
        .unwrap_or_else(|_| std::env::temp_dir());
    let outside = [
        Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(std::path::PathBuf::from),
        std::env::current_dir().ok(),
    ]
    .into_iter()
    .flatten()
    .filter_map(|dir| dir.canonicalize().ok())
    .find(|dir| !dir.starts_with(&temp))
    .expect("a writable folder outside the temporary folder");
    tempfile::tempdir_in(outside).unwrap()
}

/// The `plugin.toml` a user writes for the package, if it needs one: the
/// grants it needs to do its work.
fn manifest(name: &str) -> Option<String> {
    let temp = std::env::temp_dir();
    match name {
        // It checks that bash exists, and keeps its processes' logs in the
        // temporary folder.
        "@aliou/pi-processes" => Some(format!(
            "[capabilities]\nexec = true\nread = [\"/usr/bin\"]\nwrite = [{temp:?}]\n"
        )),
        "@baochunli/pi-collaborating-agents" => Some(format!(
            "[capabilities]\nenv = [\"COLLABORATING_AGENTS_DIR\"]\nwrite = [{:?}]\n",
            environment()
        )),
        "pi-markdown-preview" => Some(format!(
            "[capabilities]\nexec = true\nenv = [\"PANDOC_PATH\"]\nread = [{:?}]\nwrite = [{:?}]\n",
            fixtures(),
            exports()
        )),
        // It renders each diagram with a bundled layout engine on its first
        // prompt, which on a busy 2-core machine outlasts `on_input`'s
        // default 10 s.
        "pi-mermaid" => Some("[timeouts]\non_input = 60000\n".into()),
        // Its bridge to the browser listens on a local port at start-up.
        "pi-chrome" => Some("[capabilities]\nnetwork = true\n".into()),
        _ => None,
    }
}

/// Install the package `name` into the plugin directory `dir`, with its
/// manifest: a symlink to the installed copy, or, with a manifest, a copy
/// made of hard links (copies across file systems) beside which the
/// manifest is written, so the install is left as it was. Returns the
/// plugin's name.
fn install(dir: &Path, name: &str) -> String {
    let plugin = plugin_name(name);
    let to = dir.join(&plugin);
    match manifest(name) {
        None => std::os::unix::fs::symlink(packages().join(name), &to).unwrap(),
        Some(manifest) => {
            link_copy(&packages().join(name), &to).unwrap();
            std::fs::write(to.join("plugin.toml"), manifest).unwrap();
        }
    }
    plugin
}

/// A host (both pi entries) over a plugin directory holding the package
/// `name`, loaded, and the directory.
async fn host_with(name: &str) -> (yohost::PluginHost, tempfile::TempDir) {
    environment();
    let dir = outside_the_temporary_folder();
    let plugin = install(dir.path(), name);
    let host = open_with_node(dir.path());
    let report = host.report().await;
    assert_eq!(
        reported(&report, &plugin).status,
        Status::Loaded,
        "{report:?}"
    );
    (host, dir)
}

/// The tool results of one run of an agent with `host`'s plugins whose
/// model makes `calls` in turn and then ends, which it must end as the
/// model answers.
async fn results_of(
    host: &yohost::PluginHost,
    calls: Vec<(&str, serde_json::Value)>,
) -> Vec<(String, String, bool)> {
    let mut script: Vec<_> = calls.into_iter().map(|(n, a)| call(n, a)).collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));
    tool_results(&events)
}

/// Every package of the corpus in one plugin directory, as a user would
/// have them: each has its pinned verdict, and at least 80% of those not
/// refused by design are effective.
#[tokio::test]
async fn every_package_has_its_pinned_verdict() {
    needs_node!();
    environment();
    let dir = outside_the_temporary_folder();
    for (spec, _) in &CORPUS {
        install(dir.path(), name_of(spec));
    }
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let (mut effective, mut not_by_design) = (0, 0);
    for (spec, verdict) in &CORPUS {
        let entry = reported(&report, &plugin_name(name_of(spec)));
        let line = match verdict {
            Verdict::ByDesign(what) => {
                assert_eq!(entry.status, Status::Refused, "{spec}: {entry:?}");
                let reason = entry.reason.clone().unwrap_or_default();
                assert!(reason.contains(what), "{spec}: {reason}");
                format!("refused by design: {what}")
            }
            Verdict::Effective { engine, exercised } => {
                assert_eq!(entry.status, Status::Loaded, "{spec}: {entry:?}");
                assert_eq!(entry.engine.as_deref(), Some(*engine), "{spec}: {entry:?}");
                effective += 1;
                not_by_design += 1;
                format!("effective on {engine}: {exercised}")
            }
            Verdict::Idle { engine, why } => {
                assert_eq!(entry.status, Status::Loaded, "{spec}: {entry:?}");
                assert_eq!(entry.engine.as_deref(), Some(*engine), "{spec}: {entry:?}");
                assert!(
                    entry
                        .warnings
                        .iter()
                        .any(|w| w.contains("which the host never emits")),
                    "{spec}: {entry:?}"
                );
                format!("loaded on {engine}, idle by design: {why}")
            }
            Verdict::Loaded { engine, why } => {
                assert_eq!(entry.status, Status::Loaded, "{spec}: {entry:?}");
                assert_eq!(entry.engine.as_deref(), Some(*engine), "{spec}: {entry:?}");
                assert!(entry.tools.is_empty(), "{spec}: {entry:?}");
                not_by_design += 1;
                format!("loaded on {engine}, nothing for the loop: {why}")
            }
        };
        eprintln!("{spec}: {line}");
    }
    eprintln!("effective: {effective} of the {not_by_design} packages not refused by design");
    assert!(
        effective * 5 >= not_by_design * 4,
        "{effective} of {not_by_design}"
    );

    // pi-chrome offers no tool and adds nothing to the request until its
    // command (offered to an app's user) registers its tools; the others'
    // notes are there.
    let chrome = reported(&report, "pi-chrome");
    assert_eq!(
        chrome.hooks,
        ["before_model", "finish", "command"],
        "{chrome:?}"
    );
    assert!(
        chrome.app.commands.iter().any(|c| c.name == "chrome"),
        "{chrome:?}"
    );
    let (agent, requests) = scripted(vec![text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));
    let seen = format!("{:?}", requests.lock().unwrap()[0]);
    assert!(!seen.contains("chrome-profile-bridge"), "{seen}");
    assert!(seen.contains("Skill invocation protocol"), "{seen}");
}

/// pi-bash-confirm asks before any bash command that is not on its safe
/// list; with no UI to ask, it blocks the command, with its reason, and
/// the command does not run. Other tools pass.
#[tokio::test]
async fn pi_bash_confirm_blocks_bash_without_a_ui() {
    needs_node!();
    let (host, _dir) = host_with("pi-bash-confirm").await;
    let results = results_of(
        &host,
        vec![
            ("bash", json!({"command": "ls"})),
            ("echo", json!({"text": "passes"})),
        ],
    )
    .await;
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].2, "{results:?}");
    assert!(
        results[0]
            .1
            .contains("Confirmation required (no UI available)"),
        "{results:?}"
    );
    assert_eq!(results[1], ("echo".into(), "passes".into(), false));
}

/// pi-processes starts a command as a background process (a shell it
/// finds, logs in the temporary folder) and lists it.
#[tokio::test]
async fn pi_processes_starts_and_lists_a_background_process() {
    needs_node!();
    let (host, _dir) = host_with("@aliou/pi-processes").await;
    let results = results_of(
        &host,
        vec![
            (
                "process",
                json!({"action": "start", "name": "hello", "command": "echo hello"}),
            ),
            ("process", json!({"action": "list"})),
        ],
    )
    .await;
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(!results[0].2, "{results:?}");
    assert!(
        results[0].1.starts_with("Started process hello ("),
        "{results:?}"
    );
    // One line per process: id, status, name, command, log files, …
    let (_, list, is_error) = &results[1];
    assert!(!is_error, "{results:?}");
    let fields: Vec<&str> = list.split('\t').collect();
    assert!(["running", "exited"].contains(&fields[1]), "{list}");
    assert_eq!(fields[2..4], ["hello", "echo hello"], "{list}");
}

/// pi-collaborating-agents registers the agent in its folder at start-up
/// (writing each file and renaming it into place) and `agent_message`
/// reports it, with no peers.
#[tokio::test]
async fn pi_collaborating_agents_registers_and_reports_its_agent() {
    needs_node!();
    let (host, _dir) = host_with("@baochunli/pi-collaborating-agents").await;
    let results = results_of(&host, vec![("agent_message", json!({"action": "status"}))]).await;
    assert_eq!(results.len(), 1, "{results:?}");
    let (_, answer, is_error) = &results[0];
    assert!(!is_error, "{results:?}");
    let agent = answer
        .strip_prefix("Agent: ")
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(answer.contains("Reservations: 0"), "{answer}");
    assert!(
        environment()
            .join("registry")
            .join(format!("{agent}.json"))
            .is_file(),
        "{agent}"
    );
}

/// pi-markdown-preview renders Markdown through pandoc (here the
/// stand-in) into the HTML file it is asked for, and says where it is.
#[tokio::test]
async fn pi_markdown_preview_exports_html_through_pandoc() {
    needs_node!();
    let (host, _dir) = host_with("pi-markdown-preview").await;
    let out = exports().join(format!("preview-{}.html", std::process::id()));
    let results = results_of(
        &host,
        vec![(
            "preview_export",
            json!({"format": "html", "markdown": "# Corpus\n\nRendered.", "outputPath": out}),
        )],
    )
    .await;
    assert_eq!(results.len(), 1, "{results:?}");
    let (_, answer, is_error) = &results[0];
    assert!(!is_error, "{answer}");
    assert!(answer.starts_with("Exported HTML preview"), "{answer}");
    assert!(answer.contains(&out.display().to_string()), "{answer}");
    let html = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    assert!(html.contains("<article># Corpus"), "{html}");
}

/// rpiv-todo keeps a task list across calls: create, update, list.
#[tokio::test]
async fn rpiv_todo_creates_updates_and_lists_tasks() {
    needs_node!();
    let (host, _dir) = host_with("@juicesharp/rpiv-todo").await;
    let results = results_of(
        &host,
        vec![
            ("todo", json!({"action": "create", "subject": "Write tests"})),
            (
                "todo",
                json!({"action": "update", "id": 1, "status": "in_progress", "activeForm": "writing tests"}),
            ),
            ("todo", json!({"action": "list"})),
        ],
    )
    .await;
    let answers: Vec<_> = results.iter().map(|(_, text, _)| text.as_str()).collect();
    assert_eq!(
        answers,
        [
            "Created #1: Write tests (pending)",
            "Updated #1 (pending → in_progress)",
            "[in_progress] #1 Write tests (writing tests)",
        ]
    );
    assert!(
        results.iter().all(|(_, _, is_error)| !is_error),
        "{results:?}"
    );
}

/// rpiv-ask-user-question, with no UI to ask in, answers its
/// non-interactive error; and, as in pi, it takes its tool out of the
/// active set at `before_agent_start` (`pi.setActiveTools` over its own
/// tools), so the next run does not offer it.
#[tokio::test(flavor = "current_thread")]
async fn rpiv_ask_user_question_answers_that_there_is_no_ui() {
    needs_node!();
    let (host, _dir) = host_with("@juicesharp/rpiv-ask-user-question").await;
    let offered = |report: &[yohost::PluginReport]| {
        let plugin = report
            .iter()
            .find(|p| p.name.contains("rpiv-ask-user-question"));
        plugin.map(|p| p.tools.clone()).unwrap_or_default()
    };
    assert_eq!(offered(&host.report().await), ["ask_user_question"]);
    let question = json!({"questions": [{
        "question": "Which one?",
        "header": "Pick",
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}],
    }]});
    let results = results_of(&host, vec![("ask_user_question", question)]).await;
    assert_eq!(
        results,
        [(
            "ask_user_question".into(),
            "Error: UI not available (running in non-interactive mode)".into(),
            false
        )]
    );
    assert!(
        offered(&host.report().await).is_empty(),
        "taken out of the active set with no UI"
    );
}

/// rpiv-web-tools refuses to fetch a loopback address, before any request.
#[tokio::test]
async fn rpiv_web_tools_refuses_a_loopback_fetch() {
    needs_node!();
    let (host, _dir) = host_with("@juicesharp/rpiv-web-tools").await;
    let results = results_of(
        &host,
        vec![("web_fetch", json!({"url": "http://127.0.0.1:9/"}))],
    )
    .await;
    assert_eq!(
        results,
        [(
            "web_fetch".into(),
            "Refusing to fetch private/loopback address: 127.0.0.1".into(),
            true
        )]
    );
}

/// The first request of a run with `name` loaded, for `prompt`, which must
/// run.
async fn first_request(name: &str, prompt: &str) -> String {
    let (host, _dir) = host_with(name).await;
    let (agent, requests) = scripted(vec![text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, prompt).await;
    assert_eq!(input_rejection(&events), None);
    assert_eq!(final_assistant(&events), (yoagent::StopReason::Stop, None));
    let requests = requests.lock().unwrap();
    format!("{:?}", requests[0])
}

/// rpiv-args adds its skill invocation protocol to the system prompt (a
/// note on the request), and lets a `/skill:` prompt it does not know run
/// as it is.
#[tokio::test]
async fn rpiv_args_adds_its_protocol_and_lets_unknown_skills_run() {
    needs_node!();
    let seen = first_request("@juicesharp/rpiv-args", "/skill:unknown some args").await;
    assert!(
        seen.contains("## Skill invocation protocol (CRITICAL)"),
        "{seen}"
    );
    assert!(seen.contains("/skill:unknown some args"), "{seen}");
}

/// rpiv-workflow adds where its documentation is to the system prompt.
#[tokio::test]
async fn rpiv_workflow_adds_its_documentation_note() {
    needs_node!();
    let seen = first_request("@juicesharp/rpiv-workflow", "go").await;
    assert!(
        seen.contains("rpiv-workflow documentation (read only when the user asks"),
        "{seen}"
    );
    assert!(seen.contains("workflow-basics.md"), "{seen}");
}

/// pi-mermaid loads on Node (its layout engine is a bundle over the
/// embedded engine's source limit) and renders the diagrams of a prompt
/// for pi's TUI: the prompt runs as it is, and the message it shows (the
/// diagrams' sources, when there are several) is a plugin log line.
#[tokio::test(flavor = "current_thread")]
async fn pi_mermaid_renders_a_prompts_diagrams_to_the_log() {
    needs_node!();
    let (logs, _guard) = capture_logs();
    let prompt =
        "Two:\n```mermaid\ngraph TD\n  A --> B\n```\n```mermaid\ngraph LR\n  C --> D\n```\n";
    let seen = first_request("pi-mermaid", prompt).await;
    assert!(seen.contains("A --> B"), "{seen}");
    let shown: Vec<String> = logs
        .plugin_lines()
        .iter()
        .filter_map(|l| l["fields"]["message"].as_str().map(String::from))
        .filter(|m| m.starts_with("[pi-mermaid]"))
        .collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown[0].contains("%% mermaid-hash: "), "{shown:?}");
    assert!(shown[1].contains("C --> D"), "{shown:?}");
}
