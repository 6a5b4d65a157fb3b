//! Loading whole plugin directories: the repository's `examples/`, and
//! directories of 100 and of 1,000 generated plugins of every engine and pi
//! (the kinds in turn, each a policy with `before_tool` from `yohost new`'s
//! templates; the dylib and Wasm ones are copies of one built library
//! each). Every load opens a new [`PluginHost`] with the pi adapter and
//! checks that every plugin loaded.
//!
//! - **cold**: a new `PluginHost` over the directory with an empty compile
//!   cache (`YOHOST_CACHE_DIR` points at a folder emptied before each load):
//!   every Wasm component is compiled and every dylib copied into the
//!   private folder. The process's engines are already started (the Python
//!   interpreter, the Wasm engine), as in any host after its first load.
//!   Python writes no bytecode caches (`sys.dont_write_bytecode`), and the
//!   JavaScript engine keeps nothing between loads, so for them cold and
//!   warm are the same work.
//! - **warm**: a new `PluginHost` over the same directory with the caches
//!   filled by an earlier load (compiled components, dylib copies).
//! - **rescan**: a live host rescans its unchanged directory
//!   ([`PluginHost::reload`], then a snapshot): nothing is loaded again,
//!   which the bench checks (the same plugins before and after).
//!
//! The first load of the 1,000-plugin directory prints how much the
//! process's resident memory grew.

#[path = "../../host/tests/support/wasm_guests.rs"]
mod wasm_guests;

#[path = "../../host/tests/support/plugin_dirs.rs"]
mod plugin_dirs;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use plugin_dirs::{copy_examples, resident_bytes, write_mixed, Libraries};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use yohost::PluginHost;

/// A new host over `dir` with the pi adapter, every plugin loaded.
fn open(dir: &Path) -> PluginHost {
    let host = PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .open()
        .expect("the host opens");
    assert!(
        host.refused().is_empty(),
        "every plugin loads: {:?}",
        host.refused()
    );
    host
}

/// Empty the compile cache: the next load compiles and copies afresh.
fn empty_cache(cache: &Path) {
    for entry in std::fs::read_dir(cache).expect("the cache is listed") {
        std::fs::remove_dir_all(entry.expect("an entry").path()).expect("the cache is emptied");
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn bench(c: &mut Criterion) {
    let cache = tempfile::tempdir().expect("a cache dir");
    // Set before any load, while the process has no other thread.
    std::env::set_var("YOHOST_CACHE_DIR", cache.path());

    let examples = tempfile::tempdir().expect("a temp dir");
    copy_examples(
        examples.path(),
        &[
            wasm_guests::native_guest("example_policy"),
            wasm_guests::native_guest("example_tool"),
            wasm_guests::guest("wasm_redactor"),
        ],
    );
    let libraries = Libraries {
        dylib: wasm_guests::native_guest("example_policy"),
        wasm: wasm_guests::guest("guest_policy"),
    };
    // Beside the libraries, so the copies can be hard links.
    let generated = |count: usize| {
        let dir =
            tempfile::tempdir_in(libraries.wasm.parent().expect("a folder")).expect("a temp dir");
        write_mixed(dir.path(), count, &libraries);
        dir
    };
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));

    group.bench_function("examples/ (cold)", |b| {
        b.iter_batched(
            || empty_cache(cache.path()),
            |()| open(examples.path()),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("examples/ (warm)", |b| {
        b.iter_with_large_drop(|| open(examples.path()))
    });
    let live = open(examples.path());
    group.bench_function("examples/ (rescan, unchanged)", |b| {
        b.iter(|| {
            let before = live.plugins();
            live.reload();
            let after = live.plugins();
            assert_eq!(before.len(), after.len());
            assert!(
                before.iter().zip(&after).all(|(a, b)| Arc::ptr_eq(a, b)),
                "a rescan of an unchanged directory loads nothing again"
            );
        })
    });
    drop(live);

    for count in [100, 1000] {
        let dir = generated(count);
        let rss = resident_bytes();
        let started = Instant::now();
        let first = open(dir.path());
        let took = started.elapsed();
        assert_eq!(first.plugins().len(), count);
        if let (Some(before), Some(after)) = (rss, resident_bytes()) {
            eprintln!(
                "load: the first load of {count} generated plugins took {took:?}; resident memory grew by {:.1} MiB ({:.1} to {:.1} MiB)",
                mib(after.saturating_sub(before)),
                mib(before),
                mib(after)
            );
        }
        drop(first);
        group.bench_function(format!("{count} generated (cold)"), |b| {
            b.iter_batched(
                || empty_cache(cache.path()),
                |()| open(dir.path()),
                BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("{count} generated (warm)"), |b| {
            b.iter_with_large_drop(|| open(dir.path()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
