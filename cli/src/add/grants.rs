//! What `add` asks for, and the `plugin.toml` it writes.
//!
//! A package gets a grant only when it was asked for and given: the grants
//! its sources show it needs (`exec`, `network`, and for a DSH plugin whose
//! `inject` requires the `fs` service, the working directory: `write`, or
//! `read` where the plugin directory is; and the state folders it keeps
//! under `~/.pi/`, `write`, made once granted: `state`), and every grant its own
//! `plugin.toml` writes for itself (files, environment, network, `exec`,
//! `unconfined`), shown as that file has them. `exec` is given by
//! `--allow-exec`, `network` by `--allow-network`, the rest by `--yes`; on
//! a terminal, what the flags do not give is asked for.

use super::unpack;
use super::GrantFlags;
use crate::output::escaped;
use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use yohost::manifest::{Manifest, MANIFEST_FILE};

/// The most bytes of a package's own `plugin.toml` that are read.
const MANIFEST_LIMIT: u64 = 256 << 10;

/// The flag that gives a grant without asking.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flag {
    Exec,
    Network,
    Yes,
}

impl Flag {
    fn of(grant: &str) -> Flag {
        match grant.split(' ').next() {
            Some("exec") => Flag::Exec,
            Some("network") => Flag::Network,
            _ => Flag::Yes,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Flag::Exec => "--allow-exec",
            Flag::Network => "--allow-network",
            Flag::Yes => "--yes",
        }
    }

    fn given(self, args: &GrantFlags) -> bool {
        match self {
            Flag::Exec => args.allow_exec,
            Flag::Network => args.allow_network,
            Flag::Yes => args.yes,
        }
    }
}

/// A grant `add` asks for: as `check` shows it (`exec`, `read data`), and
/// why.
pub struct Ask {
    grant: String,
    because: String,
    /// Found in the sources (and so written into `plugin.toml` once
    /// given), not in the package's own `plugin.toml`: the key of
    /// `[capabilities]` and what it gets.
    inferred: Option<(&'static str, Setting)>,
}

/// What an inferred grant sets in `[capabilities]`.
enum Setting {
    /// `KEY = true` (`exec`, `network`).
    On,
    /// A folder added to the list `KEY` (`write`).
    Folder(String),
    /// A state folder added to `write`, made (if missing) when granted.
    StateFolder(String),
}

impl Ask {
    /// A grant that the `plugin.toml` being written already holds, asked
    /// for because of `because`.
    pub fn written(grant: &str, because: &str) -> Ask {
        Ask {
            grant: grant.into(),
            because: because.into(),
            inferred: None,
        }
    }

    /// A grant `key` (`exec`, `network`) the package needs, known from
    /// what it is rather than written in its own `plugin.toml`.
    pub fn inferred(key: &'static str, because: &str) -> Ask {
        Ask {
            grant: key.into(),
            because: because.into(),
            inferred: Some((key, Setting::On)),
        }
    }

    /// The grant `key` (`read`, `write`) of `folder`, which the package
    /// needs, known from what it is.
    fn inferred_folder(key: &'static str, folder: String, because: String) -> Ask {
        Ask {
            grant: format!("{key} {folder}"),
            because,
            inferred: Some((key, Setting::Folder(folder))),
        }
    }

    /// The state folder `folder` (under the home folder), which the package
    /// writes: granted `write`, and made when granted.
    fn inferred_state(folder: String, because: String) -> Ask {
        Ask {
            grant: format!("write {folder}"),
            because,
            inferred: Some(("write", Setting::StateFolder(folder))),
        }
    }

