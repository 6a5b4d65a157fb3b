//! Which entries of a plugin directory are MCP configurations, and their
//! servers as candidates.
//!
//! A `*.mcp.json` file, Claude Code's `.mcp.json`, Claude Desktop's
//! `claude_desktop_config.json`, or a folder with an `mcp.json` (Cursor's
//! `.cursor/` and VS Code's `.vscode/` among them), listing servers as any
//! of those clients does ([`crate::config::SERVER_LISTS`]): each server is
//! a plugin of its own, named after its key, with the folder's
//! `plugin.toml` as its manifest (or that manifest's `[servers.NAME]`
//! table, when it has one). A server marked `"disabled": true` is passed
//! over. The rest of a server's entry is read when it loads
//! ([`crate::config`]).

use crate::config::{disabled, parse_file, servers, SERVER_LISTS};
use crate::{ECOSYSTEM, ENGINE};
use std::path::{Path, PathBuf};
use yohost::adapter::limits::MAX_SOURCE_BYTES;
use yohost::adapter::source::read_text;
use yohost::adapter::{folder_fingerprint, stat, Candidate, Found, LoadError};
use yohost::manifest::{Manifest, MANIFEST_FILE};

/// The name of a folder's MCP configuration file.
const MCP_FILE: &str = "mcp.json";

/// How the name of an MCP configuration file in the plugin directory ends.
const MCP_SUFFIX: &str = ".mcp.json";

/// The names of other clients' configuration files that may be dropped in
/// as they are: Claude Code's project file and Claude Desktop's.
const CLIENT_FILES: [&str; 2] = [".mcp.json", "claude_desktop_config.json"];

/// The servers of an entry of the plugin directory, if it is an MCP
/// configuration: each a candidate, in the order of their names, or the
/// entry refused as a whole when its file cannot be read or is not in the
/// `mcpServers` format.
pub(crate) fn discover(entry: &Path) -> Option<Vec<Found>> {
    let file = mcp_file(entry)?;
    let name = entry.file_name()?.to_string_lossy();
    let name = name
        .strip_suffix(MCP_SUFFIX)
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name)
        .trim_start_matches('.')
        .to_string();
    Some(match candidates(entry, &file) {
        Ok(found) => found,
        Err(reason) => vec![Found::Refused {
            name,
            file: entry.to_path_buf(),
            reason,
        }],
    })
}

/// The MCP configuration file of a directory entry, if it is an MCP one: a
/// `*.mcp.json` file, another client's file, or a folder's `mcp.json`.
fn mcp_file(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    if path.is_dir() {
        let file = path.join(MCP_FILE);
        file.is_file().then_some(file)
    } else {
        let ours = name.len() > MCP_SUFFIX.len() && name.ends_with(MCP_SUFFIX);
        (ours || CLIENT_FILES.contains(&name)).then(|| path.to_path_buf())
    }
}

