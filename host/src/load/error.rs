//! Why a plugin was refused at load ([`LoadError`]) or the host could not
//! start ([`HostError`]). Messages name the plugin or the file, and the
//! cause; nothing in the host matches on message text.

use crate::load::manifest::{ManifestError, NameError};
use crate::load::private_dir::PrivateDirError;
use crate::load::routing::NodeNeeds;
use crate::load::source::ReadError;
use crate::model::Ecosystem;
use crate::model::EngineKind;
use std::path::PathBuf;

/// Why a plugin was refused at load. Each reason says what a person can do.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// `plugin.toml` could not be read, parsed or accepted.
    #[error("{path}: malformed plugin.toml: {problem}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong (it names the line or the field).
        problem: ManifestError,
    },
    /// A file the host reads to inspect the plugin could not be read: it is
    /// missing, not a regular file (a FIFO, a socket, a device), too large or
    /// not text.
    #[error("{path}: cannot be read: {problem}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        problem: ReadError,
    },
    /// The plugin's name (from its file name, its manifest or the plugin
    /// itself) is not a valid name.
    #[error("{path}: invalid plugin name {name:?}: {problem}")]
    BadName {
        /// The plugin's file or folder.
        path: PathBuf,
        /// The name, as far as it could be read.
        name: String,
        /// What is wrong with it, and what a valid name is.
        problem: NameError,
    },
    /// A required plugin uses event or hook names the host does not know,
    /// so code it counts on would never run.
    #[error("{path}: a required plugin, and it {}; fix the name, or set `mode = \"advisory\"` in its plugin.toml to load it with a warning", names.join("; it "))]
    UnknownNames {
        /// The plugin's file or folder.
        path: PathBuf,
        /// Each unknown name, as a sentence with the closest known one.
        names: Vec<String>,
    },
    /// A locked host refused the plugin: it is not in the lock file, its
    /// files differ from it (naming each file), or its private copy could
    /// not be made.
    #[error("{path}: refused by the lock: {problem}")]
    Locked {
        /// The plugin's file or folder.
        path: PathBuf,
        /// Why, naming the files that differ.
        problem: String,
    },
    /// The dylib could not be copied for loading: the private folder for
    /// library copies cannot be used.
    #[error("{path}: no private folder to load the library from: {problem}")]
    NoPrivateFolder {
        /// The plugin's library.
        path: PathBuf,
        /// Why the folder cannot be used.
        problem: PrivateDirError,
    },
    /// The plugin's [data folder](crate::load::data_dir) cannot be used:
    /// it cannot be made, is not private, or lies where a write grant may
    /// not.
    #[error("{path}: its data folder cannot be used: {problem}")]
    DataFolder {
        /// The plugin's file or folder.
        path: PathBuf,
        /// Why, naming the folder.
        problem: String,
    },
    /// The plugin is written for an ecosystem no adapter of this host serves
    /// on its engine.
    #[error("{path}: written for the `{}` ecosystem, which no adapter serves on the {} engine ({serving}); if it was detected wrongly, set `ecosystem` in its plugin.toml", ecosystem.as_str(), engine.as_str())]
    NoAdapter {
        /// The plugin's entry file.
        path: PathBuf,
        /// Its engine.
        engine: EngineKind,
        /// Its ecosystem.
        ecosystem: Ecosystem,
        /// Who serves that ecosystem: the engines this host loads it on, or
        /// the adapter crate to register.
        serving: String,
    },
    /// The entry bears the file marks of a known ecosystem
    /// ([`KNOWN_ECOSYSTEMS`](crate::model::KNOWN_ECOSYSTEMS)) that no
    /// adapter of this host serves.
    #[error("{path}: a plugin of the `{}` ecosystem, which no adapter here serves ({serving})", ecosystem.as_str())]
    Unserved {
        /// The entry.
        path: PathBuf,
        /// Its ecosystem.
        ecosystem: Ecosystem,
        /// The adapter crate to register.
        serving: String,
    },
    /// The embedded engine found that the plugin's import graph needs Node
    /// ([`NodeNeeds`]) and nothing else stops it. [`Adapters::load`](crate::adapter::Adapters::load)
    /// routes it (the Node routing ([`NodeNeeds`](crate::NodeNeeds))); this error never reaches a report.
    #[error("{path}: it needs Node: {needs}")]
    NeedsNode {
        /// The plugin's entry file.
        path: PathBuf,
        /// What it needs.
        needs: NodeNeeds,
    },
    /// `engine = "auto"` sent the plugin to the Node engine (the embedded
    /// engine found it needs Node), and it was refused there. Reported with
    /// engine `node`.
    #[error("{error} (on Node, because {because})")]
    RefusedOnNode {
        /// Why it went to Node.
        because: String,
        /// Why Node refused it.
        error: Box<LoadError>,
    },
    /// The file is not a kind of plugin the host knows.
    #[error("{0}: not a plugin: expected .so/.dylib/.dll, .wasm, .ts/.mts/.js/.mjs or .py, or a folder with plugin.toml, index.ts, __init__.py or a package.json with a `pi` field")]
    UnknownFile(PathBuf),
    /// A folder with no entry at its top (no `plugin.toml`, obvious entry or
    /// adapter's entry). `deeper` names the plugin files found further down
    /// by their own paths, which a folder's entry cannot be.
    #[error("{dir}: a folder with no plugin at its top (plugin.toml, index.ts, __init__.py or a package.json with a `pi` field){}; if it is not a plugin, list it in .yohostignore", deeper_hint(deeper))]
    NoEntry {
        /// The folder.
        dir: PathBuf,
        /// Plugin files below its top, the first few in path order.
        deeper: Vec<PathBuf>,
    },
    /// The plugin was built for another version of the plugin interface.
    #[error("{path}: incompatible plugin interface: {message}")]
    IncompatibleApi {
        /// The plugin's file.
        path: PathBuf,
        /// Which version it has and which the host speaks.
        message: String,
    },
    /// The engine this plugin needs is not built into this host.
    #[error("{path}: this host was built without the `{feature}` feature, which runs this kind of plugin")]
    EngineMissing {
        /// The plugin's file.
        path: PathBuf,
        /// The cargo feature to enable.
        feature: &'static str,
    },
    /// The plugin's code could not be loaded (syntax error, import error,
    /// missing symbol, invalid component, ...).
    #[error("{path}: {message}")]
    Invalid {
        /// The plugin's file.
        path: PathBuf,
        /// What is wrong, in the engine's words.
        message: String,
    },
    /// A foreign plugin uses an API the host refuses to honour.
    #[error("{path}: refused: {message}")]
    Refused {
        /// The plugin's file.
        path: PathBuf,
        /// What it uses, by name, and why that is refused.
        message: String,
    },
    /// A directory the manifest grants cannot be opened (every engine
    /// refuses the plugin, sandboxed or not).
    #[error("{path}: {error}")]
    Grant {
        /// The plugin's file.
        path: PathBuf,
        /// Which grant, the directory it names, and what is wrong.
        error: crate::load::grants::GrantError,
    },
    /// Another plugin already has this name.
    #[error(
        "{path}: another plugin is already named '{name}' ({other}); rename one in its plugin.toml"
    )]
    DuplicateName {
        /// The refused plugin's file.
        path: PathBuf,
        /// The name.
        name: String,
        /// The file of the plugin that kept the name.
        other: PathBuf,
    },
}

/// Why the host itself could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The plugin directory could not be read.
    #[error("cannot read plugin directory {path}: {source}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What a [`LoadError::NoEntry`] says of the plugin files deeper down.
fn deeper_hint(deeper: &[PathBuf]) -> String {
    if deeper.is_empty() {
        return String::new();
    }
    let files: Vec<String> = deeper.iter().map(|p| p.display().to_string()).collect();
    format!(
        "; it holds {} below its top: move the entry up, or name it with `entry` in plugin.toml",
        files.join(", ")
    )
}