    /// The key of `[capabilities]` the grant is under: its first word.
    fn key(&self) -> &str {
        self.grant.split(' ').next().unwrap_or_default()
    }
}

/// The package's own `plugin.toml`, parsed as the host will read it and as
/// a table to write back; `None` if it has none.
pub fn own_manifest(folder: &Path) -> Result<Option<(Manifest, toml::Table)>, String> {
    let path = folder.join(MANIFEST_FILE);
    let Some(text) = unpack::read_small(&path, MANIFEST_LIMIT)? else {
        return Ok(None);
    };
    let refuse = |e: String| {
        format!(
            "not added: its own {MANIFEST_FILE} is not valid: {}",
            escaped(&e)
        )
    };
    let manifest = Manifest::parse(&text).map_err(|e| refuse(e.to_string()))?;
    let table = text
        .parse::<toml::Table>()
        .map_err(|e| refuse(e.to_string()))?;
    Ok(Some((manifest, table)))
}

/// What to ask for the package in `folder`, to be added to the plugin
/// directory `dir`: its own grants, then what its sources show it needs
/// beyond them (`exec` or `network` once, whatever hosts its own
/// `plugin.toml` names; a folder unless it names the same grant).
pub fn asks(
    folder: &Path,
    own: Option<&(Manifest, toml::Table)>,
    dir: &Path,
) -> Result<Vec<Ask>, String> {
    let mut asks: Vec<Ask> = own
        .map(|(manifest, _)| manifest.capabilities.granted())
        .unwrap_or_default()
        .into_iter()
        .map(|grant| Ask::written(&grant, &format!("its own {MANIFEST_FILE} grants it")))
        .collect();
    for need in needs(folder, dir)? {
        let switch = matches!(need.inferred, Some((_, Setting::On)));
        if !asks
            .iter()
            .any(|a| a.grant == need.grant || (switch && a.key() == need.key()))
        {
            asks.push(need);
        }
    }
    Ok(asks)
}

/// What the package's own sources (not its dependencies) show it needs:
/// `exec` for `child_process`, `pi.exec(` or DSH's shell service;
/// `network` for `fetch(` and the HTTP modules; and for a DSH plugin whose
/// `inject` requires the `fs` service, whose tools read and write files in
/// the working directory, that folder (`working_folder`). Each grant once,
/// with the file and the sign that shows it.
fn needs(folder: &Path, dir: &Path) -> Result<Vec<Ask>, String> {
    const SIGNS: [(&str, &[&str]); 2] = [
        // DSH's shell service (`dsh-tool-bash`) starts processes.
        (
            "exec",
            &["child_process", "pi.exec(", "@deepseek-ai/dsh-shell"],
        ),
        (
            "network",
            &[
                "fetch(",
                "node:http",
                "node:https",
                "node:net",
                "WebSocket(",
            ],
        ),
    ];
    let mut found: Vec<Ask> = Vec::new();
    let mut files = Vec::new();
    sources(folder, &mut files);
    files.sort();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let shown = file.strip_prefix(folder).unwrap_or(&file).display();
        let has = |found: &[Ask], key: &str| found.iter().any(|a| a.key() == key);
        for (grant, signs) in SIGNS {
            if has(&found, grant) {
                continue;
            }
            if let Some(sign) = signs.iter().find(|s| text.contains(*s)) {
                found.push(Ask::inferred(grant, &format!("{shown} uses `{sign}`")));
            }
        }
        let services = yohost_adapter_dsh::required_services(&text);
        let service = |name: &str| services.iter().any(|s| s == name);
        if service("shell") && !has(&found, "exec") {
            let because = format!("{shown} injects DSH's `shell` service, which runs commands");
            found.push(Ask::inferred("exec", &because));
        }
        for relative in super::state::folders(&text) {
            let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
                continue;
            };
            let folder = PathBuf::from(home).join(&relative);
            let Some(folder) = folder.to_str().map(str::to_string) else {
                continue;
            };
            if found.iter().any(|a| a.grant == format!("write {folder}")) {
                continue;
            }
            let because = format!("{shown} keeps its state in ~/{relative} (made now if missing)");
            found.push(Ask::inferred_state(folder, because));
        }
        if service("fs") && !has(&found, "write") && !has(&found, "read") {
            let (key, cwd, only) = working_folder(dir)?;
            let because = format!(
                "{shown} injects DSH's `fs` service: its tools read and write files in the working directory{only}"
            );
            found.push(Ask::inferred_folder(key, cwd, because));
        }
    }
    found.sort_by(|a, b| a.grant.cmp(&b.grant));
    Ok(found)
}

/// The grant a DSH plugin's `fs` needs, which works in the working
/// directory: `write` of it, by its real path, or `read` (and why only
/// that) when it holds the plugin directory `dir` or lies in it, where the
/// host refuses a write grant (a file written there would load as a
/// plugin). An error when it is the root or the home folder, which no
/// plugin's tools should have all of.
fn working_folder(dir: &Path) -> Result<(&'static str, String, &'static str), String> {
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| format!("cannot resolve the working directory: {e}"))?;
    let home = std::env::var_os("HOME").and_then(|h| PathBuf::from(h).canonicalize().ok());
    if cwd.parent().is_none() || home.as_ref() == Some(&cwd) {
        return Err(format!(
            "not added: its tools read and write files in the working directory, and that is {}: run `yohost add` in the folder they should work in",
            cwd.display()
        ));
    }
    let folder = cwd.to_str().map(str::to_string).ok_or_else(|| {
        format!(
            "not added: the working directory {} is not UTF-8, so plugin.toml cannot name it",
            cwd.display()
        )
    })?;
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    if dir.starts_with(&cwd) || cwd.starts_with(&dir) {
        let only = ", but only to read: a plugin may not write where its plugin directory is (add it to a plugin directory outside this folder to let them write)";
        Ok(("read", folder, only))
    } else {
        Ok(("write", folder, ""))
    }
}

