//! The library's integration tests, one module per concern, in one test
//! binary: one link and one process for all of them, which keeps a full
//! build's disk use and link time down. A module names the engines it needs
//! (the library's features) with `cfg`, so `cargo test -p yohost
//! --no-default-features --features ENGINE` runs the ones an engine alone
//! can. Tests that change state of the whole process (`PATH`, `TMPDIR`,
//! `VIRTUAL_ENV`, the CPU mask) or run themselves as child processes stay
//! binaries of their own, beside this folder.

#[cfg(feature = "js")]
#[path = "../support/loopback.rs"]
mod loopback;
#[path = "../support/mod.rs"]
mod support;
#[path = "../support/wasm_guests.rs"]
mod wasm_guests;

mod contract_rules;
#[cfg(feature = "js")]
mod data_dir;
mod decoding_properties;
#[cfg(all(feature = "js", feature = "python"))]
mod discovery_hostile;
#[cfg(feature = "dylib")]
mod dylib_plugins;
mod hook_lists;
#[cfg(feature = "js")]
mod js_error_positions;
#[cfg(feature = "js")]
mod js_fetch;
#[cfg(feature = "js")]
mod js_packages;
#[cfg(feature = "js")]
mod js_plugins;
#[cfg(feature = "js")]
mod js_signal;
mod layers;
#[cfg(feature = "js")]
mod locked;
#[cfg(feature = "js")]
mod manifest_errors;
mod plugin_stats;
#[cfg(feature = "python")]
mod python_plugins;
#[cfg(all(feature = "js", feature = "python"))]
mod refused_plugins;
#[cfg(feature = "dylib")]
mod run_logs;
#[cfg(all(feature = "js", feature = "python"))]
mod tool_arguments;
#[cfg(feature = "js")]
mod tool_progress;
mod tool_run;
#[cfg(all(feature = "js", feature = "python"))]
mod tool_terminate;
#[cfg(all(feature = "wasm", feature = "dylib"))]
mod wasm_plugins;
