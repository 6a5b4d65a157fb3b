//! No library file of the workspace is over 600 lines: a file that grows
//! past that holds more than one concern, and is split by concern (the
//! design notes, "Layers"). Library files are the Rust, JavaScript,
//! TypeScript and Python sources a crate ships, with their unit tests;
//! test, bench and example files are not counted.

use std::path::{Path, PathBuf};

/// The most lines a library file may have.
const MAX_LINES: usize = 600;

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether `path` (relative to the workspace) is a library source file.
fn is_library_file(path: &Path) -> bool {
    let source = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("rs" | "js" | "mjs" | "ts" | "py")
    );
    let outside = path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some(
                "tests"
                    | "test"
                    | "benches"
                    | "examples"
                    | "docs"
                    | "target"
                    | "node_modules"
                    | "suite"
                    | ".git"
            )
        )
    });
    source && !outside
}

/// The library files under `dir`, recursively, relative to the workspace.
fn library_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        let relative = path.strip_prefix(workspace()).unwrap().to_path_buf();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() && is_library_file(&relative.join("x.rs")) {
            library_files(&path, out);
        } else if kind.is_file() && is_library_file(&relative) {
            out.push(relative);
        }
    }
}

#[test]
fn no_library_file_is_over_600_lines() {
    let mut files = Vec::new();
    for top in [
        "host",
        "cli",
        "contract",
        "sdk-rust",
        "sdk-python",
        "sdk-ts",
        "adapters",
    ] {
        library_files(&workspace().join(top), &mut files);
    }
    assert!(
        files.len() > 100,
        "found only {} library files",
        files.len()
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(workspace().join(file))
                .ok()?
                .lines()
                .count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn the_count_sees_sources_and_passes_over_tests() {
    assert!(is_library_file(Path::new("host/src/lib.rs")));
    assert!(is_library_file(Path::new("adapters/pi/js/fs-core.js")));
    assert!(is_library_file(Path::new(
        "host/src/engines/python/yohost.py"
    )));
    assert!(!is_library_file(Path::new(
        "host/tests/integration/layers.rs"
    )));
    assert!(!is_library_file(Path::new("adapters/pi/README.md")));
    assert!(!is_library_file(Path::new(
        "adapters/dsh/js/node_modules/x/index.js"
    )));
}
