//! One conformance suite for every engine and adapter: every case runs
//! against every row of the table (`engines.rs`), through a real
//! `yoagent::Agent` on a scripted `MockProvider`.
//!
//! # The protocol
//!
//! The agent has the `echo` tool and a recording tool `run {cmd}`, which
//! records the `cmd` it actually ran with and returns `ran <cmd>`. Each row
//! has one fixture plugin (`tests/plugins/conformance/`), named `fx-<row>`,
//! and every fixture reacts to the same inputs:
//!
//! | Hook | Input | Reaction |
//! | --- | --- | --- |
//! | `before_tool` on `run` | every `cmd` | logs `before_tool <cmd>` first |
//! | | starts with `deny`, or contains `rm -rf` | denies: `fx denied: <cmd>` |
//! | | `rewrite:X` | rewrites `cmd` to `X` |
//! | | `whoami` or `whoami <rest>` | rewrites `cmd` to `whoami:<run_id it was called with>` (and ` <rest>`) |
//! | | `throw` | throws, raises or panics (its message holds `fx-secret-7f3a`) |
//! | | `error` | returns an error of its own (a Rust `Err`, Python's `HookError`; a throw in JS) |
//! | | `hang` | never settles |
//! | | `spin` | busy-loops |
//! | | `shape` | replies with a shape the contract does not allow |
//! | | `oversize` | replies with over 16 MiB |
//! | | `flood` | logs 100,000 lines (`flood <i>`), then allows |
//! | | `deluge` | logs 8,192 lines of 8 KiB (`deluge <i> xx…`, 64 MiB in all), then allows |
//! | | `memory` | allocates without bound |
//! | | `file` | reads /etc/passwd, rewriting `cmd` to `leaked:<first line>` |
//! | | anything else | allows |
//! | `tools` / `call_tool` | `fx_echo {text}` | the text |
//! | | `fx_image` | the text `fx image` and a 1×1 PNG |
//! | | `fx_bad_image` | an `image/svg+xml` image, which the host must refuse |
//! | | `fx_end {text}` | the text, asking to end the run (`terminate`) |
//! | a server's `fx_echo` (MCP) | `crash` | exits |
//! | | `garbage` | writes lines that are not JSON-RPC on its output, then the text |
//! | | `flood` | sends 100,000 notifications, then the text |
//! | a `mute` server | `initialize` | never answers |
//! | `after_tool` | output text containing `redact-me` | replaces the content with `[redacted by fx]` |
//! | `before_model` | every request | the note `fx note` |
//! | `on_input` | text containing `forbidden-input` | rejects: `fx rejects forbidden-input` |
//! | `on_stop` | an answer containing `lazy`, not continued yet | continues: `fx: try again` |
//! | `on_event` | every event | logs `event <type>` |
//! | `finish` | the run ended | logs `finish <end>` |
//!
//! Logs go through each SDK's own log call, so the host attaches `run_id`.
//! Where a row cannot take a case as written (trusted engines get no
//! `memory` or `file`; pi has no `on_stop`; DSH cannot rewrite; a
//! rutis-agent library and an MCP server have tools only; Wasm, DSH,
//! rutis-agent and MCP tools cannot end the run), the table says so and the case
//! checks the documented outcome instead: a row without the hook a case is
//! about must not claim it, and a row without `before_tool` gets the
//! hostile inputs through its tool `fx_echo`. A row whose plugin is a
//! server on its own output (MCP) also takes a server's hostile inputs
//! (`crash`, `garbage`, a notification `flood`, a `mute` server); the
//! others say they do not.
//!
//! # Plugin processes
//!
//! Rows whose plugins run in a process or start one (`node`, `pi`
//! through `exec`, `pi_node`, `dsh_node`, `mcp`) also have a process
//! fixture (`fixture_proc.ts`, `fixture_pi_proc.ts`, `fixture_dsh_proc.js`,
//! `fixture_mcp.mjs proc`) with tools `fx_sh`, `fx_read` and `fx_signal`
//! (`processes.rs`). Its folder holds links out (`sys -> /etc`, `proc ->
//! /proc`, a dangling link in its write grant), and the cases check that
//! the kernel sandbox holds the process and what it starts to the grants
//! and to its granted environment, that it cannot signal the host, and
//! that nothing it started outlives its call's deadline or the host. An
//! attacker's native program (`attack.c`, compiled with `cc`), started
//! from the fixture's process, tries the kernel's wider surface: device
//! nodes, the terminal, the host's limits and priority, inherited
//! descriptors, MPTCP, raw, UDP and Unix sockets, capabilities,
//! namespaces, mounts and the keyring. CI runs these cases as root and as
//! an ordinary user. The other rows start no process of their own and say
//! so.
//!
//! # What is asserted
//!
//! Typed outcomes, not message substrings: whether `run` ran and with which
//! `cmd`, `is_error` of each tool result, fixed texts, and the structured
//! fields `plugin`, `hook`, `error_kind` and `run_id` of log lines.
//!
//! # Adding a row
//!
//! A fixture, a function in `engines.rs`, and its name in the list below.

#[path = "../../../host/tests/support/mod.rs"]
mod support;
#[path = "../../../host/tests/support/wasm_guests.rs"]
mod wasm_guests;

mod cases;
mod engines;
mod harness;
mod processes;

/// For every engine, a module with one test per case.
macro_rules! conformance {
    (engines: [$($engine:ident),* $(,)?], cases: $cases:tt $(,)?) => {
        $(conformance!(@row $engine $cases);)*
    };
    (@row $engine:ident [$($case:ident),* $(,)?]) => {
        mod $engine {
            $(
                #[tokio::test]
                async fn $case() {
                    if let Some(why) = crate::engines::unavailable(stringify!($engine)) {
                        eprintln!("skipped: {why}");
                        return;
                    }
                    crate::$case(crate::engines::$engine()).await;
                }
            )*
        }
    };
}

conformance! {
    engines: [dylib, wasm, ts, node, python, pi, pi_node, dsh, dsh_node, rutis, mcp],
    cases: [
        deny,
        rewrite,
        rewrite_chain_is_rechecked,
        undone_rewrite_is_denied,
        rewrite_outside_the_host_is_rechecked,
        tool_result_text,
        tool_result_image,
        bad_image_is_refused,
        terminate_ends_the_run,
        after_tool_edits,
        notes_reach_every_request,
        input_is_rejected,
        stop_continues_once,
        events_in_order_then_finish,
        concurrent_runs_keep_their_run_ids,
        throw_fails_closed,
        error_fails_closed,
        hang_times_out,
        spin_times_out,
        wrong_shape_is_a_bad_reply,
        oversized_reply_is_refused,
        crash_fails_closed,
        garbage_is_passed_over,
        notification_flood_is_passed_over,
        mute_server_is_refused,
        memory_bomb_is_stopped,
        forbidden_file_is_denied,
        log_flood_is_attributed,
        log_deluge_is_bounded_and_the_drop_reported,
        required_plugin_that_fails_to_load_fails_every_run,
        advisory_plugin_that_fails_to_load_is_logged_each_run,
        process_stays_inside_its_grants,
        process_cannot_signal_the_host,
        nothing_outlives_the_deadline_or_the_host,
        process_cannot_reach_the_kernel_surface,
        process_reaches_only_the_listed_hosts_through_the_proxy,
        a_fork_bomb_meets_the_plugin_s_task_limit,
        a_write_grant_over_what_the_host_trusts_is_refused,
    ],
}

use cases::*;
use processes::*;
