//! What a backend is given to run a plugin ([`Program`]), what the plugin
//! may use ([`Sandbox`]), and the engine's own bounds on its stack and its
//! load.

use crate::engines::js::flavor::Flavor;
use crate::engines::js::module_set::ModuleSet;
use crate::engines::js::services::Services;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The most native stack a plugin's code may use.
pub const MAX_STACK_BYTES: usize = 1024 * 1024;

/// How long loading (evaluating the plugin's modules) may take.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(5);

/// What a plugin may use.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    /// The most memory its runtime may hold.
    pub memory_bytes: u64,
    /// The environment variables it was granted, with their values at load.
    pub env: BTreeMap<String, String>,
    /// The host's services, for flavors that offer them.
    pub services: Option<Services>,
}

/// Everything a backend needs to run a plugin.
#[derive(Debug, Clone)]
pub struct Program {
    /// Its modules (the plugin's and its flavor's), resolved and transpiled.
    pub modules: ModuleSet,
    /// How its module becomes hooks.
    pub flavor: Flavor,
    /// What the flavor's shape receives besides the module, as JSON text.
    pub settings: String,
    /// What it may use.
    pub sandbox: Sandbox,
    /// The name its log lines carry unless the plugin names itself.
    pub default_name: String,
    /// Whether `default_name` wins over the plugin's own name (the manifest
    /// set it).
    pub name_is_fixed: bool,
    /// The plugin's folder, which hooks see as `ctx.pluginDir`.
    pub plugin_dir: PathBuf,
}
