//! A locked host (`PluginHostBuilder::locked`) runs only what
//! `yohost.lock` records:
//! - a file swapped on disk again and again while hosts open is either
//!   refused, naming it, or runs as locked: the code that runs is never the
//!   swapped one, since the host loads the very bytes it hashed;
//! - live reload goes on under the lock: a change that differs from it
//!   refuses the plugin, naming the file, and putting the locked content
//!   back loads it again;
//! - the packages a plugin depends on are locked one hash per package
//!   (`node_modules/NAME/`), and a change inside one is refused naming it;
//! - a special file (a FIFO here; a device node as well) cannot be locked,
//!   and a plugin holding one is refused under the lock, naming it.

use crate::support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use support::*;
use yohost::adapter::{Adapters, Found};
use yohost::lockfile::{hash_plugin, Locked, Lockfile};
use yohost::{PluginHost, PluginReport, Status};

/// A plugin whose one tool is named `tool`.
fn offering(tool: &str) -> String {
    format!("export default {{ tools: [{{ name: \"{tool}\", run() {{ return \"ok\"; }} }}] }};\n")
}

/// Lock every plugin of `dir` as it is now.
fn lock(dir: &Path) {
    let mut lock = Lockfile::default();
    for found in Adapters::default().scan(dir).unwrap() {
        if let Found::Plugin(candidate) = found {
            let hashed = hash_plugin(&candidate).unwrap();
            lock.set(Locked {
                name: candidate.name.clone(),
                source: "local".into(),
                integrity: None,
                hash: hashed.total(),
                files: hashed.files,
            });
        }
    }
    lock.write(dir).unwrap();
}

async fn swap_plugin(host: &PluginHost) -> PluginReport {
    host.report()
        .await
        .into_iter()
        .find(|p| p.name == "swap")
        .expect("the plugin is reported")
}

