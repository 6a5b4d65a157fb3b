//! Which entries of a plugin directory are MCP configurations, and their
//! servers as candidates.
//!
//! A `*.mcp.json` file, or a folder with an `mcp.json`, in the common
//! `{"mcpServers": {"NAME": {...}}}` format: each server is a plugin of its
//! own, named after its key, with the folder's `plugin.toml` as its
//! manifest (or that manifest's `[servers.NAME]` table, when it has one).
//! The rest of a server's entry is read when it loads ([`crate::config`]).

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

/// The servers of an entry of the plugin directory, if it is an MCP
/// configuration: each a candidate, in the order of their names, or the
/// entry refused as a whole when its file cannot be read or is not in the
/// `mcpServers` format.
pub(crate) fn discover(entry: &Path) -> Option<Vec<Found>> {
    let file = mcp_file(entry)?;
    let name = entry.file_name()?.to_string_lossy();
    let name = name.strip_suffix(MCP_SUFFIX).unwrap_or(&name).to_string();
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
/// `*.mcp.json` file, or a folder's `mcp.json`.
fn mcp_file(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    if path.is_dir() {
        let file = path.join(MCP_FILE);
        file.is_file().then_some(file)
    } else {
        (name.len() > MCP_SUFFIX.len() && name.ends_with(MCP_SUFFIX)).then(|| path.to_path_buf())
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
    let config: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
    const SHAPE: &str =
        r#"the common format is {"mcpServers": {"NAME": {"command": "...", "args": [...]}}}"#;
    let servers = config
        .get("mcpServers")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| invalid(format!("has no `mcpServers` object: {SHAPE}")))?;
    if servers.is_empty() {
        return Err(invalid(format!(
            "names no server under `mcpServers`: {SHAPE}"
        )));
    }
    let manifest_path = root.join(MANIFEST_FILE);
    let manifest = if root.is_dir() {
        Manifest::read(&manifest_path).map_err(|problem| LoadError::Manifest {
            path: manifest_path.clone(),
            problem,
        })?
    } else {
        Manifest::default()
    };
    if let Some(unknown) = manifest.servers.keys().find(|k| !servers.contains_key(*k)) {
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
                Candidate::new(key, root, file.to_path_buf(), ENGINE, own, fingerprint.clone())
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
}
