//! The Wasm test guests (`tests/plugins/wasm`, plus the wasm-redactor
//! example), built as components once per process into
//! `<target>/wasm-guests` (a separate target dir: the outer `cargo test`
//! holds the main one's lock; cargo's own lock serializes test processes).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The built component of the guest example `name` (e.g. `guest_hostile`).
pub fn guest(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let path = BUILT.get_or_init(build).join(format!("{name}.wasm"));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

fn build() -> PathBuf {
    // The test executable is <target>/<profile>/deps/<name>.
    let exe = std::env::current_exe().expect("the test executable");
    let target = exe.ancestors().nth(3).expect("<target>").to_path_buf();
    let target_dir = target.join("wasm-guests");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/plugins/wasm/Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--examples",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "building the Wasm guests failed (is `rustup target add wasm32-wasip2` done?)"
    );
    target_dir.join("wasm32-wasip2/release/examples")
}
