//! The table: one row per engine or adapter, saying how to install its
//! fixture and where it departs from the protocol.
//!
//! | Row | Fixture | `throw` is | Not applicable, or meant differently |
//! | --- | --- | --- | --- |
//! | dylib | fixture.rs as a cdylib | `crashed` (a panic) | `memory`, `file`: trusted code, not sandboxed. `spin` stops by itself after 2 s (native code cannot be interrupted) |
//! | wasm | fixture.rs as a component | `crashed` (a trap) | — |
//! | ts | fixture.ts | `guest` (a throw) | — |
//! | python | fixture.py | `guest` (an exception) | `memory`, `file`: trusted code, not sandboxed |
//! | pi | fixture_pi.ts | `guest` (a throw) | no run id in pi's `ctx` (`whoami` is not rewritten); an `input` handler cannot give a reason (the adapter's own text); no `on_stop` (a lazy answer is accepted); no `finish` (its last line is its last event) |
//!
//! A new row is one function here plus one line in `main.rs`'s
//! `conformance!` list, and a fixture.

use crate::support::{example_dylib, write};
use crate::wasm_guests::guest;
use std::path::{Path, PathBuf};

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
    /// The `error_kind` of the fixture's `throw`.
    pub throw_kind: &'static str,
    /// The `error_kind` of the fixture's `error` (a returned error).
    pub error_kind: &'static str,
    /// `memory` and `file`: only sandboxed engines can be sent them.
    pub sandboxed: Support,
    /// The `error_kind` of a forbidden file read, for sandboxed rows.
    pub file_kind: &'static str,
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

/// The fixture's own reason for rejecting `forbidden-input`.
const FIXTURE_REJECT: &str = "fx rejects forbidden-input";

/// What the dylib and Python rows are not sent.
const TRUSTED: Support =
    Support::No("trusted code, not sandboxed: no memory limit, no file grants");

/// The built dylib fixture, refusing a build older than its source: `cargo
/// test --test conformance` alone does not rebuild examples.
fn dylib_fixture() -> PathBuf {
    let lib = example_dylib("conformance_fixture");
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).unwrap();
    let source = root().join("tests/plugins/conformance/fixture.rs");
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
            let lib = dylib_fixture();
            write(
                dir,
                &format!("{plugin}/plugin.toml"),
                &manifest(plugin, &lib, extra),
            );
        },
        broken_entry: "fixture.so",
        broken_manifest: "",
        throw_kind: "crashed",
        error_kind: "guest",
        sandboxed: TRUSTED,
        file_kind: "",
        sees_run_id: Support::Yes,
        input_reason: FIXTURE_REJECT,
        on_stop: Support::Yes,
        finish: Support::Yes,
        event_name: every_event,
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
        error_kind: "guest",
        sandboxed: Support::Yes,
        file_kind: "guest",
        sees_run_id: Support::Yes,
        input_reason: FIXTURE_REJECT,
        on_stop: Support::Yes,
        finish: Support::Yes,
        event_name: every_event,
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
        throw_kind: "guest",
        error_kind: "guest",
        sandboxed: Support::Yes,
        file_kind: "guest",
        sees_run_id: Support::Yes,
        input_reason: FIXTURE_REJECT,
        on_stop: Support::Yes,
        finish: Support::Yes,
        event_name: every_event,
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
        throw_kind: "guest",
        error_kind: "guest",
        sandboxed: TRUSTED,
        file_kind: "",
        sees_run_id: Support::Yes,
        input_reason: FIXTURE_REJECT,
        on_stop: Support::Yes,
        finish: Support::Yes,
        event_name: every_event,
    }
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
        throw_kind: "guest",
        error_kind: "guest",
        sandboxed: Support::Yes,
        file_kind: "guest",
        sees_run_id: Support::No("pi's ctx carries no run id"),
        input_reason: "a pi extension handled this input itself (`handled`), so no run starts",
        on_stop: Support::No("pi has no on_stop: the answer is accepted"),
        finish: Support::No("pi has no finish: its last line is its last event"),
        event_name: pi_event,
    }
}