/// The JavaScript and TypeScript files of `folder`, outside `node_modules`.
fn sources(folder: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() && name != "node_modules" => sources(&path, out),
            Ok(kind) if kind.is_file() => {
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                if matches!(ext, "js" | "mjs" | "cjs" | "ts" | "mts" | "cts") {
                    out.push(path);
                }
            }
            _ => {}
        }
    }
}

/// Make the state folders of `asks` that are missing (after they were
/// granted), only the owner's, so that the grant that names each exists.
pub fn make_state_folders(asks: &[Ask]) -> Result<(), String> {
    for ask in asks {
        if let Some((_, Setting::StateFolder(folder))) = &ask.inferred {
            let path = Path::new(folder);
            if !path.exists() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(path)
                    .map_err(|e| format!("cannot make {folder}: {e}"))?;
                println!("made {} for it", escaped(folder));
            }
        }
    }
    Ok(())
}

/// Say what the package asks for and decide whether it gets it: every
/// grant by its flag, or a person's yes on a terminal.
pub fn decide(args: &GrantFlags, asks: &[Ask]) -> Result<(), String> {
    if asks.is_empty() {
        println!("it needs no grants");
        return Ok(());
    }
    println!("it needs:");
    for ask in asks {
        println!("  {}: {}", escaped(&ask.grant), escaped(&ask.because));
    }
    let mut missing: Vec<&str> = asks
        .iter()
        .map(|a| Flag::of(&a.grant))
        .filter(|flag| !flag.given(args))
        .map(Flag::name)
        .collect();
    missing.sort();
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !terminal {
        return Err(format!(
            "not added: off a terminal, {} must be given to grant what it needs",
            missing.join(" and ")
        ));
    }
    print!("grant these? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| e.to_string())?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err("not added: the grants were not given".into())
    }
}

/// The table of a package's `plugin.toml` before its grants: its own
/// (`own`), or else its name and ecosystem.
pub fn base_table(
    name: &str,
    ecosystem: Option<&str>,
    own: Option<(Manifest, toml::Table)>,
) -> toml::Table {
    match own {
        Some((_, table)) => table,
        None => {
            let mut table = toml::Table::new();
            table.insert("name".into(), name.into());
            if let Some(ecosystem) = ecosystem {
                table.insert("ecosystem".into(), ecosystem.into());
            }
            table
        }
    }
}

/// Write the plugin's `plugin.toml` through the toml crate: `table`, with
/// the granted inferred needs set, and comments naming the `yohost`
/// `command` that wrote it and why each grant is there.
pub fn write_manifest(
    folder: &Path,
    command: &str,
    mut table: toml::Table,
    asks: &[Ask],
) -> Result<(), String> {
    let inferred: Vec<&(&str, Setting)> = asks.iter().filter_map(|a| a.inferred.as_ref()).collect();
    if !inferred.is_empty() {
        let capabilities = table
            .entry("capabilities")
            .or_insert_with(|| toml::Table::new().into());
        let toml::Value::Table(capabilities) = capabilities else {
            return Err(format!(
                "its {MANIFEST_FILE}'s `capabilities` is not a table"
            ));
        };
        for (key, setting) in inferred {
            match setting {
                Setting::On => {
                    capabilities.insert(key.to_string(), true.into());
                }
                Setting::Folder(folder) | Setting::StateFolder(folder) => {
                    let list = capabilities
                        .entry(*key)
                        .or_insert_with(|| toml::Value::Array(Vec::new()));
                    let toml::Value::Array(list) = list else {
                        return Err(format!(
                            "its {MANIFEST_FILE}'s `capabilities.{key}` is not a list"
                        ));
                    };
                    let folder = toml::Value::from(folder.as_str());
                    if !list.contains(&folder) {
                        list.push(folder);
                    }
                }
            }
        }
    }
    // A comment line holds no line break: each is escaped away.
    let comment = |text: &str| escaped(text).into_owned();
    let mut text = format!("# Written by `yohost {}`.\n", comment(command));
    for ask in asks {
        text.push_str(&format!(
            "# {}: {}\n",
            comment(&ask.grant),
            comment(&ask.because)
        ));
    }
    text.push_str(&toml::to_string(&table).map_err(|e| e.to_string())?);
    unpack::replace_file(&folder.join(MANIFEST_FILE), &text)
}
