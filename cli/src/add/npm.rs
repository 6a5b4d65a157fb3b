//! npm, as `add` runs it: in the kernel sandbox that plugin processes run
//! in (`yohost::adapter::sandbox::ProcessSandbox::for_host_tool`), so that it may
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

use crate::output::escaped;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yohost::adapter::sandbox::ProcessSandbox;
use yohost::manifest::{Capabilities, Network};

/// The longest npm may take for one command: ten minutes.
const NPM_DEADLINE: Duration = Duration::from_secs(600);

/// The most bytes of npm's output that are kept, of each stream.
const OUTPUT_LIMIT: u64 = 4 << 20;

/// The variables of the host's environment that npm gets besides the
/// sandbox's base ones (where a registry, a proxy or certificates are).
const NPM_ENV: &[&str] = &[
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
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

/// Run npm with `args` in `cwd` in the sandbox, which may write `stage`,
/// saying every few seconds that it still works; its standard output.
fn npm(args: &[&str], cwd: &Path, stage: &Path) -> Result<Vec<u8>, String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cache = std::env::var_os("npm_config_cache")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".npm")))
        .unwrap_or_else(|| stage.join(".npm-cache"));
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot make npm's cache {}: {e}", cache.display()))?;
    let mut capabilities = Capabilities::default();
    capabilities.read = home.into_iter().filter(|h| h.is_dir()).collect();
    capabilities.write = vec![stage.to_path_buf(), cache.clone()];
    capabilities.env = NPM_ENV.iter().map(|v| v.to_string()).collect();
    capabilities.network = Network::Granted(true);
    capabilities.exec = true;
    let sandbox = ProcessSandbox::for_host_tool(stage, &capabilities)
        .map_err(|e| format!("npm cannot run in the sandbox here: {e}"))?;
    let mut command = sandbox.command("npm");
    let cache_flag = format!("--cache={}", cache.display());
    command
        .args(args)
        .args([cache_flag.as_str(), "--git=false", "--no-update-notifier"])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let slot = sandbox
        .reserve()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    let mut process = sandbox
        .spawn(slot, command, &runtime_folders())
        .map_err(|e| format!("cannot run npm: {e}"))?;
    let child = process.child();
    let stdout = child.stdout.take().map(read_bounded);
    let stderr = child.stderr.take().map(read_bounded);
    let started = Instant::now();
    let mut said = 0;
    while !process.has_exited() {
        let seconds = started.elapsed().as_secs();
        if started.elapsed() > NPM_DEADLINE {
            process.end();
            return Err(format!(
                "npm {} took more than {} minutes and was stopped",
                args[0],
                NPM_DEADLINE.as_secs() / 60
            ));
        }
        if seconds >= said + 5 {
            said = seconds;
            println!("  npm {} is still working ({seconds} s)", args[0]);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = process.end();
    let collect = |reader: Option<std::thread::JoinHandle<Vec<u8>>>| {
        reader.and_then(|r| r.join().ok()).unwrap_or_default()
    };
    let (out, err) = (collect(stdout), collect(stderr));
    if !status.is_some_and(|s| s.success()) {
        let err = String::from_utf8_lossy(&err);
        let last: Vec<&str> = err.trim().lines().rev().take(20).collect();
        let last: Vec<String> = last
            .into_iter()
            .rev()
            .map(|l| escaped(l).into_owned())
            .collect();
        return Err(format!(
            "npm {} failed: {}",
            args.join(" "),
            last.join("\n  ")
        ));
    }
    Ok(out)
}

/// Read `pipe` to its end on a thread of its own, keeping at most
/// [`OUTPUT_LIMIT`] bytes.
fn read_bounded(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut pipe = pipe;
        let _ = (&mut pipe).take(OUTPUT_LIMIT).read_to_end(&mut kept);
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        kept
    })
}

/// The folders of `npm` and `node` outside the system's, which the
/// sandbox must let npm read (an npm installed under `/opt`, say): the
/// folder above each one's real `bin` folder.
fn runtime_folders() -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["npm", "node"]
        .iter()
        .filter_map(|program| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
        .filter_map(|found| found.canonicalize().ok())
        .filter_map(|real| Some(real.parent()?.parent()?.to_path_buf()))
        .filter(|folder| folder.components().count() > 2)
        .collect()
}
