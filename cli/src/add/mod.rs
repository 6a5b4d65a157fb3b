//! `yohost add SPEC [--to DIR]` and `yohost remove NAME [--from DIR]`.
//!
//! `add` puts a package into a plugin directory the way its adapter needs
//! it, and treats the package as hostile input: nothing it holds runs, and
//! nothing it says reaches the terminal unescaped.
//!
//! - The package is fetched (`npm:NAME[@VERSION]` with `npm pack`), or
//!   unpacked (a `.tgz`), or copied (a folder, without its `node_modules`
//!   and `.git`) into a hidden folder of the plugin directory (the host
//!   passes over dot folders): regular files and folders only, with modes
//!   of its own choosing, within bounds of bytes and files (`unpack`).
//! - Its `devDependencies` are dropped (they often name unpublished
//!   packages), pi's own packages (`@earendil-works/*`) are pinned to the pi
//!   the adapter follows, and a dependency from anywhere but the registry
//!   (git, a file, a link, a URL) refuses it.
//! - Its dependencies are installed by npm in the kernel sandbox, without
//!   install scripts and without the package's own npm configuration
//!   (`npm`).
//! - What it needs is printed and asked for (`grants`): the grants its
//!   sources show it needs (`exec` for `child_process`, `pi.exec` or DSH's
//!   `shell` service, `network` for `fetch` or the HTTP modules, the working
//!   directory for DSH's `fs` service), and every grant its own
//!   `plugin.toml` writes for itself. The `plugin.toml` is then written
//!   through the toml crate with what was granted.
//! - The folder is moved into place only when it is complete; a failed
//!   `add` leaves nothing behind. It ends with the plugin's `check` line.

mod grants;
mod import;
mod mcp;
mod npm;
mod state;
mod tool;
mod unpack;

pub use import::{import, ImportArgs};

use crate::output::{escaped, escaped_lines};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `yohost add`.
#[derive(clap::Args)]
pub struct AddArgs {
    /// What to add: `npm:NAME[@VERSION]`, a package's `.tgz`, a folder, or
    /// an MCP server from a registry: `mcp:npm:NAME[@VERSION]`,
    /// `mcp:pypi:NAME[==VERSION]`.
    spec: String,
    /// The plugin directory.
    #[arg(long, default_value = "plugins")]
    to: PathBuf,
    #[command(flatten)]
    grants: GrantFlags,
}

/// How `add` and `import` are given grants without asking.
#[derive(clap::Args)]
pub struct GrantFlags {
    /// Grant the file and environment grants that the package's own
    /// `plugin.toml` (or the imported entry) asks for, without asking; with
    /// `--allow-exec` and `--allow-network` as it needs them, nothing is
    /// asked.
    #[arg(long, short)]
    yes: bool,
    /// Grant `exec` (starting processes) if the package needs it; off a
    /// terminal, a package that needs it is not added without this.
    #[arg(long)]
    allow_exec: bool,
    /// Grant `network` if the package needs it; off a terminal, a package
    /// that needs it is not added without this.
    #[arg(long)]
    allow_network: bool,
}

/// Arguments of `yohost remove`.
#[derive(clap::Args)]
pub struct RemoveArgs {
    /// The plugin's name (its folder in the directory).
    name: String,
    /// The plugin directory.
    #[arg(long, default_value = "plugins")]
    from: PathBuf,
}

/// Where a package came from, as the lock file records it.
pub enum Source {
    /// The npm registry: the package's name, version and integrity.
    Npm {
        /// The package's name.
        name: String,
        /// Its version.
        version: String,
        /// npm's integrity hash of the tarball.
        integrity: Option<String>,
    },
    /// PyPI: the distribution's name and version.
    Pypi {
        /// The distribution's name.
        name: String,
        /// Its version.
        version: String,
    },
    /// A folder or a `.tgz`, by its absolute path.
    Path(PathBuf),
}

