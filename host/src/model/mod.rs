//! The model at the bottom of the host: what kinds of plugin there are and
//! what bounds them. It depends on nothing else in the crate.
//!
//! - [`EngineKind`] and [`Ecosystem`] (`ids`): the open ids of the engine a
//!   plugin runs on and of the plugin API it is written against;
//! - [`Mode`]: what a plugin's failure means for the run;
//! - [`Confinement`]: whether the kernel confines a plugin's processes;
//! - [`limits`]: the fixed bounds on what a plugin sends the host;
//! - `names`: the known name closest to a misspelt one;
//! - `sync`: the one poisoning policy of the host's locks.

use serde::{Deserialize, Serialize};

pub(crate) mod ids;
pub mod limits;
// The closest known name, for the JS flavors' unknown names and the
// manifest's unknown keys.
pub(crate) mod names;
pub(crate) mod sync;

pub use ids::{Ecosystem, EngineKind, KnownEcosystem, KNOWN_ECOSYSTEMS};

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

/// Whether the kernel confines the plugin's processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Under the Landlock ruleset made from its grants.
    Kernel,
    /// Without it: the kernel has none, and the manifest allowed this.
    Unconfined,
}

impl Confinement {
    /// How `yohost check` names it: `kernel sandbox` or `unconfined`.
    pub fn as_str(self) -> &'static str {
        match self {
            Confinement::Kernel => "kernel sandbox",
            Confinement::Unconfined => "unconfined",
        }
    }
}
