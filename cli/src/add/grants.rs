//! What `add` asks for, and the `plugin.toml` it writes.
//!
//! A package gets a grant only when it was asked for and given: the grants
//! its sources show it needs (`exec`, `network`), and every grant its own
//! `plugin.toml` writes for itself (files, environment, network, `exec`,
//! `unconfined`), shown as that file has them. `exec` is given by
//! `--allow-exec`, `network` by `--allow-network`, the rest by `--yes`; on
//! a terminal, what the flags do not give is asked for.

use super::unpack;
use super::GrantFlags;
use crate::output::escaped;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
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
    /// given), not in the package's own `plugin.toml`.
    inferred: bool,
}

impl Ask {
    /// A grant that the `plugin.toml` being written already holds, asked
    /// for because of `because`.
    pub fn written(grant: &str, because: &str) -> Ask {
        Ask {
            grant: grant.into(),
            because: because.into(),
            inferred: false,
        }
    }

    /// A grant the package needs, known from what it is rather than
    /// written in its own `plugin.toml`.
    pub fn inferred(grant: &str, because: &str) -> Ask {
        Ask {
            grant: grant.into(),
            because: because.into(),
            inferred: true,
        }
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

/// What to ask for: the package's own grants, then what its sources show
/// it needs beyond them.
pub fn asks(folder: &Path, own: Option<&(Manifest, toml::Table)>) -> Vec<Ask> {
    let mut asks: Vec<Ask> = own
        .map(|(manifest, _)| manifest.capabilities.granted())
        .unwrap_or_default()
        .into_iter()
        .map(|grant| Ask {
            grant,
            because: format!("its own {MANIFEST_FILE} grants it"),
            inferred: false,
        })
        .collect();
    for (grant, because) in needs(folder) {
        if !asks.iter().any(|a| Flag::of(&a.grant) == Flag::of(grant)) {
            asks.push(Ask {
                grant: grant.to_string(),
                because,
                inferred: true,
            });
        }
    }
    asks
}

/// What the package's own sources (not its dependencies) show it needs
/// (`exec` for `child_process`, `pi.exec(` or DSH's shell service;
/// `network` for `fetch(` and the HTTP modules):
/// each grant once, with the file and the sign that shows it.
fn needs(folder: &Path) -> Vec<(&'static str, String)> {
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
    let mut found: Vec<(&'static str, String)> = Vec::new();
    let mut files = Vec::new();
    sources(folder, &mut files);
    files.sort();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (grant, signs) in SIGNS {
            if found.iter().any(|(g, _)| *g == grant) {
                continue;
            }
            if let Some(sign) = signs.iter().find(|s| text.contains(*s)) {
                let shown = file.strip_prefix(folder).unwrap_or(&file);
                found.push((grant, format!("{} uses `{sign}`", shown.display())));
            }
        }
    }
    found.sort_by_key(|(grant, _)| *grant);
    found
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
    let inferred: Vec<&Ask> = asks.iter().filter(|a| a.inferred).collect();
    if !inferred.is_empty() {
        let capabilities = table
            .entry("capabilities")
            .or_insert_with(|| toml::Table::new().into());
        let toml::Value::Table(capabilities) = capabilities else {
            return Err(format!(
                "its {MANIFEST_FILE}'s `capabilities` is not a table"
            ));
        };
        for ask in &inferred {
            capabilities.insert(ask.grant.clone(), true.into());
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
