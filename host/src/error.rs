//! The host's typed errors. Messages name the plugin, the file or the hook,
//! and the cause; nothing in the host matches on message text.

use crate::manifest::{Ecosystem, ManifestError, NameError};
use crate::plugin::EngineKind;
use crate::private_dir::PrivateDirError;
use crate::routing::NodeNeeds;
use crate::source::ReadError;
use std::path::PathBuf;
use std::time::Duration;
use yohost_contract::{Hook, ReplyError};

/// Why one hook call failed. Every variant fails closed (see the crate docs).
///
/// The message holds the detail (an engine's words, a plugin's own error
/// text): it goes to the log only. What the model may see is
/// [`HookError`]'s fixed text.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The hook ran past its deadline; the host stopped waiting and, where
    /// the engine can, interrupted it.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The plugin's code panicked or trapped, or its engine failed.
    #[error("crashed: {0}")]
    Crashed(String),
    /// The plugin's own answer was an error: a JS throw, a Python exception,
    /// an error a dylib or Wasm plugin returns.
    #[error("returned an error: {0}")]
    Guest(String),
    /// The reply did not fit the hook's contract.
    #[error("{0}")]
    BadReply(#[from] ReplyError),
    /// The reply was larger than [`MAX_REPLY_BYTES`](crate::limits::MAX_REPLY_BYTES).
    #[error("replied with {0} bytes, over the limit of {limit}", limit = crate::limits::MAX_REPLY_BYTES)]
    ReplyTooLarge(usize),
    /// The plugin went over its memory limit.
    #[error("ran out of memory (limit {0} bytes)")]
    OutOfMemory(u64),
    /// The plugin reached for something it was not granted.
    #[error("was denied a capability: {0}")]
    CapabilityDenied(String),
    /// The plugin was unloaded for the rest of this run (after a crash, a
    /// timeout or running out of memory, or it could not open for the run);
    /// the call never reached it.
    #[error("is unloaded for the rest of this run: {0}")]
    Unloaded(String),
    /// The run was cancelled while the hook ran.
    #[error("was abandoned: the run was cancelled")]
    Cancelled,
    /// The host could not encode the hook's argument, so the plugin was not
    /// called (it never receives empty input in its place).
    #[error("was not called: its argument could not be encoded: {0}")]
    Encode(String),
}

impl CallError {
    /// The failure's stable snake_case name, the `error_kind` field of every
    /// log line about a failed hook: `timeout`, `crashed`, `guest`,
    /// `bad_reply`, `reply_too_large`, `out_of_memory`, `capability_denied`,
    /// `unloaded` or `cancelled`.
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::Timeout(_) => "timeout",
            CallError::Crashed(_) => "crashed",
            CallError::Guest(_) => "guest",
            CallError::BadReply(_) => "bad_reply",
            CallError::ReplyTooLarge(_) => "reply_too_large",
            CallError::OutOfMemory(_) => "out_of_memory",
            CallError::CapabilityDenied(_) => "capability_denied",
            CallError::Unloaded(_) => "unloaded",
            CallError::Cancelled => "cancelled",
            CallError::Encode(_) => "encode",
        }
    }

    /// The failure in fixed words, without any detail: what the model may
    /// read about it.
    fn summary(&self) -> &'static str {
        match self {
            CallError::Timeout(_) => "timed out",
            CallError::Crashed(_) => "crashed",
            CallError::Guest(_) => "returned an error",
            CallError::BadReply(_) => "returned a reply the host cannot use",
            CallError::ReplyTooLarge(_) => "returned a reply over the size limit",
            CallError::OutOfMemory(_) => "ran out of memory",
            CallError::CapabilityDenied(_) => "was denied a capability",
            CallError::Unloaded(_) => "is unloaded for the rest of this run",
            CallError::Cancelled => "was abandoned: the run was cancelled",
            CallError::Encode(_) => "could not be sent its input",
        }
    }

    /// Whether the plugin is unloaded for the rest of the run after this
    /// error, so every later call of the run fails closed without reaching
    /// it: a crash or trap, running out of memory, or a timeout (code that
    /// was stopped half-way leaves no state worth trusting).
    pub fn discards_instance(&self) -> bool {
        matches!(
            self,
            CallError::Crashed(_) | CallError::OutOfMemory(_) | CallError::Timeout(_)
        )
    }
}

/// A failed hook call, with the plugin and hook it belongs to.
///
/// It displays as a fixed text that names the plugin, the kind of failure
/// and the hook (`plugin 'guard' timed out in before_tool`), never the
/// plugin's own error text, which can hold secrets: this is what the model
/// and the run's error message may carry. The detail is [`HookError::error`],
/// for the log.
#[derive(Debug, Clone, thiserror::Error)]
#[error("plugin '{plugin}' {} in {hook}", .error.summary())]
pub struct HookError {
    /// The plugin's name.
    pub plugin: String,
    /// The hook that failed.
    pub hook: Hook,
    /// What went wrong, with the detail.
    pub error: CallError,
}

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
    /// The dylib could not be copied for loading: the private folder for
    /// library copies cannot be used.
    #[error("{path}: no private folder to load the library from: {problem}")]
    NoPrivateFolder {
        /// The plugin's library.
        path: PathBuf,
        /// Why the folder cannot be used.
        problem: PrivateDirError,
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
    /// The embedded engine found that the plugin's import graph needs Node
    /// ([`NodeNeeds`]) and nothing else stops it. [`Adapters::load`](crate::Adapters::load)
    /// routes it ([`crate::routing`]); this error never reaches a report.
    #[error("{path}: it needs Node: {needs}")]
    NeedsNode {
        /// The plugin's entry file.
        path: PathBuf,
        /// What it needs.
        needs: NodeNeeds,
    },
    /// The file is not a kind of plugin the host knows.
    #[error("{0}: not a plugin: expected .so/.dylib/.dll, .wasm, .ts/.mts/.js/.mjs or .py, or a folder with plugin.toml, index.ts, __init__.py or a package.json with a `pi` field")]
    UnknownFile(PathBuf),
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
        error: crate::grants::GrantError,
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
