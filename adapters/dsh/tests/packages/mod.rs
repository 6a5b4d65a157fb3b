//! The published `@deepseek-ai/dsh-tool-*` packages the tests load, as
//! `.ci/run` installs them.
#![allow(dead_code)] // each test file uses a different part

use std::path::{Path, PathBuf};

/// The npm package folder of `@deepseek-ai/dsh-tool-<tool>`, installed by
/// `.ci/run` (`$YOHOST_DSH_PACKAGES`, else `<target>/tmp/dsh-packages`), or
/// `None` (with the reason printed) when it is absent here.
pub fn dsh_package(tool: &str) -> Option<PathBuf> {
    let root = std::env::var_os("YOHOST_DSH_PACKAGES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("dsh-packages"));
    let package = root.join(format!("dsh-tool-{tool}"));
    if package.join("node_modules").is_dir() {
        Some(package)
    } else {
        eprintln!(
            "skipped: {} is not installed (.ci/run installs it)",
            package.display()
        );
        None
    }
}

/// Copy the package folder `from` to `to` (symlinks kept as they are).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
