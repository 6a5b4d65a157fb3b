//! `yohost add mcp:npm:NAME[@VERSION]` and `mcp:pypi:NAME[==VERSION]`: an
//! MCP server from a registry, in a plugin folder of its own, pinned to
//! one version and locked.
//!
//! The folder's `mcp.json` starts the server as its README does (`npx -y
//! NAME@VERSION`, `uvx NAME@VERSION`), which the MCP adapter runs from the
//! copy installed beside it, so that `check` and `run` need no network
//! and no cache:
//! - npm: a `package.json` that depends on the one version, installed by
//!   npm in the sandbox without install scripts (`npm`);
//! - PyPI: a virtualenv `venv/`, into which pip in the sandbox installs
//!   wheels only, so that nothing of the package (a `setup.py`) runs.
//!
//! Its `plugin.toml` grants `exec`, which a process needs, and is asked
//! for as every grant of `add` is.

use super::tool::Tool;
use super::{grants, npm, Source};
use crate::output::escaped;
use std::path::{Path, PathBuf};

/// The variables of the host's environment that pip gets besides the
/// sandbox's base ones and the network's (`tool::NETWORK_ENV`): where an
/// index or certificates are.
const PIP_ENV: &[&str] = &[
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "PIP_CERT",
];

/// A server installed in the stage: the name of its folder and plugin,
/// and where it came from.
pub struct Installed {
    /// The plugin folder's name, which is also the server's.
    pub name: String,
    /// Its registry, name and version, for the lock.
    pub source: Source,
}

/// Install the server `spec` (what follows `mcp:`) into `folder`, a new
/// folder of the stage `stage`, after asking for the grants in `args`.
pub fn install(
    args: &super::GrantFlags,
    spec: &str,
    folder: &Path,
    stage: &Path,
) -> Result<Installed, String> {
    let asks = [grants::Ask::inferred(
        "exec",
        "an MCP server from a registry is a process",
    )];
    let (registry, package) = spec.split_once(':').unwrap_or(("", spec));
    if !matches!(registry, "npm" | "pypi") {
        return Err(format!(
            "`mcp:{}` is not mcp:npm:NAME[@VERSION] or mcp:pypi:NAME[==VERSION]",
            escaped(spec)
        ));
    }
    grants::decide(args, &asks)?;
    let (name, launch, source) = match registry {
        "npm" => npm_server(package, folder, stage)?,
        _ => pypi_server(package, folder, stage)?,
    };
    let servers = serde_json::json!({ "mcpServers": { &name: launch } });
    let text = serde_json::to_string_pretty(&servers).map_err(|e| e.to_string())?;
    super::unpack::replace_file(&folder.join("mcp.json"), &text)?;
    // An MCP server is named after its key in `mcp.json`, not in its
    // manifest.
    grants::write_manifest(
        folder,
        &format!("add mcp:{spec}"),
        toml::Table::new(),
        &asks,
    )?;
    Ok(Installed { name, source })
}

/// Install the package `spec` from `registry` (`npm` or `pypi`) into
/// `folder`, where an imported entry's launcher finds it: its source.
pub fn install_package(
    registry: &str,
    spec: &str,
    folder: &Path,
    stage: &Path,
) -> Result<Source, String> {
    let (_, _, source) = match registry {
        "npm" => npm_server(spec, folder, stage)?,
        _ => pypi_server(spec, folder, stage)?,
    };
    Ok(source)
}

/// Install the npm package `spec` into `folder`: its name, its `mcp.json`
/// entry, and its source.
fn npm_server(
    spec: &str,
    folder: &Path,
    stage: &Path,
) -> Result<(String, serde_json::Value, Source), String> {
    println!("fetching {} from npm …", escaped(spec));
    let packed = npm::pack(spec, stage)?;
    let _ = std::fs::remove_file(stage.join(&packed.file));
    let name = super::plugin_name(packed.name.rsplit('/').next().unwrap_or(&packed.name))?;
    std::fs::create_dir_all(folder).map_err(|e| e.to_string())?;
    let package = serde_json::json!({
        "name": format!("yohost-mcp-{name}"),
        "private": true,
        "dependencies": { &packed.name: &packed.version },
    });
    let text = serde_json::to_string_pretty(&package).map_err(|e| e.to_string())?;
    super::unpack::replace_file(&folder.join("package.json"), &text)?;
    npm::install_dependencies(folder, stage)?;
    let pinned = format!("{}@{}", packed.name, packed.version);
    let launch = serde_json::json!({ "command": "npx", "args": ["-y", pinned] });
    let source = Source::Npm {
        name: packed.name,
        version: packed.version,
        integrity: packed.integrity,
    };
    Ok((name, launch, source))
}

