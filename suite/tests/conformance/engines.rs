//! The table: one row per engine or adapter, saying how to install its
//! fixture and where it departs from the protocol.
//!
//! | Row | Fixture | `throw` is | Not applicable, or meant differently |
//! | --- | --- | --- | --- |
//! | dylib | fixture.rs as a cdylib | `crashed` (a panic) | `memory`, `file`: trusted code, not sandboxed. `spin` stops by itself after 2 s (native code cannot be interrupted) |
//! | wasm | fixture.rs as a component | `crashed` (a trap) | no `terminate` (the WIT's tool output has no such field): `fx_end` does not end the run |
//! | ts | fixture.ts | `guest` (a throw) | — |
//! | node | fixture.ts with `engine = "node"` | `guest` (a throw) | — (`memory` is V8 aborting at `--max-old-space-size`; `file` is the permission model's refusal) |
//! | python | fixture.py | `guest` (an exception) | `memory`, `file`: trusted code, not sandboxed |
//! | pi | fixture_pi.ts | `guest` (a throw) | no run id in pi's `ctx` (`whoami` is not rewritten); an `input` handler cannot give a reason (the adapter's own text); no `on_stop` (a lazy answer is accepted); no `finish` (its last line is its last event) |
//! | pi_node | fixture_pi.ts with `engine = "node"` | `guest` (a throw) | as pi |
//! | dsh | fixture_dsh.js, a DSH tool plugin | `guest` (a throw) | DSH decides allow, deny or ask and cannot rewrite; no input, stop, event or finish hooks; tools render text only (no images) and cannot end the run; no file API; `shape` is a decision the adapter rejects, so `guest` |
//! | dsh_node | fixture_dsh.js with `engine = "node"` | `guest` (a throw) | as dsh |
//! | rutis | fixture_rutis.rs as a rutis-agent hot-plug library | — | tools only: the hostile inputs go to its tool `fx_echo`, which fails closed as the call; a panic cannot cross the C ABI and an error is the tool's own result (no `throw`, `error`); a reply cannot end the run; no log API (no `flood`); trusted code, not sandboxed; its text is its reply's `notes`, as rutis shows it |
//!
//! Rows that run in a process or can start one (node, pi, pi_node,
//! dsh_node: `fixture_dsh_proc.js`, whose commands go through DSH's
//! `ctx.shell`) also
//! have a process fixture ([`Engine::processes`]); the sandbox cases
//! (`processes.rs`) run on those rows only. The others start no process of
//! their own: Wasm has no process API, yohost's embedded TypeScript API
//! none either, and dylib, Python and rutis-agent libraries are trusted
//! code with the host's own rights.
//!
//! A new row is one function here plus one line in `main.rs`'s
//! `conformance!` list, and a fixture. A row that needs something the
//! machine may lack says so in [`unavailable`]: its cases are then skipped
//! with the reason printed.

use crate::support::{example_dylib, write};
use crate::wasm_guests::guest;
use std::path::{Path, PathBuf};
use yohost::contract::Hook;

/// Whether a row takes a case as the protocol says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// It does.
    Yes,
    /// It cannot, for this reason; the case checks what the row documents
    /// instead, or nothing when there is nothing safe to run.
    No(&'static str),
}

