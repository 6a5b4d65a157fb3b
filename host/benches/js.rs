//! The JS engine's costs: one `before_tool` through a TypeScript policy
//! beside the native in-process baseline (0 and 1000 messages of history),
//! and a cold load of a plugin file (type stripping, a fresh runtime,
//! evaluation, its thread).

mod common;

use criterion::{criterion_group, criterion_main, Criterion};

const POLICY: &str = r#"
import { definePlugin } from "yohost";
export default definePlugin({
  before_tool({ tool, args }) {
    if (tool === "bash" && String(args.command ?? "").includes("rm -rf")) return { deny: "no" };
    return null;
  },
});
"#;

fn bench(c: &mut Criterion) {
    let rt = common::runtime();
    let (dir, typescript) = common::host_with_file("policy.ts", POLICY);
    common::before_tool_group(c, &rt, "typescript", &typescript);

    common::cold_load_group(c, dir.path(), "typescript", 20, 3);
}

criterion_group!(benches, bench);
criterion_main!(benches);