fn candidates(root: &Path, file: &Path) -> Result<Vec<Found>, LoadError> {
    let invalid = |message: String| LoadError::Invalid {
        path: file.to_path_buf(),
        message,
    };
    let text = read_text(file, MAX_SOURCE_BYTES).map_err(|problem| LoadError::Unreadable {
        path: file.to_path_buf(),
        problem,
    })?;
    let config = parse_file(&text).map_err(invalid)?;
    const SHAPE: &str =
        r#"the common format is {"mcpServers": {"NAME": {"command": "...", "args": [...]}}}"#;
    let lists = SERVER_LISTS.map(|key| format!("`{key}`")).join(", ");
    let listed = servers(&config)
        .ok_or_else(|| invalid(format!("lists no servers under any of {lists}: {SHAPE}")))?;
    if listed.is_empty() {
        return Err(invalid(format!("names no server: {SHAPE}")));
    }
    // A disabled server is passed over, as its client does.
    let servers: serde_json::Map<String, serde_json::Value> = listed
        .iter()
        .filter(|(_, entry)| !disabled(entry))
        .map(|(key, entry)| (key.clone(), entry.clone()))
        .collect();
    let manifest_path = root.join(MANIFEST_FILE);
    let manifest = if root.is_dir() {
        Manifest::read(&manifest_path).map_err(|problem| LoadError::Manifest {
            path: manifest_path.clone(),
            problem,
        })?
    } else {
        Manifest::default()
    };
    if let Some(unknown) = manifest.servers.keys().find(|k| !listed.contains_key(*k)) {
        return Err(LoadError::Invalid {
            path: manifest_path,
            message: format!("[servers.{unknown}] names no server of {}", file.display()),
        });
    }
    let fingerprint = if root.is_dir() {
        folder_fingerprint(root, &manifest)
    } else {
        vec![stat(root)]
    };
    // In the order of their names, whatever order the file lists them in
    // (and whether or not this build's JSON maps keep it).
    let mut keys: Vec<&String> = servers.keys().collect();
    keys.sort();
    Ok(keys
        .into_iter()
        .map(|key| {
            let server = || {
                let mut own = match manifest.servers.get(key) {
                    Some(server) => server.clone(),
                    None => {
                        let mut shared = manifest.clone();
                        shared.servers.clear();
                        shared
                    }
                };
                if own.name.is_some() {
                    return Err(LoadError::Invalid {
                        path: manifest_path.clone(),
                        message: format!("an MCP server is named after its key in `mcpServers` (`{key}`); remove `name`"),
                    });
                }
                match own.ecosystem.replace(ECOSYSTEM) {
                    Some(other) if other != ECOSYSTEM => {
                        return Err(LoadError::Invalid {
                            path: manifest_path.clone(),
                            message: format!("`ecosystem = \"{}\"` does not apply to the MCP server `{key}`", other.as_str()),
                        })
                    }
                    _ => {}
                }
                let candidate =
                    Candidate::new(key, root, file.to_path_buf(), ENGINE, own, fingerprint.clone())?;
                Ok(if root.is_dir() {
                    candidate.derived_from(manifest.clone())
                } else {
                    candidate
                })
            };
            match server() {
                Ok(candidate) => Found::Plugin(Box::new(candidate)),
                Err(reason) => Found::Refused {
                    name: key.clone(),
                    file: root.to_path_buf(),
                    reason,
                },
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use yohost::adapter::Adapters;

    #[test]
    fn each_server_of_an_mcp_file_is_a_candidate_named_after_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let servers = r#"{"mcpServers": {"time": {"command": "t"}, "git": {"command": "g"}}}"#;
        std::fs::write(dir.path().join("tools.mcp.json"), servers).unwrap();
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        std::fs::write(
            dir.path().join("folder/mcp.json"),
            servers.replace("time", "clock"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("folder/plugin.toml"),
            "priority = 5\n[capabilities]\nexec = true\n[servers.git]\nmode = \"required\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("broken.mcp.json"), "{\"mcpServers\": [").unwrap();
        std::fs::write(dir.path().join("empty.mcp.json"), "{}").unwrap();
        let mut adapters = Adapters::default();
        adapters.register(crate::adapter());
        let found = adapters.scan(dir.path()).unwrap();
        let names: Vec<&str> = found.iter().map(Found::name).collect();
        assert_eq!(names, ["broken", "empty", "clock", "git", "git", "time"]);
        let candidate = |i: usize| match &found[i] {
            Found::Plugin(c) => c,
            other => panic!("{other:?}"),
        };
        for i in 2..6 {
            assert_eq!(candidate(i).engine, ENGINE);
            assert_eq!(candidate(i).ecosystem, ECOSYSTEM);
        }
        // The folder's manifest, or its [servers.NAME] table instead.
        assert_eq!(candidate(2).manifest.priority, Some(5));
        assert!(candidate(2).manifest.capabilities.exec);
        assert_eq!(candidate(3).manifest.mode, yohost::Mode::Required);
        assert!(!candidate(3).manifest.capabilities.exec);
        assert!(candidate(2).manifest.servers.is_empty());
        // A lone file has no manifest.
        assert_eq!(candidate(4).manifest.priority, None);
        assert_eq!(candidate(4).entry, dir.path().join("tools.mcp.json"));
        let reason = |i: usize| match &found[i] {
            Found::Refused { reason, .. } => reason.to_string(),
            other => panic!("{other:?}"),
        };
        assert!(reason(0).contains("not valid JSON"), "{}", reason(0));
        assert!(reason(1).contains("`mcpServers`"), "{}", reason(1));
    }

    #[test]
    fn without_the_adapter_an_mcp_file_is_refused_naming_the_crate() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tools.mcp.json"),
            r#"{"mcpServers": {"t": {"command": "t"}}}"#,
        )
        .unwrap();
        let found = Adapters::default().scan(dir.path()).unwrap();
        match &found[..] {
            [Found::Refused { name, reason, .. }] => {
                assert_eq!(name, "tools");
                let text = reason.to_string();
                assert!(text.contains("yohost-adapter-mcp"), "{text}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn other_clients_files_are_found_as_they_are_and_disabled_servers_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        // Claude Code's project file, with a disabled server.
        write(
            ".mcp.json",
            r#"{"mcpServers": {"code": {"command": "c"}, "off": {"command": "o", "disabled": true}}}"#,
        );
        // Cursor's and VS Code's folders, VS Code's with its own key and a comment.
        write(
            ".cursor/mcp.json",
            r#"{"mcpServers": {"cursor": {"command": "c"}}}"#,
        );
        write(
            ".vscode/mcp.json",
            "{\n  // the servers\n  \"servers\": {\"vscode\": {\"type\": \"stdio\", \"command\": \"v\"}}\n}",
        );
        write(
            "claude_desktop_config.json",
            r#"{"mcpServers": {"desktop": {"command": "d"}}}"#,
        );
        // Zed's list; and a hidden entry no adapter knows is passed over.
        write(
            "zed.mcp.json",
            r#"{"context_servers": {"zed": {"command": {"path": "z"}}}}"#,
        );
        write(".notes/mcp.txt", "not a plugin");
        let mut adapters = Adapters::default();
        adapters.register(crate::adapter());
        let found = adapters.scan(dir.path()).unwrap();
        let names: Vec<&str> = found.iter().map(Found::name).collect();
        assert_eq!(
            names,
            ["cursor", "code", "vscode", "desktop", "zed"],
            "{found:?}"
        );
        assert!(
            found.iter().all(|f| matches!(f, Found::Plugin(_))),
            "{found:?}"
        );
    }
}
