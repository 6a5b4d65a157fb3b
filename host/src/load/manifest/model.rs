//! What a manifest holds, and how it can be wrong: the types
//! `plugin.toml` reads into, their bounds, and its errors. Reading is in
//! `problems.rs`, the file's own checks in the module's root.

use super::capabilities::Capabilities;
use super::names::NameError;
use crate::load::source::ReadError;
use crate::model::{Ecosystem, Mode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use yohost_contract::Hook;

/// The manifest file's name.
pub const MANIFEST_FILE: &str = "plugin.toml";

/// The `[timeouts]` key that bounds loading the plugin rather than a hook.
pub const LOAD_TIMEOUT_KEY: &str = "load";

/// How long loading a plugin may take when `[timeouts] load` is absent.
/// Python imports honour it; the Wasm and JS engines bound their loads with
/// limits of their own.
pub const DEFAULT_LOAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The priority of a plugin whose manifest sets none.
pub const DEFAULT_PRIORITY: i64 = 100;

/// The memory limits `[limits] memory_mib` accepts, in MiB.
pub const MEMORY_MIB: std::ops::RangeInclusive<u64> = 1..=65536;

/// The timeouts `[timeouts]` accepts, in milliseconds (up to a day).
pub const TIMEOUT_MS: std::ops::RangeInclusive<u64> = 1..=86_400_000;

/// How deeply `[`/`{` may nest in a manifest. Deeper text is refused before
/// it is parsed, so no manifest can exhaust the parser's stack.
pub const MAX_NESTING: usize = 32;

/// Why a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot be read: {0}")]
    Unreadable(ReadError),
    /// Arrays or tables nest deeper than [`MAX_NESTING`].
    #[error("arrays or tables nest deeper than {MAX_NESTING} levels")]
    TooDeep,
    /// Not valid TOML, or a field of the wrong type or unknown.
    #[error("{0}")]
    Syntax(String),
    /// `[timeouts]` names a hook that does not exist.
    #[error("[timeouts] names unknown hook `{hook}`{meant} (known: {known}, load)", meant = hook_meant(hook), known = Hook::ALL.map(|h| h.as_str()).join(", "))]
    UnknownHook {
        /// The name it used.
        hook: String,
    },
    /// A number outside what the field accepts.
    #[error("`{field}` is {value}, but must be between {min} and {max} {unit}")]
    OutOfRange {
        /// The field, as the manifest spells it.
        field: String,
        /// The value it has.
        value: u64,
        /// The least value accepted.
        min: u64,
        /// The greatest value accepted.
        max: u64,
        /// The unit of the field.
        unit: &'static str,
    },
    /// `name` is not a valid plugin name.
    #[error("`name`: {0}")]
    Name(NameError),
    /// Several of the others, each with its line, in file order.
    #[error("{} problems: {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Problems(Vec<Problem>),
    /// `capabilities.network` lists something that is not a host name.
    #[error("`capabilities.network` lists {host:?}, which is not a host name: list names such as \"api.example.com\" or \"*.example.org\", without scheme, port or path")]
    NetworkHost {
        /// The entry as written.
        host: String,
    },
}

/// Which engine runs a JavaScript or TypeScript plugin (`engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// The engine the entry's extension names; a JavaScript or TypeScript
    /// plugin whose import graph needs what only Node has (a Node built-in
    /// outside the flavor's table, a native addon) runs on Node
    /// (the Node routing ([`NodeNeeds`](crate::NodeNeeds))).
    #[default]
    Auto,
    /// The embedded engine only: a plugin that needs Node is refused.
    Embedded,
    /// A `node` process: for plugins that need all of Node.
    Node,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Memory for the plugin's instance in MiB. Absent: 64 MiB.
    pub memory_mib: Option<u64>,
    /// How many processes the plugin may run at once (the Node engine's,
    /// `exec`'s, an MCP server's). Absent:
    /// [`PROCESSES_PER_PLUGIN`](crate::sandbox::PROCESSES_PER_PLUGIN).
    pub processes: Option<u32>,
}

/// A parsed `plugin.toml` (all defaults when the file is absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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
    /// The engine of a JavaScript or TypeScript plugin. Absent: `auto`.
    #[serde(default)]
    pub engine: EngineChoice,
    /// Per-hook timeouts in milliseconds, and `load`. Absent: the contract's
    /// defaults, and [`DEFAULT_LOAD_TIMEOUT`].
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
    /// The manifests of the servers of an MCP plugin's `mcp.json`, by their
    /// key (`[servers.NAME]`): a server with a table here has that manifest
    /// instead of the rest of this one. Absent: every server has this one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, Manifest>,
}

/// One problem of a manifest, and where it is (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {error}")]
pub struct Problem {
    /// The line it is on.
    pub line: usize,
    /// The column (in bytes) it starts at.
    pub column: usize,
    /// What is wrong.
    pub error: ManifestError,
}

/// `; did you mean `HOOK`?` for the known `[timeouts]` key closest to
/// `hook`, or nothing.
pub(super) fn hook_meant(hook: &str) -> String {
    let known = Hook::ALL.map(|h| h.as_str());
    crate::model::names::closest(hook, known.into_iter().chain([LOAD_TIMEOUT_KEY]))
        .map(|meant| format!("; did you mean `{meant}`?"))
        .unwrap_or_default()
}

pub(super) fn in_range(
    field: &str,
    value: u64,
    range: std::ops::RangeInclusive<u64>,
    unit: &'static str,
) -> Result<(), ManifestError> {
    if range.contains(&value) {
        return Ok(());
    }
    Err(ManifestError::OutOfRange {
        field: field.into(),
        value,
        min: *range.start(),
        max: *range.end(),
        unit,
    })
}
