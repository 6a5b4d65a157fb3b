//! One `before_tool` through the host: the native in-process baseline
//! beside the example dylib policy, with 0 and 1000 messages of history.
//! The policy is built for the bench (`tests/plugins/native`), so nothing
//! needs building first.

#[path = "../tests/support/wasm_guests.rs"]
mod wasm_guests;

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

fn dylib_before_tool(c: &mut Criterion) {
    let rt = common::runtime();
    let lib = wasm_guests::native_guest("example_policy");
    let (_dir, dylib) = common::host_with_file(
        "policy/plugin.toml",
        &format!("entry = {:?}", lib.display().to_string()),
    );
    common::before_tool_group(c, &rt, "dylib", &dylib);
}

criterion_group!(benches, dylib_before_tool);
criterion_main!(benches);
