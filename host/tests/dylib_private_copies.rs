//! The copy of a dylib the host loads cannot be swapped:
//! - a library planted under the name of a plugin's copy (in the private
//!   folder, or where earlier versions put copies) is never loaded: the
//!   plugin's own code runs, and the planted file is replaced;
//! - a copy the process checked once is checked again when another file
//!   has taken its place since;
//! - a private folder that others may write (planted, owned by this user,
//!   mode 0777) is refused, naming it, and the plugin loads once the folder
//!   is private again and the host reloads.
//!
//! The tests set `YOHOST_CACHE_DIR` and `TMPDIR` for the process, so they
//! live in a test binary of their own and take turns.

mod support;
#[path = "support/wasm_guests.rs"]
mod wasm_guests;

use serde_json::json;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use support::*;
use wasm_guests::native_guest;
use yohost::adapter::private_dir::PrivateDirError;
use yohost::{LoadError, PluginHost};

static ENV: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Puts `YOHOST_CACHE_DIR` and `TMPDIR` back as they were when dropped.
struct Restore(Option<std::ffi::OsString>);

impl Drop for Restore {
    fn drop(&mut self) {
        std::env::remove_var("YOHOST_CACHE_DIR");
        match self.0.take() {
            Some(tmp) => std::env::set_var("TMPDIR", tmp),
            None => std::env::remove_var("TMPDIR"),
        }
    }
}

/// Use `cache` as `YOHOST_CACHE_DIR`, and `tmp` (if any) as `TMPDIR`,
/// until the returned value is dropped.
fn use_folders(cache: &Path, tmp: Option<&Path>) -> Restore {
    let restore = Restore(std::env::var_os("TMPDIR"));
    std::env::set_var("YOHOST_CACHE_DIR", cache);
    if let Some(tmp) = tmp {
        std::env::set_var("TMPDIR", tmp);
    }
    restore
}

fn install_tagger(dir: &Path) {
    let lib = example_dylib("fixture_tagger");
    write(
        dir,
        "tagger/plugin.toml",
        &format!("entry = {:?}", lib.display().to_string()),
    );
}

async fn echo_through(host: &PluginHost) -> String {
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)[0].1.clone()
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test]
async fn a_library_planted_under_the_copys_name_is_never_loaded() {
    let _turn = ENV.lock().await;
    let (cache, tmp, dir) = (plugin_dir(), plugin_dir(), plugin_dir());
    let _restore = use_folders(cache.path(), Some(tmp.path()));
    let tagger = example_dylib("fixture_tagger");
    let bytes = std::fs::read(&tagger).unwrap();
    let planted = std::fs::read(native_guest("example_policy")).unwrap();
    let ext = std::env::consts::DLL_EXTENSION;

    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let copy = cache.path().join("dylib").join(format!("{digest}.{ext}"));
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::write(&copy, &planted).unwrap();
    // Where copies used to go: a shared folder, named by a hash anyone can
    // compute.
    let mut old_hash = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut old_hash);
    let stem = tagger.file_stem().unwrap().to_str().unwrap();
    let old_copy = tmp
        .path()
        .join("yohost-dylib")
        .join(format!("{stem}-{:016x}.{ext}", old_hash.finish()));
    std::fs::create_dir_all(old_copy.parent().unwrap()).unwrap();
    std::fs::write(&old_copy, &planted).unwrap();

    install_tagger(dir.path());
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(
        echo_through(&host).await,
        "hi +tag",
        "the tagger's own code runs"
    );
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        bytes,
        "the planted copy is replaced"
    );
}

#[tokio::test]
async fn a_private_folder_others_can_write_is_refused_until_it_is_private() {
    let _turn = ENV.lock().await;
    for planted_level in ["root", "dylib"] {
        let cache = plugin_dir();
        let _restore = use_folders(cache.path(), None);
        let open = match planted_level {
            "root" => cache.path().to_path_buf(),
            _ => cache.path().join("dylib"),
        };
        std::fs::create_dir_all(&open).unwrap();
        chmod(&open, 0o777);
        let dir = plugin_dir();
        install_tagger(dir.path());
        let host = PluginHost::open(dir.path()).unwrap();
        assert_eq!(echo_through(&host).await, "hi", "{planted_level}");
        let refused = host.refused();
        assert_eq!(refused.len(), 1, "{refused:?}");
        match &refused[0].reason {
            LoadError::NoPrivateFolder {
                problem: PrivateDirError::NotPrivate { path, .. },
                ..
            } => assert_eq!(path, &open),
            other => panic!("{planted_level}: {other}"),
        }
        assert_eq!(
            std::fs::metadata(&open).unwrap().permissions().mode() & 0o777,
            0o777,
            "the folder is not silently repaired"
        );

        chmod(&open, 0o700);
        host.reload();
        assert_eq!(echo_through(&host).await, "hi +tag", "{planted_level}");
    }
}

#[tokio::test]
async fn a_copy_changed_after_it_was_checked_is_checked_again() {
    let _turn = ENV.lock().await;
    let (cache, dir) = (plugin_dir(), plugin_dir());
    let _restore = use_folders(cache.path(), None);
    let bytes = std::fs::read(example_dylib("fixture_tagger")).unwrap();
    install_tagger(dir.path());
    // The first load writes the copy; the second checks it and remembers.
    for _ in 0..2 {
        drop(PluginHost::open(dir.path()).unwrap());
    }
    let folder = cache.path().join("dylib");
    let copy = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension() == Some(std::env::consts::DLL_EXTENSION.as_ref()))
        .expect("the copy");
    // Another library put in its place by a rename (a new file), as a
    // process of this user could.
    let planted = folder.join("planted.tmp");
    std::fs::write(
        &planted,
        std::fs::read(native_guest("example_policy")).unwrap(),
    )
    .unwrap();
    std::fs::rename(&planted, &copy).unwrap();

    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        bytes,
        "the changed copy is checked again and replaced"
    );
    assert_eq!(echo_through(&host).await, "hi +tag");
}