/// Add the package `args.spec` to `args.to`.
pub async fn add(args: AddArgs) -> Result<ExitCode, String> {
    crate::output::init_stderr_logs();
    std::fs::create_dir_all(&args.to)
        .map_err(|e| format!("cannot make {}: {e}", args.to.display()))?;
    let stage = tempfile::Builder::new()
        .prefix(".yohost-add-")
        .tempdir_in(&args.to)
        .map_err(|e| format!("cannot make a folder in {}: {e}", args.to.display()))?;
    let stage_path = std::path::absolute(stage.path()).map_err(|e| e.to_string())?;
    if let Some(server) = args.spec.strip_prefix("mcp:") {
        let folder = stage_path.join("server");
        let installed = mcp::install(&args.grants, server, &folder, &stage_path)?;
        return place(
            &args.to,
            &folder,
            &installed.name,
            &installed.source,
            "added",
        )
        .await;
    }
    let (package, source, unpacked) = fetch(&args.spec, &stage_path)?;
    for skipped in unpacked.skipped() {
        println!("  left out {skipped}: only regular files and folders are taken");
    }
    let manifest = read_package(&package)?;
    let name = folder_name(&manifest, &args.spec)?;
    vacant(&args.to, &name)?;
    let own = grants::own_manifest(&package)?;
    let asks = grants::asks(&package, own.as_ref(), &args.to)?;
    grants::decide(&args.grants, &asks)?;
    grants::make_state_folders(&asks)?;
    let ecosystem = prepare(&package, manifest)?;
    npm::install_dependencies(&package, &stage_path)?;
    let table = grants::base_table(&name, ecosystem, own);
    grants::write_manifest(&package, &format!("add {}", args.spec), table, &asks)?;
    place(&args.to, &package, &name, &source, "added").await
}

/// An error unless `dir` has no `name` yet.
fn vacant(dir: &Path, name: &str) -> Result<(), String> {
    if dir.join(name).exists() {
        return Err(format!(
            "{} already holds `{name}`: `yohost remove {name}` first",
            dir.display()
        ));
    }
    Ok(())
}

/// Move the complete plugin `folder` into `dir` as `name`, lock it as
/// coming from `source`, say it was `done` (`added`), and print its
/// `check` line.
async fn place(
    dir: &Path,
    folder: &Path,
    name: &str,
    source: &Source,
    done: &str,
) -> Result<ExitCode, String> {
    vacant(dir, name)?;
    let target = dir.join(name);
    let hashing = crate::progress::Step::start(format!(
        "hashing {} for yohost.lock",
        escaped(&target.display().to_string())
    ));
    std::fs::rename(folder, &target)
        .map_err(|e| format!("cannot move the package to {}: {e}", target.display()))?;
    if let Err(e) = crate::lock::record(dir, name, source) {
        let _ = std::fs::remove_dir_all(&target);
        return Err(e);
    }
    drop(hashing);
    println!("{done} {name} to {}", dir.display());
    check_line(dir, name).await
}

/// Remove the plugin `args.name` and its lock entry: its folder, or its
/// file for a single-file plugin, found by the name the host gives it.
pub fn remove(args: RemoveArgs) -> Result<ExitCode, String> {
    if args.name.is_empty() || args.name.starts_with('.') || args.name.contains(['/', '\\']) {
        return Err(format!("`{}` is not a plugin's name", escaped(&args.name)));
    }
    let found = crate::adapter_table()
        .scan(&args.from)
        .map_err(|e| format!("cannot read {}: {e}", args.from.display()))?;
    let root = found.into_iter().find_map(|found| match found {
        yohost::adapter::Found::Plugin(candidate) if candidate.name == args.name => {
            Some(candidate.root)
        }
        _ => None,
    });
    // A folder named so is removed even when it no longer loads as a plugin.
    let target = root
        .filter(|root| root.parent() == Some(args.from.as_path()))
        .or_else(|| Some(args.from.join(&args.name)).filter(|folder| folder.is_dir()))
        .ok_or_else(|| {
            format!(
                "{} has no plugin `{}`",
                args.from.display(),
                escaped(&args.name)
            )
        })?;
    let kind = std::fs::symlink_metadata(&target)
        .map_err(|e| format!("cannot remove {}: {e}", target.display()))?;
    let removed = if kind.is_dir() {
        std::fs::remove_dir_all(&target)
    } else {
        std::fs::remove_file(&target)
    };
    removed.map_err(|e| format!("cannot remove {}: {e}", target.display()))?;
    crate::lock::forget(&args.from, &args.name)?;
    println!("removed {} from {}", args.name, args.from.display());
    Ok(ExitCode::SUCCESS)
}

/// Bring the package into `stage`: its folder there, where it came from,
/// and what was left out of it.
fn fetch(spec: &str, stage: &Path) -> Result<(PathBuf, Source, unpack::Unpacked), String> {
    let folder = stage.join("package");
    if let Some(npm_spec) = spec.strip_prefix("npm:") {
        println!("fetching {} from npm …", escaped(npm_spec));
        let packed = npm::pack(npm_spec, stage)?;
        let unpacked = unpack::untar(&stage.join(&packed.file), &folder)?;
        let source = Source::Npm {
            name: packed.name,
            version: packed.version,
            integrity: packed.integrity,
        };
        return Ok((folder, source, unpacked));
    }
    let path = std::path::absolute(spec).map_err(|e| format!("cannot resolve {spec}: {e}"))?;
    let kind = std::fs::metadata(&path).map(|m| m.file_type());
    if kind.as_ref().is_ok_and(|k| k.is_dir()) {
        let unpacked = unpack::copy_folder(&path, &folder)?;
        Ok((folder, Source::Path(path), unpacked))
    } else if kind.is_ok_and(|k| k.is_file())
        && (spec.ends_with(".tgz") || spec.ends_with(".tar.gz"))
    {
        let unpacked = unpack::untar(&path, &folder)?;
        Ok((folder, Source::Path(path), unpacked))
    } else {
        Err(format!(
            "`{}` is not npm:NAME[@VERSION], a folder or a .tgz",
            escaped(spec)
        ))
    }
}

