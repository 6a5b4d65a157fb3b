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
//! | pi | fixture_pi.ts | `guest` (a throw) | no run id in pi's `ctx` (`whoami` is not rewritten); an `input` handler cannot give a reason (the adapter's own text); no `on_stop` (a lazy answer is accepted); its `finish` is its `agent_end` handlers, which the adapter runs at the run's finish (`event agent_end`) |
//! | pi_node | fixture_pi.ts with `engine = "node"` | `guest` (a throw) | as pi |
//! | dsh | fixture_dsh.js, a DSH tool plugin | `guest` (a throw) | DSH decides allow, deny or ask and cannot rewrite; no input, stop, event or finish hooks; tools render text only (no images) and cannot end the run; no file API; `shape` is a decision the adapter rejects, so `guest` |
//! | dsh_node | fixture_dsh.js with `engine = "node"` | `guest` (a throw) | as dsh |
//! | rutis | fixture_rutis.rs as a rutis-agent hot-plug library | — | tools only: the hostile inputs go to its tool `fx_echo`, which fails closed as the call; a panic cannot cross the C ABI and an error is the tool's own result (no `throw`, `error`); a reply cannot end the run; no log API (no `flood`); trusted code, not sandboxed; its text is its reply's `notes`, as rutis shows it |
//! | mcp | fixture_mcp.mjs, a stdio MCP server in an `mcp.json` | `guest` (a JSON-RPC error) | tools only, as rutis; `throw` and `error` are both JSON-RPC errors (`guest`: the model reads the fixed text; an `isError` result is the tool's own answer, which the model reads); `oversize` is `crashed` (a message over 16 MiB ends the connection, as which call it answers is unknown: the rest of the run is unloaded, the next run starts the server again); `spin` busy-loops in a worker for 2 s (a call past its deadline is cancelled and the server lives on, as MCP means it); log notifications are the server's, not a call's (no `flood`, `deluge`); no way to end the run; no memory limit (the kernel sandbox bounds files, network and signals); `fx_echo` also takes a server's own hostile inputs (`crash`, `garbage`, a notification `flood`) and a `mute` server never answers `initialize` ([`Engine::server`]) |
//!
//! Rows that run in a process or can start one (node, pi, pi_node,
//! dsh_node: `fixture_dsh_proc.js`, whose commands go through DSH's
//! `ctx.shell`) also
//! have a process fixture ([`Engine::processes`]); the sandbox cases
//! (`processes.rs`) run on those rows only. The others start no process of
//! their own: Wasm has no process API, yohost's embedded TypeScript API
//! none either, and dylib, Python and rutis-agent libraries are trusted
//! code with the host's own rights. An MCP server is a process in the
//! kernel sandbox, but the row has no process fixture: the adapter's tests
//! (`adapters/mcp/tests/servers.rs`) hold a server to its grants and end it
//! with its host, and a call past its deadline is cancelled while the
//! server, with what it started, lives on, so "nothing outlives the
//! deadline" does not hold of it as written.
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
    /// The `error_kind` of the fixture's `oversize`.
    pub oversize_kind: &'static str,
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
    /// Whether the fixture logs a line at the run's finish, after its last
    /// event.
    pub finish: Support,
    /// That line: `finish completed`, or pi's `event agent_end` (the pi
    /// adapter runs `agent_end` handlers at the run's finish).
    pub finish_line: &'static str,
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
    /// Whether a call past its deadline ends what the call started: the
    /// process it ran in is retired (Node) or was the call's own (`exec`).
    pub deadline_ends_processes: Support,
    /// For a row whose plugin is a server speaking its protocol on its own
    /// output (MCP): put the fixture in `dir/<plugin>/` as a server that
    /// never answers its handshake (`mute`), with these extra `plugin.toml`
    /// lines. Such a fixture's `fx_echo` also takes `crash` (it exits),
    /// `garbage` (lines outside the protocol on its output, then the text)
    /// and `flood` (100,000 notifications, then the text).
    pub server: Option<fn(dir: &Path, plugin: &str, manifest: &str)>,
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
        oversize_kind: "reply_too_large",
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
        finish_line: "finish completed",
        event_name: every_event,
        processes: None,
        deadline_ends_processes: Support::Yes,
        server: None,
    }
}

