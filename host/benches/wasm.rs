//! The Wasm engine's costs: one `before_tool` through a Wasm policy
//! (`guest_policy`) beside the native in-process baseline (0 and 1000
//! messages of history), and a warm load of the wasm-redactor example (the
//! compiled artifact comes from the cache, then the component is linked and
//! probed).

#[path = "../tests/support/wasm_guests.rs"]
mod wasm_guests;

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use yohost::adapter::{Adapters, Found};
use yohost::PluginHost;

/// A plugin directory with `guest` installed as `name`.
fn plugin_dir(name: &str, guest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(name);
    std::fs::create_dir(&folder).unwrap();
    let entry = wasm_guests::guest(guest);
    std::fs::write(
        folder.join("plugin.toml"),
        format!("entry = {:?}", entry.display().to_string()),
    )
    .unwrap();
    dir
}

fn bench(c: &mut Criterion) {
    let rt = common::runtime();
    let dir = plugin_dir("policy", "guest_policy");
    let wasm = PluginHost::open(dir.path()).unwrap();
    common::before_tool_group(c, &rt, "wasm", &wasm);

    let dir = plugin_dir("wasm-redactor", "wasm_redactor");
    let candidate = match Adapters::default().scan(dir.path()).unwrap().remove(0) {
        Found::Plugin(candidate) => candidate,
        Found::Refused { reason, .. } => panic!("{reason}"),
    };
    // The first load compiles and fills the cache; the bench measures the rest.
    yohost::adapter::Adapters::default()
        .load(&candidate)
        .unwrap();
    let mut group = c.benchmark_group("load");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    group.bench_function("wasm-redactor (cached)", |b| {
        b.iter(|| {
            yohost::adapter::Adapters::default()
                .load(&candidate)
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
