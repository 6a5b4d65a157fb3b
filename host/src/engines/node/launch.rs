//! What a `node` process is started with ([`Launch`], kept to start it
//! again after it was killed or died), and why a start fails
//! ([`StartError`]).

use crate::sandbox::ProcessSandbox;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// How to start the process, and what to send it: kept to start it again
/// after it was killed or died.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The `node` executable.
    pub node: PathBuf,
    /// What a person should know of how the plugin's modules were read (a
    /// name bound to `undefined`), for its load's warnings.
    pub notes: Vec<String>,
    /// Folders of the Node installation the kernel sandbox must let it
    /// read, besides the system's.
    pub runtime: Vec<PathBuf>,
    /// Its arguments: flags, then the bootstrap.
    pub args: Vec<OsString>,
    /// Its kernel sandbox and environment.
    pub sandbox: ProcessSandbox,
    /// Its working directory.
    pub cwd: PathBuf,
    /// The `init` message, as frame text.
    pub init: Vec<u8>,
    /// The plugin's own paths, resolved (`Candidate::own_paths`): with the
    /// entry, the only places whose TypeScript the host strips for it.
    pub own: Vec<PathBuf>,
    /// The entry file, symlinks resolved (a manifest may name one outside
    /// the folder).
    pub entry: PathBuf,
    /// The name log lines carry unless the plugin names itself.
    pub default_name: String,
    /// Whether `default_name` wins over the plugin's own name (the manifest
    /// set it).
    pub name_is_fixed: bool,
    /// How long loading may take.
    pub load_timeout: Duration,
    /// The memory limit, reported when V8 aborts.
    pub memory_bytes: u64,
}

/// Why a process could not be started and loaded.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `node` could not be started.
    #[error("cannot start {node}: {error}")]
    Spawn {
        /// The executable.
        node: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The plugin's code refused to load (its shape threw, an import
    /// failed).
    #[error("{0}")]
    Refused(String),
    /// It did not load in time.
    #[error("it did not load within {0:?}")]
    TooSlow(Duration),
    /// The process ended, or broke the protocol, while loading.
    #[error("the node process ended while loading: {0}")]
    Ended(String),
}
