//! A plugin's modules once gathered ([`ModuleSet`]), what stops the
//! gathering ([`GatherError`]), and how a plugin file is named among them.
//! The walk that fills the set is [`super::modules`]; the engine's loader
//! serves it.

use super::positions::LineMap;
use crate::load::routing::NodeNeeds;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every module of a plugin, ready for the engine.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleSet {
    /// The plugin's folder, symlinks resolved.
    pub base_dir: PathBuf,
    /// The entry module's name.
    pub entry: String,
    /// The flavor's shape module, which only the host imports.
    pub shape: String,
    /// The flavor's prelude module, if it has one, which only the host
    /// imports (before the entry).
    pub prelude: Option<String>,
    /// Module name → JavaScript. Plugin files are named by their path
    /// relative to the plugin's folder; built-ins by their specifier. A
    /// built-in's source is borrowed from the host's binary, so it is
    /// compiled once per process (see the JS engine's loader).
    pub sources: BTreeMap<String, Cow<'static, str>>,
    /// The names in `sources` that are the plugin's files (not built-ins).
    pub files: BTreeSet<String>,
    /// (importing module, specifier) → module name.
    pub links: BTreeMap<(String, String), String>,
    /// Module name → where its code's positions are in its source, for the
    /// plugin's TypeScript files.
    pub positions: BTreeMap<String, LineMap>,
    /// The members the plugin's modules read from Node built-ins' namespaces
    /// that the flavor's stand-ins lack ([`NodeNeed::Members`]): whether
    /// they send it to Node is the engine's choice.
    pub member_needs: NodeNeeds,
    /// What a person should know of how the modules were gathered (a name
    /// bound to `undefined`).
    pub warnings: Vec<String>,
}

impl ModuleSet {
    /// The `file:` URL of the plugin file named `name` (its
    /// `import.meta.url`); `None` for a built-in module.
    pub fn file_url(&self, name: &str) -> Option<String> {
        if !self.files.contains(name) {
            return None;
        }
        let path = self.base_dir.join(name);
        let mut url = String::from("file://");
        for byte in path.to_string_lossy().bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                    url.push(byte as char)
                }
                _ => url.push_str(&format!("%{byte:02X}")),
            }
        }
        Some(url)
    }

    /// The module `specifier` names when imported from `base`, if the
    /// plugin may load it.
    pub fn resolve(&self, base: &str, specifier: &str) -> Option<&str> {
        self.links
            .get(&(base.to_string(), specifier.to_string()))
            .map(String::as_str)
    }
}

/// Why a plugin's modules could not be gathered.
#[derive(Debug, Clone)]
pub(crate) enum GatherError {
    /// A file could not be read or transpiled; the message names it.
    Invalid(String),
    /// An import is not allowed; the message names it and says why.
    Refused(String),
    /// Nothing is refused, but the graph needs what only Node has.
    NeedsNode(NodeNeeds),
}

/// A plugin file's module name: its path relative to the plugin's folder,
/// with `/` separators.
pub(crate) fn module_name(base_dir: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(base_dir).unwrap_or(file);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
