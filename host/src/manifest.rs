//! `plugin.toml`: the optional manifest beside a plugin.
//!
//! Every field is optional. What each means when absent is said on the
//! field. Unknown fields are an error, so a typo is reported instead of
//! silently ignored.
//!
//! ```toml
//! name = "guard"            # default: the file or folder name
//! mode = "required"         # default: "advisory"
//! priority = 10             # default: 100; lower runs first
//! ecosystem = "pi"          # default: detected from the source's imports
//! entry = "src/main.ts"     # default: the obvious entry of the folder
//!
//! [timeouts]                # milliseconds; default: the contract's per hook
//! before_tool = 2000
//!
//! [limits]
//! memory_mib = 128          # default: 64 (enforced by the Wasm and JS engines)
//!
//! [capabilities]            # default: nothing is granted
//! read = ["data"]           # directories the plugin may read (relative to the plugin)
//! write = ["out"]           # directories it may read and write
//! env = ["HOME"]            # environment variables it may see
//! network = false           # whether it may open connections
//! exec = false              # whether it may start processes (pi's `pi.exec`)
//!
//! [config]                  # settings for the plugin, read by its adapter
//! allowParallelInProgress = true   # (DSH: checked against the plugin's `Config`)
//! ```

use crate::error::LoadError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use yohost_contract::Hook;

/// The manifest file's name.
pub const MANIFEST_FILE: &str = "plugin.toml";

/// The priority of a plugin whose manifest sets none.
pub const DEFAULT_PRIORITY: i64 = 100;

/// What a plugin's failure means for the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A failing hook is skipped and logged (guarding hooks still fail closed).
    #[default]
    Advisory,
    /// A failing hook fails the run, and the message names the plugin.
    Required,
}

/// Which plugin API a plugin is written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ecosystem {
    /// yohost's own contract.
    #[default]
    Yohost,
    /// A pi extension.
    Pi,
    /// A DSH tool plugin.
    Dsh,
    /// A rutis-agent tool.
    RutisAgent,
}

impl Ecosystem {
    /// The ecosystem's name as the manifest spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Yohost => "yohost",
            Ecosystem::Pi => "pi",
            Ecosystem::Dsh => "dsh",
            Ecosystem::RutisAgent => "rutis-agent",
        }
    }
}

/// `[limits]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Memory for the plugin's instance in MiB. Absent: 64 MiB.
    pub memory_mib: Option<u64>,
}

/// `[capabilities]`: everything is denied unless granted here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Directories the plugin may read, relative to the plugin's folder (or
    /// absolute). Empty: no file may be read.
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Directories the plugin may read and write. Empty: no file may be
    /// written.
    #[serde(default)]
    pub write: Vec<PathBuf>,
    /// Environment variables the plugin may see. Empty: none.
    #[serde(default)]
    pub env: Vec<String>,
    /// Whether the plugin may open network connections. Absent: no.
    #[serde(default)]
    pub network: bool,
    /// Whether the plugin may start processes. Absent: no.
    #[serde(default)]
    pub exec: bool,
}

/// A parsed `plugin.toml` (all defaults when the file is absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The plugin's name. Absent: the plugin's own name, else the file stem.
    pub name: Option<String>,
    /// Advisory or required. Absent: advisory.
    #[serde(default)]
    pub mode: Mode,
    /// Lower runs first; ties keep the order of names. Absent: 100.
    pub priority: Option<i64>,
    /// The plugin's API. Absent: detected from the source's imports.
    pub ecosystem: Option<Ecosystem>,
    /// The entry file, relative to the plugin's folder. Absent: the obvious
    /// entry (`index.ts`, `__init__.py`, the only `.wasm`/`.so`, ...).
    pub entry: Option<PathBuf>,
    /// Per-hook timeouts in milliseconds. Absent: the contract's defaults.
    #[serde(default)]
    pub timeouts: BTreeMap<String, u64>,
    /// Resource limits.
    #[serde(default)]
    pub limits: Limits,
    /// What the plugin is granted.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// Settings for the plugin, which its adapter hands it (a DSH plugin's
    /// config). Absent: empty, so the plugin's own defaults apply.
    #[serde(default)]
    pub config: toml::Table,
}

