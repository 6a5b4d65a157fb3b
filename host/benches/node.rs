//! The Node engine's costs: one `before_tool` through a TypeScript policy in
//! a `node` process beside the native in-process baseline (0 and 1000
//! messages of history), and a cold load (a new process, the bootstrap,
//! type stripping, evaluation). Skipped, saying why, without `node` on PATH.

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
    if let Err(why) = yohost::adapter::node::node() {
        eprintln!("skipped: {why}");
        return;
    }
    let rt = common::runtime();
    let dir = tempfile::tempdir().expect("a temp dir");
    for (file, text) in [
        ("policy/index.ts", POLICY),
        ("policy/plugin.toml", "engine = \"node\"\n"),
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the folder is made");
        std::fs::write(path, text).expect("the plugin is written");
    }
    let host = yohost::PluginHost::open(dir.path()).expect("the host opens");
    assert_eq!(
        host.plugins().len(),
        1,
        "the plugin loads: {:?}",
        host.refused()
    );
    common::before_tool_group(c, &rt, "node", &host);

    common::cold_load_group(c, dir.path(), "node", 10, 5);
}

criterion_group!(benches, bench);
criterion_main!(benches);