/// One engine or adapter.
pub struct Engine {
    /// The row's name: its test module, and its fixture is named `fx-<name>`.
    pub name: &'static str,
    /// Put the fixture in `dir/<plugin>/`, with these extra `plugin.toml`
    /// lines.
    pub install: fn(dir: &Path, plugin: &str, manifest: &str),
    /// The entry file name a broken fixture of this kind gets.
    pub broken_entry: &'static str,
    /// Extra `plugin.toml` lines a broken fixture needs to be taken for
    /// this kind.
    pub broken_manifest: &'static str,
    /// The hooks the fixture has. A case about another hook checks that
    /// the row does not claim it. Without `before_tool`, the hostile inputs
    /// go to the fixture's tool `fx_echo` instead.
    pub hooks: &'static [Hook],
    /// Whether the fixture's `before_tool` can rewrite a call.
    pub rewrites: Support,
    /// Whether the fixture can raise an error of its own (`throw`, `error`).
    pub raises: Support,
    /// The `error_kind` of the fixture's `throw`.
    pub throw_kind: &'static str,
    /// The `error_kind` of the fixture's `error` (a returned error).
    pub error_kind: &'static str,
    /// The `error_kind` of the fixture's `shape`.
    pub shape_kind: &'static str,
    /// `memory`: only sandboxed engines can be sent it.
    pub sandboxed: Support,
    /// `file`: only rows with a file API inside a sandbox can be sent it.
    pub files: Support,
    /// The `error_kind` of a forbidden file read, for rows that take `file`.
    pub file_kind: &'static str,
    /// Whether the fixture can write log lines (`flood`).
    pub logs: Support,
    /// Whether its tools can return images.
    pub images: Support,
    /// Whether a tool result can end the run (`terminate`). A row that
    /// cannot still has `fx_end`, which asks it as far as its API lets it
    /// say anything: the run must go on.
    pub terminates: Support,
    /// The text of `fx_echo`'s result for `text`.
    pub echoed: fn(&str) -> String,
    /// Whether `whoami` is rewritten with the run id the fixture saw.
    pub sees_run_id: Support,
    /// The reason the model is given for `forbidden-input`.
    pub input_reason: &'static str,
    /// Whether the fixture's `on_stop` continues a lazy answer.
    pub on_stop: Support,
    /// Whether the fixture logs `finish <end>` after its last event.
    pub finish: Support,
    /// What the fixture logs for a yoagent event type (`event <this>`), or
    /// `None` when it does not see that event.
    pub event_name: fn(&str) -> Option<String>,
    /// For a row whose plugins run in a process or can start one: put its
    /// process fixture in `dir/<plugin>/`, with these extra `plugin.toml`
    /// lines. Its tools are `fx_sh {script}` (run `sh -c script` as the
    /// plugin starts processes; `code=<n>` and the output), `fx_read
    /// {path}` (read a file from the plugin's own code: `read:<text>` or
    /// `denied:<code>`) and `fx_signal {pid}` (send `SIGCONT` from the
    /// plugin's own code: `signalled` or `denied:<code>`).
    pub processes: Option<fn(dir: &Path, plugin: &str, manifest: &str)>,
}

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fixture source of `tests/plugins/conformance/`.
fn source(file: &str) -> String {
    std::fs::read_to_string(root().join("tests/plugins/conformance").join(file)).unwrap()
}

/// A manifest that names the plugin and its entry.
fn manifest(plugin: &str, entry: &Path, extra: &str) -> String {
    format!(
        "name = \"{plugin}\"\nentry = {:?}\n{extra}",
        entry.display().to_string()
    )
}

/// Every yoagent event, under its own name.
fn every_event(kind: &str) -> Option<String> {
    Some(kind.to_string())
}

/// No event: the row has no `on_event`.
fn no_event(_kind: &str) -> Option<String> {
    None
}

/// `fx_echo`'s text is the text itself.
fn same_text(text: &str) -> String {
    text.to_string()
}

/// The fixture's own reason for rejecting `forbidden-input`.
const FIXTURE_REJECT: &str = "fx rejects forbidden-input";

/// What the dylib and Python rows are not sent.
const TRUSTED: Support =
    Support::No("trusted code, not sandboxed: no memory limit, no file grants");

/// The built cdylib `example` of fixture `source`, refusing a build older
/// than its source: `cargo test --test conformance` alone does not rebuild
/// examples.
fn built_fixture(example: &str, source: &str) -> PathBuf {
    let lib = example_dylib(example);
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).unwrap();
    let source = root().join("tests/plugins/conformance").join(source);
    assert!(
        modified(&lib) >= modified(&source),
        "{} is older than its source: run `cargo build -p yohost --examples`",
        lib.display()
    );
    lib
}

pub fn dylib() -> Engine {
    Engine {
        name: "dylib",
        install: |dir, plugin, extra| {
            let lib = built_fixture("conformance_fixture", "fixture.rs");
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &manifest(plugin, &lib, extra),
            );
        },
        broken_entry: "fixture.so",
        broken_manifest: "",
        throw_kind: "crashed",
        sandboxed: TRUSTED,
        files: TRUSTED,
        file_kind: "",
        ..ts()
    }
}

pub fn wasm() -> Engine {
    Engine {
        name: "wasm",
        install: |dir, plugin, extra| {
            let component = guest("conformance_fixture");
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &manifest(plugin, &component, extra),
            );
        },
        broken_entry: "fixture.wasm",
        broken_manifest: "",
        throw_kind: "crashed",
        terminates: Support::No("a component's tool output (WIT `tool-output`) has no `terminate`"),
        ..ts()
    }
}

