//! Plugin directories for the load bench and the load tests:
//! - many small plugins of every engine and pi, each a folder written from
//!   the templates `yohost new` starts a user from (`cli/templates/`): a
//!   policy whose `before_tool` denies `rm -rf`, with its `plugin.toml`;
//! - a copy of the repository's `examples/` whose build artifacts are
//!   libraries built for the caller, so it loads without a build step.
#![allow(dead_code)] // each test or bench uses a different part

use std::path::{Path, PathBuf};

const RUST_MANIFEST: &str = include_str!("../../../cli/templates/rust.plugin.toml");
const WASM_MANIFEST: &str = include_str!("../../../cli/templates/wasm.plugin.toml");
const TS_INDEX: &str = include_str!("../../../cli/templates/index.ts");
const TS_MANIFEST: &str = include_str!("../../../cli/templates/ts.plugin.toml");
const PYTHON_PLUGIN: &str = include_str!("../../../cli/templates/plugin.py");
const PYTHON_MANIFEST: &str = include_str!("../../../cli/templates/python.plugin.toml");
const PI_INDEX: &str = include_str!("../../../cli/templates/pi.index.ts");
const PI_MANIFEST: &str = include_str!("../../../cli/templates/pi.plugin.toml");

/// The kinds of generated plugin, in the order [`write_mixed`] takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Rust dylib (a copy of the built policy library).
    Dylib,
    /// A Wasm component (a copy of the built policy component).
    Wasm,
    /// TypeScript on the embedded engine.
    TypeScript,
    /// Python on the embedded interpreter.
    Python,
    /// A pi extension, through the pi adapter.
    Pi,
}

impl Kind {
    /// Every kind, in turn.
    pub const ALL: [Kind; 5] = [
        Kind::Dylib,
        Kind::Wasm,
        Kind::TypeScript,
        Kind::Python,
        Kind::Pi,
    ];

    fn label(self) -> &'static str {
        match self {
            Kind::Dylib => "dylib",
            Kind::Wasm => "wasm",
            Kind::TypeScript => "ts",
            Kind::Python => "python",
            Kind::Pi => "pi",
        }
    }
}

/// The built libraries the generated dylib and Wasm plugins are copies of:
/// each a policy with `before_tool`.
pub struct Libraries {
    /// A dylib plugin (e.g. the rust-policy example).
    pub dylib: PathBuf,
    /// A Wasm component (e.g. `guest_policy`).
    pub wasm: PathBuf,
}

/// Write `count` plugins into `dir`, the kinds of [`Kind::ALL`] in turn,
/// named `<kind>-<index>` (`dylib-0000`, `wasm-0001`, ...), and return
/// their names in file-name order. The dylib and Wasm plugins' libraries
/// are hard links to `libraries` (copies where a link cannot be made).
pub fn write_mixed(dir: &Path, count: usize, libraries: &Libraries) -> Vec<String> {
    let mut names: Vec<String> = (0..count)
        .map(|i| {
            let kind = Kind::ALL[i % Kind::ALL.len()];
            let name = format!("{}-{i:04}", kind.label());
            write_plugin(&dir.join(&name), &name, kind, libraries);
            name
        })
        .collect();
    names.sort();
    names
}

/// Write one plugin of `kind` named `name` as the folder `folder`.
pub fn write_plugin(folder: &Path, name: &str, kind: Kind, libraries: &Libraries) {
    std::fs::create_dir_all(folder).expect("the plugin folder is made");
    let fill = |template: &str, entry: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{entry}}", entry)
    };
    let write = |file: &str, text: String| {
        std::fs::write(folder.join(file), text).expect("the plugin file is written")
    };
    match kind {
        Kind::Dylib => {
            let file = format!("libpolicy{}", std::env::consts::DLL_SUFFIX);
            link_or_copy(&libraries.dylib, &folder.join(&file));
            write("plugin.toml", fill(RUST_MANIFEST, &file));
        }
        Kind::Wasm => {
            link_or_copy(&libraries.wasm, &folder.join("policy.wasm"));
            write("plugin.toml", fill(WASM_MANIFEST, "policy.wasm"));
        }
        Kind::TypeScript => {
            write("index.ts", fill(TS_INDEX, ""));
            write("plugin.toml", fill(TS_MANIFEST, ""));
        }
        Kind::Python => {
            write("plugin.py", fill(PYTHON_PLUGIN, ""));
            write("plugin.toml", fill(PYTHON_MANIFEST, ""));
        }
        Kind::Pi => {
            write("index.ts", fill(PI_INDEX, ""));
            write("plugin.toml", fill(PI_MANIFEST, ""));
        }
    }
}

fn link_or_copy(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).expect("the library is copied");
    }
}

/// Copy the repository's `examples/` into `to`. Each `entry` a manifest
/// points at a build artifact is pointed instead at the artifact of the
/// same file name in `built` (e.g. `libexample_policy.so`), by absolute
/// path.
pub fn copy_examples(to: &Path, built: &[PathBuf]) {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    copy_tree(&examples, to);
    for entry in std::fs::read_dir(to).expect("the copy is listed") {
        let manifest = entry.expect("an entry").path().join("plugin.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let text = text
            .lines()
            .map(|line| match line.strip_prefix("entry = ") {
                Some(value) => {
                    let value: String = value.trim_matches('"').into();
                    let file = Path::new(&value).file_name().expect("a file name");
                    match built.iter().find(|b| b.file_name() == Some(file)) {
                        Some(artifact) => format!("entry = {:?}", artifact.display().to_string()),
                        None => line.to_string(),
                    }
                }
                None => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&manifest, text).expect("the manifest is written");
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("the folder is made");
    for entry in std::fs::read_dir(from).expect("the folder is listed") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("the file is copied");
        }
    }
}

/// This process's resident memory, in bytes (Linux; `None` elsewhere).
pub fn resident_bytes() -> Option<u64> {
    resident_bytes_of("self")
}

/// The resident memory of process `pid` (a number, or `self`), in bytes
/// (Linux; `None` elsewhere, or when there is no such process).
pub fn resident_bytes_of(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
