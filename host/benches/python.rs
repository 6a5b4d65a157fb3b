//! The Python engine's cost: one `before_tool` through a Python policy
//! beside the native in-process baseline, with 0 and 1000 messages of
//! history.

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use yohost::PluginHost;

const PYTHON_POLICY: &str = r#"
from yohost import Plugin, Deny

plugin = Plugin("policy")

@plugin.before_tool
def check(call):
    if "rm -rf" in call["args"].get("command", ""):
        return Deny("no")
"#;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.py"), PYTHON_POLICY).unwrap();
    let python = PluginHost::open(dir.path()).unwrap();
    assert_eq!(python.plugins().len(), 1, "{:?}", python.refused());

    let mut group = c.benchmark_group("before_tool");
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    common::bench_before_tool(&mut group, &rt, "native", &common::native_baseline());
    common::bench_before_tool(&mut group, &rt, "python", &python);
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