/// Why row `name` cannot run on this machine, if it cannot.
pub fn unavailable(name: &str) -> Option<String> {
    matches!(name, "node" | "pi_node" | "dsh_node" | "mcp")
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
        oversize_kind: "reply_too_large",
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
        finish: Support::Yes,
        finish_line: "event agent_end",
        event_name: pi_event,
        processes: Some(pi_processes),
        deadline_ends_processes: Support::Yes,
        server: None,
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
        oversize_kind: "reply_too_large",
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
        finish_line: "",
        event_name: no_event,
        processes: None,
        deadline_ends_processes: Support::Yes,
        server: None,
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
        oversize_kind: "reply_too_large",
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
        finish_line: "",
        event_name: no_event,
        processes: None,
        deadline_ends_processes: Support::Yes,
        server: None,
    }
}

/// The MCP fixture in `dir/<plugin>/` as the server `<plugin>` of an
/// `mcp.json`, started with `args` after its script, with these extra
/// `plugin.toml` lines. The manifest grants `exec` (in the extra lines'
/// `[capabilities]` when they have one) and names no plugin: a server is
/// named after its key.
fn mcp_fixture(dir: &Path, plugin: &str, args: &[&str], extra: &str) {
    write(
        dir,
        &format!("{plugin}/fixture_mcp.mjs"),
        &source("fixture_mcp.mjs"),
    );
    let mut all = vec!["fixture_mcp.mjs"];
    all.extend_from_slice(args);
    let servers = serde_json::json!({"mcpServers": {plugin: {"command": "node", "args": all}}});
    write(dir, &format!("{plugin}/mcp.json"), &servers.to_string());
    // `exec` joins the extra lines' own `[capabilities]`, if they have one.
    let manifest = if extra.contains("[capabilities]") {
        extra.replace("[capabilities]", "[capabilities]\nexec = true")
    } else {
        format!("{extra}\n[capabilities]\nexec = true\n")
    };
    write(dir, &format!("{plugin}/plugin.toml"), &manifest);
}

/// An MCP server over stdio: tools only, and a server's own hostile inputs.
pub fn mcp() -> Engine {
    Engine {
        name: "mcp",
        install: |dir, plugin, extra| mcp_fixture(dir, plugin, &[], extra),
        broken_entry: "mcp.json",
        broken_manifest: "",
        hooks: &[Hook::Tools, Hook::CallTool],
        rewrites: Support::No("an MCP server has tools only"),
        raises: Support::Yes,
        throw_kind: "guest",
        error_kind: "guest",
        shape_kind: "bad_reply",
        oversize_kind: "crashed",
        sandboxed: Support::No(
            "the kernel sandbox bounds a server's files, network and signals, not its memory",
        ),
        files: Support::No(
            "tools only: `file` is a policy's read; the server's own reads are the kernel sandbox's (the adapter's tests)",
        ),
        file_kind: "",
        logs: Support::No(
            "a server's log notifications are the server's, not a call's: they carry no run",
        ),
        images: Support::Yes,
        terminates: Support::No("an MCP tool result has no way to end the run"),
        echoed: same_text,
        sees_run_id: Support::No("an MCP server has tools only, and never sees a run id"),
        input_reason: "",
        on_stop: Support::No("an MCP server has tools only"),
        finish: Support::No("an MCP server has tools only"),
        finish_line: "",
        event_name: no_event,
        processes: Some(|dir, plugin, extra| {
            // The process fixture's grants, with `exec` for the server.
            write(
                dir,
                &format!("{plugin}/fixture_mcp.mjs"),
                &source("fixture_mcp.mjs"),
            );
            let servers = serde_json::json!({"mcpServers": {plugin: {"command": "node", "args": ["fixture_mcp.mjs", "proc"]}}});
            write(dir, &format!("{plugin}/mcp.json"), &servers.to_string());
            write(dir, &format!("{plugin}/plugin.toml"), extra);
        }),
        deadline_ends_processes: Support::No(
            "an MCP server lives across calls: a call past its deadline is cancelled (`notifications/cancelled`), and what the server started ends with the server",
        ),
        server: Some(|dir, plugin, extra| mcp_fixture(dir, plugin, &["mute"], extra)),
    }
}
