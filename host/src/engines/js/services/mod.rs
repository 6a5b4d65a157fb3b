//! The host's services a flavor may offer its plugins: files within the
//! directories the manifest grants (through the host's one file-grants
//! module, [`crate::load::grants`]), processes when it grants
//! `capabilities.exec`, and HTTP requests ([`super::fetch`]) to the hosts
//! `capabilities.network` grants.
//!
//! Files are [`files`]' (each operation a [`files::FileOp`]), processes
//! [`exec`]'s, what a check notes instead of doing [`DryRun`]'s; this module
//! holds what a plugin is offered.

mod dry_run;
mod exec;
mod files;

pub use dry_run::DryRun;
pub use exec::{exec_dir, exec_env, exec_timeout, spawn, ExecBounds, ExecRequest, MAX_EXEC};
pub use files::FileAccess;
#[cfg(feature = "node")]
pub use files::FileOp;

use crate::load::manifest::Network;
use crate::sandbox::ProcessSandbox;
use std::path::PathBuf;

/// What the host offers a plugin of a flavor with services.
#[derive(Debug, Clone)]
pub struct Services {
    /// Files, within the manifest's grants.
    pub files: FileAccess,
    /// The host's working directory: pi's `ctx.cwd`, and where processes
    /// start unless they name a directory.
    pub cwd: PathBuf,
    /// Whether the manifest grants `exec`.
    pub exec: bool,
    /// The kernel sandbox processes start in (when `exec` is granted).
    pub sandbox: Option<ProcessSandbox>,
    /// The hosts `fetch` may reach (none when the flavor offers no
    /// `fetch`).
    pub network: Network,
    /// Set when the plugin loads for a check: processes are reported here,
    /// not started; without `exec`, as denied.
    pub dry_run: Option<DryRun>,
}