impl Manifest {
    /// Read `path`. A missing file is the default manifest.
    pub fn read(path: &Path) -> Result<Manifest, LoadError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Manifest::parse(&text).map_err(|message| LoadError::Manifest {
                path: path.to_path_buf(),
                message,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
            Err(e) => Err(LoadError::Manifest {
                path: path.to_path_buf(),
                message: e.to_string(),
            }),
        }
    }

    /// Parse manifest text, checking hook names in `[timeouts]`.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let manifest: Manifest = toml::from_str(text).map_err(|e| e.to_string())?;
        if let Some(bad) = manifest
            .timeouts
            .keys()
            .find(|k| Hook::from_name(k).is_none())
        {
            let known: Vec<&str> = Hook::ALL.iter().map(|h| h.as_str()).collect();
            return Err(format!(
                "[timeouts] names unknown hook `{bad}` (known: {})",
                known.join(", ")
            ));
        }
        Ok(manifest)
    }

    /// The timeout of `hook` for this plugin.
    pub fn timeout(&self, hook: Hook) -> Duration {
        self.timeouts
            .get(hook.as_str())
            .map(|ms| Duration::from_millis(*ms))
            .unwrap_or_else(|| hook.default_timeout())
    }

    /// The memory limit in bytes.
    pub fn memory_bytes(&self) -> u64 {
        self.limits
            .memory_mib
            .map(|mib| mib * 1024 * 1024)
            .unwrap_or(crate::limits::DEFAULT_MEMORY_BYTES)
    }

    /// The priority (lower runs first).
    pub fn priority(&self) -> i64 {
        self.priority.unwrap_or(DEFAULT_PRIORITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_fields_take_their_documented_defaults() {
        let m = Manifest::parse("").unwrap();
        assert_eq!(m.mode, Mode::Advisory);
        assert_eq!(m.priority(), DEFAULT_PRIORITY);
        assert_eq!(m.timeout(Hook::BeforeTool), Duration::from_secs(10));
        assert_eq!(m.memory_bytes(), 64 * 1024 * 1024);
        assert_eq!(m.capabilities, Capabilities::default());
    }

    #[test]
    fn unknown_fields_and_hooks_are_errors_that_name_them() {
        let err = Manifest::parse("nmae = \"x\"").unwrap_err();
        assert!(err.contains("nmae"), "{err}");
        let err = Manifest::parse("[timeouts]\nbefore_everything = 5").unwrap_err();
        assert!(err.contains("before_everything"), "{err}");
        let err = Manifest::parse("mode = \"sometimes\"").unwrap_err();
        assert!(err.contains("sometimes") || err.contains("mode"), "{err}");
    }

    #[test]
    fn fields_parse() {
        let m = Manifest::parse(
            "name = \"g\"\nmode = \"required\"\npriority = 3\necosystem = \"rutis-agent\"\n[timeouts]\nbefore_tool = 250\n[capabilities]\nread = [\"data\"]\nenv = [\"HOME\"]",
        )
        .unwrap();
        assert_eq!(m.mode, Mode::Required);
        assert_eq!(m.ecosystem, Some(Ecosystem::RutisAgent));
        assert_eq!(m.timeout(Hook::BeforeTool), Duration::from_millis(250));
        assert_eq!(m.capabilities.read, vec![PathBuf::from("data")]);
        let m = Manifest::parse("[config]\nlimit = 3\nnested = { on = true }").unwrap();
        assert_eq!(m.config["limit"].as_integer(), Some(3));
        assert_eq!(m.config["nested"]["on"].as_bool(), Some(true));
    }
}