/// Install the PyPI package `spec` (`NAME` or `NAME==VERSION`) into a
/// virtualenv in `folder`: its name, its `mcp.json` entry, and its source.
fn pypi_server(
    spec: &str,
    folder: &Path,
    stage: &Path,
) -> Result<(String, serde_json::Value, Source), String> {
    let (package, version) = match spec.split_once("==") {
        Some((package, version)) => (package, Some(version)),
        None => (spec, None),
    };
    let valid = |text: &str| {
        !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '!'))
    };
    if !valid(package) || !version.is_none_or(valid) || package.starts_with(['-', '.']) {
        return Err(format!("`{}` is not NAME or NAME==VERSION", escaped(spec)));
    }
    let name = super::plugin_name(package)?;
    let (python, base) = python()?;
    let venv = folder.join(yohost_adapter_mcp::VENV);
    let venv_text = venv.display().to_string();
    std::fs::create_dir_all(folder).map_err(|e| e.to_string())?;
    let python_tool = Tool {
        program: &python,
        runtime: &[],
        reads: vec![base.clone()],
        writes: Vec::new(),
        env: &[],
    };
    println!("making a virtualenv for {} …", escaped(package));
    // Copies, not links: a locked load copies regular files only.
    python_tool.run(&["-m", "venv", "--copies", &venv_text], folder, stage)?;
    let cache = pip_cache(stage);
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot make pip's cache {}: {e}", cache.display()))?;
    let pip = venv.join("bin/python").display().to_string();
    let pip_tool = Tool {
        program: &pip,
        runtime: &[],
        reads: vec![base],
        writes: vec![cache.clone()],
        env: PIP_ENV,
    };
    println!(
        "installing {} from PyPI with pip in the sandbox (wheels only) …",
        escaped(spec)
    );
    let cache_flag = format!("--cache-dir={}", cache.display());
    pip_tool.run(
        &[
            "-m",
            "pip",
            "install",
            "--only-binary=:all:",
            "--no-input",
            "--disable-pip-version-check",
            "--quiet",
            &cache_flag,
            spec,
        ],
        folder,
        stage,
    )?;
    let installed = yohost_adapter_mcp::installed_version(&venv, package)
        .ok_or_else(|| format!("pip installed no {} into the virtualenv", escaped(package)))?;
    let program = program_of(&venv, package)?;
    let pinned = format!("{package}=={installed}");
    let args = if program == package {
        serde_json::json!([format!("{package}@{installed}")])
    } else {
        serde_json::json!(["--from", pinned, program])
    };
    let launch = serde_json::json!({ "command": "uvx", "args": args });
    let source = Source::Pypi {
        name: package.to_string(),
        version: installed,
    };
    Ok((name, launch, source))
}

/// The program the package installed into the virtualenv's `bin`: the one
/// named as the package, or else its only console script.
fn program_of(venv: &Path, package: &str) -> Result<String, String> {
    if venv.join("bin").join(package).is_file() {
        return Ok(package.to_string());
    }
    let scripts = yohost_adapter_mcp::console_scripts(venv, package);
    match scripts.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "{} installs no program to start the server with",
            escaped(package)
        )),
        many => Err(format!(
            "{} installs several programs ({}): which one starts the server is not known",
            escaped(package),
            escaped(&many.join(", "))
        )),
    }
}

/// The Python that makes the virtualenv (the one `python3` on the PATH
/// runs, pyenv's shims resolved) and the installation it is part of.
fn python() -> Result<(String, PathBuf), String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; print(sys.executable); print(sys.base_prefix)",
        ])
        .output()
        .map_err(|e| format!("a PyPI server needs python3 on the PATH: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    match (out.status.success(), lines.next(), lines.next()) {
        (true, Some(executable), Some(base)) => Ok((executable.into(), PathBuf::from(base))),
        _ => Err("python3 did not say where it is installed".into()),
    }
}

/// pip's cache: `$PIP_CACHE_DIR`, `$XDG_CACHE_HOME/pip`, `~/.cache/pip`,
/// or one in the stage.
fn pip_cache(stage: &Path) -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("PIP_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("pip")))
        .or_else(|| env("HOME").map(|d| d.join(".cache/pip")))
        .unwrap_or_else(|| stage.join(".pip-cache"))
}
