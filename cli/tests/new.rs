//! `yohost new`: every kind of scaffold loads in `yohost check` as it is
//! made (the Rust ones once cargo has built them), as the `before_tool`
//! policy it says it is; a bad name or a folder in use makes nothing.
//!
//! The scaffolds depend on this checkout's SDKs (`--sdk-repo`). The Rust
//! one builds in `target/scaffolds`, the Wasm one in `target/wasm-guests`
//! (shared with the Wasm engine's guests, whose lock file it borrows), then
//! the library is put where its `plugin.toml` says cargo makes it.
//! `.ci/run` type-checks the TypeScript and Python scaffolds.

#[path = "../../host/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn yohost(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_yohost"))
        .args(args)
        .output()
        .expect("yohost runs")
}

fn new(kind: &str, name: &str, dir: &Path) {
    let repo = repo();
    let out = yohost(&[
        "new",
        kind,
        name,
        dir.to_str().unwrap(),
        "--sdk-repo",
        repo.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
}

/// Build the Rust scaffold in `dir` into `target` with `args`, and put
/// `artifact` (a path under the target dir) where plugin.toml expects it.
fn cargo_build(dir: &Path, lock: &Path, target: &Path, args: &[&str], artifact: &str) {
    std::fs::copy(lock, dir.join("Cargo.lock")).unwrap();
    let out = Command::new(env!("CARGO"))
        .arg("build")
        .args(args)
        .args(["--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built = dir.join("target").join(artifact);
    std::fs::create_dir_all(built.parent().unwrap()).unwrap();
    std::fs::copy(target.join(artifact), built).unwrap();
}

#[test]
fn every_scaffold_loads_as_a_before_tool_policy() {
    let plugins = plugin_dir();
    let at = |name: &str| plugins.path().join(name);
    for (kind, name) in [
        ("rust", "rust-guard"),
        ("wasm", "wasm-guard"),
        ("ts", "ts-guard"),
        ("python", "python-guard"),
        ("pi", "pi-guard"),
    ] {
        new(kind, name, &at(name));
        assert!(at(name).join("plugin.toml").exists());
    }
    let lib = |name: &str| {
        format!(
            "{}{name}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )
    };
    cargo_build(
        &at("rust-guard"),
        &repo().join("Cargo.lock"),
        &target_dir().join("scaffolds"),
        &[],
        &format!("debug/{}", lib("rust_guard")),
    );
    cargo_build(
        &at("wasm-guard"),
        &repo().join("tests/plugins/wasm/Cargo.lock"),
        &target_dir().join("wasm-guests"),
        &["--release", "--target", "wasm32-wasip2"],
        "wasm32-wasip2/release/wasm_guard.wasm",
    );
    let out = yohost(&["check", "--json", plugins.path().to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (name, engine, ecosystem) in [
        ("rust-guard", "dylib", "yohost"),
        ("wasm-guard", "wasm", "yohost"),
        ("ts-guard", "js", "yohost"),
        ("python-guard", "python", "yohost"),
        ("pi-guard", "js", "pi"),
    ] {
        let plugin = checked(&doc, name);
        assert_eq!(plugin["status"], "loaded", "{plugin}");
        assert_eq!(plugin["engine"], engine, "{plugin}");
        assert_eq!(plugin["ecosystem"], ecosystem, "{plugin}");
        assert_eq!(
            plugin["hooks"],
            serde_json::json!(["before_tool"]),
            "{plugin}"
        );
        assert_eq!(plugin["warnings"], serde_json::json!([]), "{plugin}");
    }
    assert!(out.status.success(), "{doc}");
}

#[test]
fn a_bad_name_or_a_folder_in_use_makes_nothing() {
    let dir = plugin_dir();
    for name in ["", "Guard", "../escape", "a b", "x\"y"] {
        let target = dir.path().join("made");
        let out = yohost(&["new", "ts", name, target.to_str().unwrap()]);
        assert!(!out.status.success(), "{name:?}");
        assert!(!target.exists(), "{name:?}");
    }
    let used = dir.path().join("used");
    write(&used, "keep.txt", "mine");
    let out = yohost(&["new", "python", "guard", used.to_str().unwrap()]);
    assert!(!out.status.success());
    assert_eq!(std::fs::read_dir(&used).unwrap().count(), 1);
    // An empty folder is taken.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = yohost(&["new", "python", "guard", empty.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(empty.join("plugin.py").exists());
}
