//! The host's services a flavor may offer its plugins: files within the
//! directories the manifest grants (through the host's one file-grants
//! module, [`crate::load::grants`]), processes when it grants
//! `capabilities.exec`, and HTTP requests ([`super::fetch`]) to the hosts
//! `capabilities.network` grants.
//!
//! Files are [`files`]' (each operation a [`FileOp`]), processes
//! [`exec`]'s; this module holds what a plugin is offered and what a check
//! notes instead of doing.

mod exec;
mod files;

pub use exec::{exec_dir, exec_env, exec_timeout, spawn, ExecBounds, ExecRequest, MAX_EXEC};
pub use files::{FileAccess, FileOp};

use crate::load::manifest::Network;
use crate::model::sync::lock;
use crate::sandbox::ProcessSandbox;
use std::path::PathBuf;
use std::sync::Arc;

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

/// What a plugin loaded for a check would have done: the processes it
/// would have started and the files it would have written, as warnings
/// (at most [`DryRun::MAX_NOTES`], then a count).
#[derive(Debug, Clone, Default)]
pub struct DryRun {
    notes: Arc<std::sync::Mutex<(Vec<String>, usize)>>,
}

impl DryRun {
    /// The most notes kept; the rest are counted.
    pub const MAX_NOTES: usize = 20;

    /// Note that the plugin would have done `what`.
    pub fn note(&self, what: String) {
        let mut notes = lock(&self.notes);
        if notes.0.len() < Self::MAX_NOTES {
            notes.0.push(format!("in a check, not done: {what}"));
        } else {
            notes.1 += 1;
        }
    }

    /// The notes so far, and how many more there were; empties the list.
    pub fn take(&self) -> Vec<String> {
        let mut notes = lock(&self.notes);
        let (mut list, more) = std::mem::take(&mut *notes);
        if more > 0 {
            list.push(format!(
                "in a check, not done: {more} more processes, writes or requests"
            ));
        }
        list
    }
}
