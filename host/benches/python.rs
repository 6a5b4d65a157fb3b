//! The Python engine's cost: one `before_tool` through a Python policy
//! beside the native in-process baseline, with 0 and 1000 messages of
//! history.

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

const PYTHON_POLICY: &str = r#"
from yohost import Plugin, Deny

plugin = Plugin("policy")

@plugin.before_tool
def check(call):
    if "rm -rf" in call["args"].get("command", ""):
        return Deny("no")
"#;

fn bench(c: &mut Criterion) {
    let rt = common::runtime();
    let (_dir, python) = common::host_with_file("policy.py", PYTHON_POLICY);
    common::before_tool_group(c, &rt, "python", &python);
}

criterion_group!(benches, bench);
criterion_main!(benches);
