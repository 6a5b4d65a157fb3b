//! npm, as `add` runs it: in the kernel sandbox (`tool`), so that it may
//! write only the stage and its cache, read the user's home (its
//! `.npmrc`) and the system, and start nothing it could not start there.
//! It never reads configuration that the package controls: the package's
//! `.npmrc` is removed before npm runs in its folder, a dependency from
//! anywhere but the registry refuses the package, and npm's own `git` is
//! a command that fails, so that a git dependency further down cannot run
//! one. Install scripts are never run.
//!
//! The sandbox lets npm connect to any host: reaching only the registry
//! needs a proxy the host does not have yet (docs/design.md, "What
//! enforces each grant").

use super::tool::Tool;
use crate::output::escaped;
use std::path::{Path, PathBuf};

/// The variables of the host's environment that npm gets besides the
/// sandbox's base ones and the network's (`tool::NETWORK_ENV`): where a
/// registry or certificates are.
const NPM_ENV: &[&str] = &[
    "NODE_EXTRA_CA_CERTS",
    "npm_config_registry",
    "npm_config_cache",
    "npm_config_userconfig",
];

/// What `npm pack` made.
pub struct Packed {
    /// The tarball's file name, in the stage.
    pub file: String,
    /// The package's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// npm's integrity hash of the tarball.
    pub integrity: Option<String>,
}

/// Fetch `spec` from the registry into `stage` with `npm pack`.
pub fn pack(spec: &str, stage: &Path) -> Result<Packed, String> {
    // npm would read a spec that starts with `-` as one of its options.
    if spec.is_empty() || spec.starts_with('-') {
        return Err(format!(
            "`{}` is not NAME[@VERSION] of the npm registry",
            escaped(spec)
        ));
    }
    let out = npm(
        &["pack", spec, "--json", "--pack-destination", "."],
        stage,
        stage,
    )?;
    let packed: serde_json::Value = serde_json::from_slice(&out)
        .map_err(|e| format!("npm pack gave no JSON for {}: {e}", escaped(spec)))?;
    let packed = &packed[0];
    let text = |key: &str| packed[key].as_str().map(str::to_string);
    let file = text("filename")
        .filter(|f| !f.contains('/') && !f.starts_with('.'))
        .ok_or_else(|| format!("npm pack named no file for {}", escaped(spec)))?;
    Ok(Packed {
        file,
        name: text("name").unwrap_or_else(|| spec.to_string()),
        version: text("version").unwrap_or_default(),
        integrity: text("integrity"),
    })
}

/// `npm install` the package's dependencies, without install scripts,
/// devDependencies or the package's own `.npmrc`, if it has any.
pub fn install_dependencies(folder: &Path, stage: &Path) -> Result<(), String> {
    let package = super::read_package(folder)?;
    let has = |key: &str| package[key].as_object().is_some_and(|d| !d.is_empty());
    if !super::DEPENDENCY_KEYS.iter().any(|key| has(key)) {
        return Ok(());
    }
    let npmrc = folder.join(".npmrc");
    if std::fs::symlink_metadata(&npmrc).is_ok() {
        std::fs::remove_file(&npmrc)
            .map_err(|e| format!("cannot remove {}: {e}", npmrc.display()))?;
        println!("  its .npmrc is not used: npm takes no configuration from the package");
    }
    println!("installing its dependencies with npm in the sandbox (no install scripts) …");
    npm(
        &[
            "install",
            "--omit=dev",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ],
        folder,
        stage,
    )
    .map(drop)
}

/// Whether npm would take the dependency `spec` from anywhere but the
/// registry: git (and the GitHub shorthand `user/repo`), a file, a link, a
/// URL or a workspace.
pub fn off_the_registry(spec: &str) -> bool {
    const SCHEMES: [&str; 12] = [
        "git:",
        "git+",
        "github:",
        "gitlab:",
        "bitbucket:",
        "gist:",
        "file:",
        "link:",
        "http:",
        "https:",
        "portal:",
        "workspace:",
    ];
    let spec = spec.trim();
    SCHEMES.iter().any(|s| spec.starts_with(s))
        || matches!(spec.chars().next(), Some('.' | '/' | '~'))
        || (spec.contains('/') && !spec.starts_with("npm:"))
}

/// Run npm with `args` in `cwd` in the sandbox, which may write `stage`
/// and npm's cache; its standard output.
fn npm(args: &[&str], cwd: &Path, stage: &Path) -> Result<Vec<u8>, String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cache = std::env::var_os("npm_config_cache")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".npm")))
        .unwrap_or_else(|| stage.join(".npm-cache"));
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot make npm's cache {}: {e}", cache.display()))?;
    let cache_flag = format!("--cache={}", cache.display());
    let mut all: Vec<&str> = args.to_vec();
    all.extend([cache_flag.as_str(), "--git=false", "--no-update-notifier"]);
    let tool = Tool {
        program: "npm",
        runtime: &["npm", "node"],
        reads: home.into_iter().filter(|h| h.is_dir()).collect(),
        writes: vec![cache],
        env: NPM_ENV,
    };
    tool.run(&all, cwd, stage)
}