/// The most bytes of a `package.json` that are read.
const PACKAGE_JSON_LIMIT: u64 = 4 << 20;

/// The package's `package.json`, or an empty object for a folder without one.
fn read_package(folder: &Path) -> Result<serde_json::Value, String> {
    let path = folder.join("package.json");
    match unpack::read_small(&path, PACKAGE_JSON_LIMIT) {
        Ok(Some(text)) => serde_json::from_str(&text)
            .map_err(|e| format!("{}: {}", path.display(), escaped(&e.to_string()))),
        Ok(None) => Ok(serde_json::json!({})),
        Err(e) => Err(e),
    }
}

/// The plugin's folder name: the package's name without its scope, else the
/// spec's last path component.
fn folder_name(package: &serde_json::Value, spec: &str) -> Result<String, String> {
    let from_spec = || {
        Path::new(spec.trim_end_matches('/'))
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".tgz").to_string())
    };
    let name = package["name"]
        .as_str()
        .map(|n| n.rsplit('/').next().unwrap_or(n).to_string())
        .or_else(from_spec)
        .unwrap_or_default();
    plugin_name(&name)
}

/// `name` as a plugin folder's name: an error unless it is one.
fn plugin_name(name: &str) -> Result<String, String> {
    let valid = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(name.to_string())
    } else {
        Err(format!(
            "cannot name a plugin folder after `{}`",
            escaped(name)
        ))
    }
}

/// The keys of `package.json` whose packages npm installs.
const DEPENDENCY_KEYS: [&str; 3] = ["dependencies", "optionalDependencies", "peerDependencies"];

/// Make the package's `package.json` what the adapter needs: no
/// `devDependencies`, and pi's own packages at the pi the adapter follows.
/// The package's ecosystem, if it is pi's or DSH's. A dependency that npm
/// would fetch from anywhere but the registry refuses the package.
fn prepare(folder: &Path, mut package: serde_json::Value) -> Result<Option<&'static str>, String> {
    let Some(object) = package.as_object_mut() else {
        return Ok(None);
    };
    let mut changed = object.remove("devDependencies").is_some();
    let mut ecosystem = object.contains_key("pi").then_some("pi");
    for key in DEPENDENCY_KEYS {
        let Some(deps) = object.get_mut(key).and_then(|d| d.as_object_mut()) else {
            continue;
        };
        for (name, version) in deps.iter_mut() {
            if let Some(spec) = version.as_str().filter(|s| npm::off_the_registry(s)) {
                return Err(format!(
                    "not added: its {key} take {} from `{}`, not from the npm registry; only registry packages are installed",
                    escaped(name),
                    escaped(spec)
                ));
            }
            if name.starts_with("@earendil-works/") {
                ecosystem = Some("pi");
                if version != yohost_adapter_pi::PI_VERSION {
                    *version = yohost_adapter_pi::PI_VERSION.into();
                    changed = true;
                }
            } else if name.starts_with("@deepseek-ai/dsh") && ecosystem.is_none() {
                ecosystem = Some("dsh");
            }
        }
    }
    if changed {
        let text = serde_json::to_string_pretty(&package).map_err(|e| e.to_string())?;
        unpack::replace_file(&folder.join("package.json"), &text)?;
        // Its lock names what was dropped or pinned otherwise.
        let _ = std::fs::remove_file(folder.join("package-lock.json"));
    }
    Ok(ecosystem)
}

/// Print the plugin's line of `yohost check`; exit 1 if it is refused.
async fn check_line(dir: &Path, name: &str) -> Result<ExitCode, String> {
    let host = crate::open_host(dir, true, false, None)?;
    let report = host.report().await;
    let plugin = report
        .iter()
        .find(|p| p.name == name || p.file.file_name().is_some_and(|f| f == name))
        .ok_or_else(|| format!("{name} is not among the plugins of {}", dir.display()))?;
    println!("{}", escaped_lines(&plugin.to_string()));
    Ok(match plugin.status {
        yohost::Status::Loaded => ExitCode::SUCCESS,
        yohost::Status::Refused => ExitCode::FAILURE,
    })
}
