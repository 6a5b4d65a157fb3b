//! One `before_tool` through the host: the native in-process baseline
//! beside the example dylib policy, with 0 and 1000 messages of history.

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn dylib_before_tool(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
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
    std::fs::create_dir(dir.path().join("policy")).unwrap();
    std::fs::write(
        dir.path().join("policy/plugin.toml"),
        format!("entry = {:?}", lib.display().to_string()),
    )
    .unwrap();
    let dylib = yohost::PluginHost::open(dir.path()).unwrap();
    assert_eq!(
        dylib.plugins().len(),
        1,
        "the example policy is built: {:?}",
        dylib.refused()
    );

    let mut group = c.benchmark_group("before_tool");
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    common::bench_before_tool(&mut group, &rt, "native", &common::native_baseline());
    common::bench_before_tool(&mut group, &rt, "dylib", &dylib);
    group.finish();
}

criterion_group!(benches, dylib_before_tool);
criterion_main!(benches);