/// Write `text` to `path` whole (through a rename), so a reader sees the
/// old content or the new, never half of one. The staged file is a dot
/// file beside the plugin's folder, which the host passes over.
fn replace(path: &Path, text: &str) {
    let folder = path.parent().unwrap();
    let staged = folder.with_file_name(".staged");
    std::fs::write(&staged, text).unwrap();
    std::fs::rename(&staged, path).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_swapped_while_hosts_load_is_refused_or_runs_as_locked() {
    let plugins = plugin_dir();
    let entry = write(plugins.path(), "swap/index.ts", &offering("locked_tool"));
    lock(plugins.path());
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, entry) = (Arc::clone(&stop), entry.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                replace(&entry, &offering("swapped_tool"));
                replace(&entry, &offering("locked_tool"));
            }
        })
    };
    let (mut refused, mut loaded) = (0, 0);
    for _ in 0..40 {
        let host = PluginHost::builder(plugins.path())
            .locked(true)
            .open()
            .unwrap();
        let plugin = swap_plugin(&host).await;
        match plugin.status {
            Status::Loaded => {
                assert_eq!(plugin.tools, ["locked_tool"], "{plugin}");
                loaded += 1;
            }
            Status::Refused => {
                let reason = plugin.reason.as_deref().unwrap_or_default();
                assert!(reason.contains("index.ts changed"), "{reason}");
                refused += 1;
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    swapper.join().unwrap();
    eprintln!("{loaded} loaded as locked, {refused} refused");
    assert_eq!(loaded + refused, 40);
}

#[tokio::test(flavor = "multi_thread")]
async fn live_reload_under_a_lock_loads_only_locked_content() {
    let plugins = plugin_dir();
    let entry = write(plugins.path(), "swap/index.ts", &offering("locked_tool"));
    lock(plugins.path());
    let host = PluginHost::builder(plugins.path())
        .locked(true)
        .open()
        .unwrap();
    assert_eq!(swap_plugin(&host).await.tools, ["locked_tool"]);

    replace(&entry, &offering("swapped_tool"));
    host.reload();
    let plugin = swap_plugin(&host).await;
    assert_eq!(plugin.status, Status::Refused, "{plugin}");
    let reason = plugin.reason.unwrap_or_default();
    assert!(reason.contains("index.ts changed"), "{reason}");

    replace(&entry, &offering("locked_tool"));
    host.reload();
    let plugin = swap_plugin(&host).await;
    assert_eq!(plugin.status, Status::Loaded, "{plugin}");
    assert_eq!(plugin.tools, ["locked_tool"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dependency_is_locked_as_one_package_and_named_when_it_changes() {
    let plugins = plugin_dir();
    write(
        plugins.path(),
        "swap/index.ts",
        "import { name } from \"dep\";\nimport { other } from \"@scope/other\";\nexport default { tools: [{ name: name + other, run() { return \"ok\"; } }] };\n",
    );
    let (dep, _) = (
        write(
            plugins.path(),
            "swap/node_modules/dep/index.js",
            "export const name = \"locked\";\n",
        ),
        write(
            plugins.path(),
            "swap/node_modules/dep/package.json",
            "{\"name\": \"dep\", \"main\": \"index.js\"}",
        ),
    );
    write(
        plugins.path(),
        "swap/node_modules/@scope/other/index.js",
        "export const other = \"_tool\";\n",
    );
    write(
        plugins.path(),
        "swap/node_modules/@scope/other/package.json",
        "{\"name\": \"@scope/other\", \"main\": \"index.js\"}",
    );
    lock(plugins.path());
    let lock = Lockfile::read(plugins.path()).unwrap();
    let files: Vec<&str> = lock
        .get("swap")
        .unwrap()
        .files
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        files,
        [
            "index.ts",
            "node_modules/@scope/other/",
            "node_modules/dep/"
        ]
    );

    let host = PluginHost::builder(plugins.path())
        .locked(true)
        .open()
        .unwrap();
    assert_eq!(swap_plugin(&host).await.tools, ["locked_tool"]);

    replace(&dep, "export const name = \"swapped\";\n");
    host.reload();
    let plugin = swap_plugin(&host).await;
    assert_eq!(plugin.status, Status::Refused, "{plugin}");
    let reason = plugin.reason.unwrap_or_default();
    assert!(reason.contains("node_modules/dep/ changed"), "{reason}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_special_file_in_a_plugin_cannot_be_locked_and_refuses_it_under_the_lock() {
    let plugins = plugin_dir();
    write(plugins.path(), "piped/index.ts", &offering("piped_tool"));
    lock(plugins.path());
    let fifo = plugins.path().join("piped/kmsg");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let candidate = Adapters::default()
        .scan(plugins.path())
        .unwrap()
        .into_iter()
        .find_map(|found| match found {
            Found::Plugin(candidate) if candidate.name == "piped" => Some(candidate),
            _ => None,
        })
        .unwrap();
    let refused = hash_plugin(&candidate).unwrap_err();
    assert!(
        refused.contains("kmsg is a device, FIFO or socket"),
        "{refused}"
    );
    let host = PluginHost::builder(plugins.path())
        .locked(true)
        .open()
        .unwrap();
    let report = host.report().await;
    let plugin = reported(&report, "piped");
    assert_eq!(plugin.status, Status::Refused);
    assert!(
        plugin
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("kmsg is a device, FIFO or socket"),
        "{plugin:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_plugin_writes_in_its_data_folder_neither_reloads_it_nor_breaks_its_lock() {
    let plugins = plugin_dir();
    write(plugins.path(), "keeper/index.ts", &offering("keeper_tool"));
    write(
        plugins.path(),
        "keeper/plugin.toml",
        "[capabilities]\nwrite = [\"state\"]\n",
    );
    write(plugins.path(), "keeper/state/count", "1");
    lock(plugins.path());
    let host = PluginHost::builder(plugins.path())
        .locked(true)
        .open()
        .unwrap();
    let before = host.plugins();
    assert_eq!(before.len(), 1, "{:?}", host.refused());
    // The plugin writes its data, as it would during a run.
    write(plugins.path(), "keeper/state/count", "2");
    write(plugins.path(), "keeper/state/more/log", "x");
    host.reload();
    let after = host.plugins();
    assert!(
        std::sync::Arc::ptr_eq(&before[0], &after[0]),
        "the plugin was loaded again for a change in its data"
    );
    // A change to its code is a change: under the lock, a refusal.
    write(
        plugins.path(),
        "keeper/index.ts",
        &offering("keeper_tool_2"),
    );
    host.reload();
    let report = host.report().await;
    assert_eq!(reported(&report, "keeper").status, Status::Refused);
}