pub fn ts() -> Engine {
    Engine {
        name: "ts",
        install: |dir, plugin, extra| {
            write(dir, &format!("{plugin}/index.ts"), &source("fixture.ts"));
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &format!("name = \"{plugin}\"\n{extra}"),
            );
        },
        broken_entry: "index.ts",
        broken_manifest: "",
        hooks: &Hook::ALL,
        rewrites: Support::Yes,
        raises: Support::Yes,
        throw_kind: "guest",
        error_kind: "guest",
        shape_kind: "bad_reply",
        sandboxed: Support::Yes,
        files: Support::Yes,
        file_kind: "guest",
        logs: Support::Yes,
        images: Support::Yes,
        terminates: Support::Yes,
        echoed: same_text,
        sees_run_id: Support::Yes,
        input_reason: FIXTURE_REJECT,
        on_stop: Support::Yes,
        finish: Support::Yes,
        event_name: every_event,
        processes: None,
    }
}

/// Why row `name` cannot run on this machine, if it cannot.
pub fn unavailable(name: &str) -> Option<String> {
    matches!(name, "node" | "pi_node" | "dsh_node")
        .then(crate::support::node_missing)
        .flatten()
}

pub fn node() -> Engine {
    Engine {
        name: "node",
        install: |dir, plugin, extra| {
            write(dir, &format!("{plugin}/index.ts"), &source("fixture.ts"));
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &format!("name = \"{plugin}\"\nengine = \"node\"\n{extra}"),
            );
        },
        broken_entry: "index.ts",
        broken_manifest: "engine = \"node\"",
        processes: Some(|dir, plugin, extra| {
            write(
                dir,
                &format!("{plugin}/index.ts"),
                &source("fixture_proc.ts"),
            );
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &format!("name = \"{plugin}\"\nengine = \"node\"\n{extra}"),
            );
        }),
        ..ts()
    }
}

pub fn python() -> Engine {
    Engine {
        name: "python",
        install: |dir, plugin, extra| {
            write(dir, &format!("{plugin}/fixture.py"), &source("fixture.py"));
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &format!("name = \"{plugin}\"\nentry = \"fixture.py\"\n{extra}"),
            );
        },
        broken_entry: "fixture.py",
        broken_manifest: "",
        sandboxed: TRUSTED,
        files: TRUSTED,
        file_kind: "",
        ..ts()
    }
}

/// The pi fixture on the Node engine: the same flavor in a `node` process.
pub fn pi_node() -> Engine {
    Engine {
        name: "pi_node",
        install: |dir, plugin, extra| {
            write(dir, &format!("{plugin}/index.ts"), &source("fixture_pi.ts"));
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &format!("name = \"{plugin}\"\nengine = \"node\"\n{extra}"),
            );
        },
        broken_manifest: "ecosystem = \"pi\"\nengine = \"node\"",
        processes: Some(|dir, plugin, extra| {
            pi_processes(dir, plugin, &format!("engine = \"node\"\n{extra}"))
        }),
        ..pi()
    }
}

/// The pi process fixture in `dir/<plugin>/`, with these extra
/// `plugin.toml` lines.
fn pi_processes(dir: &Path, plugin: &str, extra: &str) {
    write(
        dir,
        &format!("{plugin}/index.ts"),
        &source("fixture_pi_proc.ts"),
    );
    write(
        dir,
        &format!("{plugin}/plugin.toml"),
        &format!("name = \"{plugin}\"\necosystem = \"pi\"\n{extra}"),
    );
}

/// The pi events the adapter shows for yoagent's event types.
fn pi_event(kind: &str) -> Option<String> {
    let name = match kind {
        "agentStart" => "agent_start",
        "agentEnd" => "agent_end",
        "turnStart" => "turn_start",
        "turnEnd" => "turn_end",
        "messageStart" => "message_start",
        "messageUpdate" => "message_update",
        "toolExecutionStart" => "tool_execution_start",
        "toolExecutionUpdate" => "tool_execution_update",
        "toolExecutionEnd" => "tool_execution_end",
        _ => return None,
    };
    Some(name.to_string())
}

