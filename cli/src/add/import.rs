//! `yohost import FILE [--to DIR]`: every MCP server that another client's
//! file lists (Claude Desktop's, Cursor's, VS Code's, Zed's, Claude
//! Code's `.mcp.json`; JSONC), each into a plugin folder of its own, named
//! after its key.
//!
//! Each folder's `mcp.json` holds the entry as the file has it. Its
//! `plugin.toml` grants what the entry shows it needs, asked for as `add`
//! asks: `exec` for a `command`, reading each existing folder its `args`
//! name by an absolute path (the folders a filesystem or git server is
//! given; `write` stays the user's to grant), the `url`'s host under
//! `network`, and the environment variables its strings name (`${VAR}`,
//! `${env:VAR}`). A
//! server started by a launcher (`npx -y NAME`, `uvx NAME`) gets its
//! package installed beside it, as `add mcp:npm:` and `mcp:pypi:` install
//! one. Each folder is locked. A server that cannot be imported (its name
//! is taken, a grant is not given, its package does not install) is named
//! with the reason, and the others are still imported.

use super::grants::{self, Ask};
use super::{mcp, GrantFlags, Source};
use crate::output::escaped;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `yohost import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// Another MCP client's configuration file.
    file: PathBuf,
    /// The plugin directory.
    #[arg(long, default_value = "plugins")]
    to: PathBuf,
    #[command(flatten)]
    grants: GrantFlags,
}

/// The most bytes of a client's file that are read.
const FILE_LIMIT: u64 = 4 << 20;

/// Import every server `args.file` lists into `args.to`.
pub async fn import(args: ImportArgs) -> Result<ExitCode, String> {
    crate::output::init_stderr_logs();
    let text = super::unpack::read_small(&args.file, FILE_LIMIT)?
        .ok_or_else(|| format!("{} does not exist", args.file.display()))?;
    let servers = yohost_adapter_mcp::listed_servers(&text)
        .map_err(|e| format!("{}: {}", args.file.display(), escaped(&e)))?;
    if servers.is_empty() {
        return Err(format!("{} lists no server to import", args.file.display()));
    }
    std::fs::create_dir_all(&args.to)
        .map_err(|e| format!("cannot make {}: {e}", args.to.display()))?;
    let file = std::path::absolute(&args.file).map_err(|e| e.to_string())?;
    let (mut refused, mut failed) = (0, 0);
    for (name, entry) in &servers {
        println!("importing {} …", escaped(name));
        let imported = match import_one(&args, &file, name, entry) {
            Ok((folder, source, _stage)) => {
                super::place(&args.to, &folder, name, &source, "imported").await
            }
            Err(e) => Err(e),
        };
        match imported {
            Ok(code) if code == ExitCode::SUCCESS => {}
            Ok(_) => refused += 1,
            Err(e) => {
                println!("  {} is not imported: {}", escaped(name), escaped(&e));
                failed += 1;
            }
        }
    }
    println!(
        "imported {} of {} servers into {}{}",
        servers.len() - failed,
        servers.len(),
        args.to.display(),
        match refused {
            0 => String::new(),
            n => format!("; {n} of them do not load yet (their lines above say why)"),
        }
    );
    Ok(if refused + failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Make the plugin folder of the server `name` in a stage of `args.to`:
/// the folder, where it came from, and the stage, which lives until the
/// folder is placed.
fn import_one(
    args: &ImportArgs,
    file: &Path,
    name: &str,
    entry: &serde_json::Value,
) -> Result<(PathBuf, Source, tempfile::TempDir), String> {
    super::plugin_name(name)?;
    super::vacant(&args.to, name)?;
    let (table, asks) = needs(entry)?;
    grants::decide(&args.grants, &asks)?;
    let stage = tempfile::Builder::new()
        .prefix(".yohost-add-")
        .tempdir_in(&args.to)
        .map_err(|e| format!("cannot make a folder in {}: {e}", args.to.display()))?;
    let stage_path = std::path::absolute(stage.path()).map_err(|e| e.to_string())?;
    let folder = stage_path.join("server");
    std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
    let mut source = Source::Path(file.to_path_buf());
    if let Some(launched) = launched(entry) {
        let spec = match (&launched.version, launched.registry) {
            (Some(version), "npm") => format!("{}@{version}", launched.package),
            (Some(version), _) => format!("{}=={version}", launched.package),
            (None, _) => launched.package.clone(),
        };
        source = mcp::install_package(launched.registry, &spec, &folder, &stage_path)?;
    }
    let servers = serde_json::json!({ "mcpServers": { name: entry } });
    let text = serde_json::to_string_pretty(&servers).map_err(|e| e.to_string())?;
    super::unpack::replace_file(&folder.join("mcp.json"), &text)?;
    let command = format!("import {}", file.display());
    grants::write_manifest(&folder, &command, table, &asks)?;
    Ok((folder, source, stage))
}

/// The package the entry's launcher fetches, if it has one.
fn launched(entry: &serde_json::Value) -> Option<yohost_adapter_mcp::LaunchedPackage> {
    let command = entry["command"].as_str()?;
    let args: Vec<String> = entry["args"]
        .as_array()
        .map(|args| {
            args.iter()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    yohost_adapter_mcp::launched_package(command, &args)
}

/// The `[capabilities]` the entry needs, as a `plugin.toml` table, and
/// each grant with why.
fn needs(entry: &serde_json::Value) -> Result<(toml::Table, Vec<Ask>), String> {
    let mut capabilities = toml::Table::new();
    let mut asks = Vec::new();
    if entry.get("command").is_some_and(|c| !c.is_null()) {
        capabilities.insert("exec".into(), true.into());
        asks.push(Ask::written("exec", "the server is a process"));
    }
    if let Some(url) = entry["url"].as_str() {
        let host = yohost_adapter_mcp::url_host(url).ok_or_else(|| {
            format!(
                "its `url` {} is not an http:// or https:// URL",
                escaped(url)
            )
        })?;
        capabilities.insert("network".into(), vec![host.clone()].into());
        asks.push(Ask::written(
            &format!("network {host}"),
            "the server is reached there",
        ));
    }
    let folders: Vec<String> = entry["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str())
        .filter(|a| a.starts_with('/') && Path::new(a).is_dir())
        .map(str::to_string)
        .collect();
    for folder in &folders {
        asks.push(Ask::written(
            &format!("read {folder}"),
            "the entry gives the server this folder (grant `write` by hand if it should change it)",
        ));
    }
    if !folders.is_empty() {
        capabilities.insert("read".into(), folders.into());
    }
    let variables = yohost_adapter_mcp::variables(entry);
    for variable in &variables {
        asks.push(Ask::written(
            &format!("env {variable}"),
            "the entry reads it as `${VAR}`",
        ));
    }
    if !variables.is_empty() {
        capabilities.insert("env".into(), variables.into());
    }
    let mut table = toml::Table::new();
    table.insert("capabilities".into(), capabilities.into());
    Ok((table, asks))
}
