//! The guest plugins built on demand, once per process, each crate in a
//! target dir of its own under `<target>` (the outer `cargo test` or
//! `cargo bench` holds the main one's lock; cargo's own lock serializes
//! test processes):
//! - the Wasm test guests (`tests/plugins/wasm`, plus the wasm-redactor
//!   example), built as components into `<target>/wasm-guests`;
//! - the bench's dylibs (`tests/plugins/native`: the allow-all policy and
//!   the rust-policy and rust-tool examples), built for this machine into
//!   `<target>/native-guests`, so `cargo bench` needs no build step first.
#![allow(dead_code)] // each test or bench uses a different part

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The built component of the guest example `name` (e.g. `guest_hostile`).
pub fn guest(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        build(
            "wasm",
            "wasm-guests",
            Some("wasm32-wasip2"),
            "(is `rustup target add wasm32-wasip2` done?)",
        )
    });
    let path = dir.join(format!("{name}.wasm"));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// The built dylib of the native guest example `name` (e.g. `allow_all`).
pub fn native_guest(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| build("native", "native-guests", None, ""));
    let path = dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// Build the examples of the crate `tests/plugins/<krate>` in release, for
/// `triple` (this machine's when `None`), into `<target>/<target_dir>`;
/// the folder that holds them.
fn build(krate: &str, target_dir: &str, triple: Option<&str>, hint: &str) -> PathBuf {
    // The test executable is <target>/<profile>/deps/<name>.
    let exe = std::env::current_exe().expect("the test executable");
    let target = exe.ancestors().nth(3).expect("<target>").to_path_buf();
    let target_dir = target.join(target_dir);
    let manifest =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/plugins/{krate}/Cargo.toml"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["build", "--quiet", "--release", "--examples"]);
    if let Some(triple) = triple {
        command.args(["--target", triple]);
    }
    let status = command
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "building the {krate} guests failed {hint}"
    );
    match triple {
        Some(triple) => target_dir.join(triple).join("release/examples"),
        None => target_dir.join("release/examples"),
    }
}