pub fn pi() -> Engine {
    Engine {
        name: "pi",
        install: |dir, plugin, extra| {
            write(dir, &format!("{plugin}/index.ts"), &source("fixture_pi.ts"));
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &format!("name = \"{plugin}\"\n{extra}"),
            );
        },
        broken_entry: "index.ts",
        broken_manifest: "ecosystem = \"pi\"",
        hooks: &Hook::ALL,
        rewrites: Support::Yes,
        raises: Support::Yes,
        throw_kind: "guest",
        error_kind: "guest",
        shape_kind: "bad_reply",
        sandboxed: Support::Yes,
        files: Support::Yes,
        file_kind: "guest",
        logs: Support::Yes,
        images: Support::Yes,
        terminates: Support::Yes,
        echoed: same_text,
        sees_run_id: Support::No("pi's ctx carries no run id"),
        input_reason: "a pi extension handled this input itself (`handled`), so no run starts",
        on_stop: Support::No("pi has no on_stop: the answer is accepted"),
        finish: Support::No(
            "pi has no finish: its `agent_end` handler runs then, which the pi adapter's tests cover",
        ),
        event_name: pi_event,
        processes: Some(pi_processes),
    }
}

/// The DSH fixture `file` in `dir/<plugin>/`, with these extra
/// `plugin.toml` lines.
fn dsh_fixture(dir: &Path, plugin: &str, file: &str, extra: &str) {
    write(dir, &format!("{plugin}/index.js"), &source(file));
    write(
        dir,
        &format!("{plugin}/plugin.toml"),
        &format!("name = \"{plugin}\"\n{extra}"),
    );
}

pub fn dsh() -> Engine {
    Engine {
        name: "dsh",
        install: |dir, plugin, extra| dsh_fixture(dir, plugin, "fixture_dsh.js", extra),
        broken_entry: "index.js",
        broken_manifest: "ecosystem = \"dsh\"",
        hooks: &[
            Hook::Tools,
            Hook::CallTool,
            Hook::BeforeTool,
            Hook::AfterTool,
            Hook::BeforeModel,
        ],
        rewrites: Support::No("DSH's pre-execute decides allow, deny or ask"),
        raises: Support::Yes,
        throw_kind: "guest",
        error_kind: "guest",
        shape_kind: "guest",
        sandboxed: Support::Yes,
        files: Support::No("the DSH adapter offers no file API"),
        file_kind: "",
        logs: Support::Yes,
        images: Support::No("the adapter renders DSH's non-text parts as a text"),
        terminates: Support::No(
            "a DSH tool's output is a value and its rendering: nothing ends the run",
        ),
        echoed: same_text,
        sees_run_id: Support::No("DSH's pre-execute cannot rewrite"),
        input_reason: "",
        on_stop: Support::No("DSH has no stop verifier"),
        finish: Support::No("DSH has no finish"),
        event_name: no_event,
        processes: None,
    }
}

pub fn dsh_node() -> Engine {
    Engine {
        name: "dsh_node",
        install: |dir, plugin, extra| {
            let extra = format!("engine = \"node\"\n{extra}");
            dsh_fixture(dir, plugin, "fixture_dsh.js", &extra)
        },
        broken_manifest: "ecosystem = \"dsh\"\nengine = \"node\"",
        processes: Some(|dir, plugin, extra| {
            let extra = format!("ecosystem = \"dsh\"\n{extra}");
            dsh_fixture(dir, plugin, "fixture_dsh_proc.js", &extra)
        }),
        ..dsh()
    }
}

pub fn rutis() -> Engine {
    Engine {
        name: "rutis",
        install: |dir, plugin, extra| {
            let lib = built_fixture("conformance_rutis_fixture", "fixture_rutis.rs");
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &manifest(plugin, &lib, extra),
            );
        },
        broken_entry: "fixture.so",
        broken_manifest: "ecosystem = \"rutis-agent\"",
        hooks: &[Hook::Tools, Hook::CallTool],
        rewrites: Support::No("a rutis-agent library has tools only"),
        raises: Support::No(
            "a panic cannot cross the C ABI, and an error is the tool's own result",
        ),
        throw_kind: "",
        error_kind: "",
        shape_kind: "bad_reply",
        sandboxed: TRUSTED,
        files: TRUSTED,
        file_kind: "",
        logs: Support::No("a rutis-agent library has no log API"),
        images: Support::No("a rutis-agent tool replies with JSON text"),
        terminates: Support::No(
            "a rutis-agent tool's reply is JSON text: a `terminate` in it is only text",
        ),
        echoed: same_text,
        sees_run_id: Support::No("a rutis-agent library has tools only"),
        input_reason: "",
        on_stop: Support::No("a rutis-agent library has tools only"),
        finish: Support::No("a rutis-agent library has tools only"),
        event_name: no_event,
        processes: None,
    }
}
