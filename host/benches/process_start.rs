//! What a confined process start costs: `true` started and waited for
//! through the plugin process sandbox (a new session, a PID namespace with
//! its keeper and init, no capabilities, the Landlock ruleset and the
//! seccomp filters, a private temporary folder), beside the same start
//! through `std::process::Command` alone.

use criterion::{criterion_group, criterion_main, Criterion};
use std::process::{Command, Stdio};
use yohost::adapter::sandbox::ProcessSandbox;
use yohost::manifest::Capabilities;

fn bench(c: &mut Criterion) {
    let program = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("a `true` to start");
    let base = tempfile::tempdir().expect("a temp dir");
    let sandbox = match ProcessSandbox::for_host_tool(base.path(), &Capabilities::default()) {
        Ok(sandbox) => sandbox,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let mut group = c.benchmark_group("process_start");
    group.bench_function("plain", |b| {
        b.iter(|| {
            let status = Command::new(program)
                .stdin(Stdio::null())
                .status()
                .expect("`true` runs");
            assert!(status.success());
        })
    });
    group.bench_function("confined", |b| {
        b.iter(|| {
            let mut command = sandbox.command(program);
            command.stdin(Stdio::null());
            let slot = sandbox.reserve().expect("a place to start it");
            let mut process = sandbox.spawn(slot, command, &[]).expect("`true` starts");
            let status = process.child().wait().expect("`true` ends");
            assert!(status.success());
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
