//! The suite's integration tests, one module per concern, in one test
//! binary (one link and one process for all of them). The conformance
//! cases, the soak and the live-directory test, which measure the whole
//! process (its memory, its inotify watches), are binaries of their own.

#[path = "../../../host/tests/support/plugin_dirs.rs"]
mod plugin_dirs;
#[path = "../../../host/tests/support/mod.rs"]
mod support;
#[path = "../../../host/tests/support/wasm_guests.rs"]
mod wasm_guests;

mod file_lengths;
mod grants;
mod loading_many;
mod new_adapter;
mod node_plugins;
