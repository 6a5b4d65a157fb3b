//! One `before_tool` through the host: the native in-process baseline
//! beside the example dylib policy, with 0 and 1000 messages of history.

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

fn dylib_before_tool(c: &mut Criterion) {
    let rt = common::runtime();
    let examples = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples");
    let lib = examples.join(format!(
        "{}example_policy{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let (_dir, dylib) = common::host_with_file(
        "policy/plugin.toml",
        &format!("entry = {:?}", lib.display().to_string()),
    );
    common::before_tool_group(c, &rt, "dylib", &dylib);
}

criterion_group!(benches, dylib_before_tool);
criterion_main!(benches);
