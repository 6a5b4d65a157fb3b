//! What loading a plugin gives: [`Loaded`], what an engine or adapter
//! found in a plugin, and [`LoadedPlugin`], a plugin the host loaded, with
//! what it knows about it.

use crate::call::plugin::Plugin;
use crate::call::stats::PluginStats;
use crate::load::manifest::Manifest;
use crate::load::routing::Routed;
use crate::model::{Confinement, Ecosystem, EngineKind, Mode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use yohost_contract::{CommandSpec, Hook};

/// What a plugin offers an app's user besides the model's tools: commands
/// (`/name`, run with [`PluginHost::run_command`](crate::PluginHost::run_command))
/// and flags (options the app may show). Empty for most plugins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppSurface {
    /// Its commands.
    #[serde(default)]
    pub commands: Vec<CommandSpec>,
    /// Its flags.
    #[serde(default)]
    pub flags: Vec<FlagSpec>,
}

/// An option a plugin declares for the app's command line (pi's
/// `registerFlag`): the plugin reads its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagSpec {
    /// The flag, without `--`.
    pub name: String,
    /// What the user reads about it.
    #[serde(default)]
    pub description: String,
    /// `boolean` or `string`.
    #[serde(rename = "type", default = "boolean")]
    pub kind: String,
    /// Its value when the user gives none.
    #[serde(default)]
    pub default: serde_json::Value,
}

fn boolean() -> String {
    "boolean".into()
}

/// What an engine found when it loaded a plugin. Built with
/// [`Loaded::new`]; fields may be added, so it is not built by a literal
/// outside this crate.
#[non_exhaustive]
pub struct Loaded {
    /// The plugin.
    pub plugin: Arc<dyn Plugin>,
    /// The hooks it implements; the host calls no others.
    pub hooks: BTreeSet<Hook>,
    /// The name the plugin gives itself, if any (the manifest's wins).
    pub name: Option<String>,
    /// Things a person should know that do not stop it loading.
    pub warnings: Vec<String>,
    /// The event or hook names it uses that the host does not know, each
    /// as a sentence with the closest known name: a required plugin is
    /// refused for them, an advisory one loads with them as warnings.
    pub unknown_names: Vec<String>,
    /// Whether it has code that runs when it is unloaded (pi's
    /// `session_shutdown`): the host calls that even when it has no hooks.
    pub unloads: bool,
    /// Its commands and flags.
    pub app: AppSurface,
    /// The API it was written against, if the engine detected it.
    pub ecosystem: Option<Ecosystem>,
    /// Set when `engine = "auto"` sent it to another engine than its
    /// file's (the Node routing ([`NodeNeeds`](crate::NodeNeeds))): which, and why. Engines leave it `None`.
    pub routed: Option<Routed>,
    /// How the processes it runs in or starts are confined, for a plugin
    /// that has any (the Node engine; `exec` granted); `None` otherwise.
    pub processes: Option<Confinement>,
}

impl Loaded {
    /// A plugin implementing `hooks`, with nothing else known yet: no name
    /// of its own, no warnings, no unknown names, no unload code, its
    /// ecosystem the file's, not routed, and no processes.
    pub fn new(plugin: Arc<dyn Plugin>, hooks: impl IntoIterator<Item = Hook>) -> Self {
        Self {
            plugin,
            hooks: hooks.into_iter().collect(),
            name: None,
            warnings: Vec::new(),
            unknown_names: Vec::new(),
            unloads: false,
            app: AppSurface::default(),
            ecosystem: None,
            routed: None,
            processes: None,
        }
    }
}

/// A plugin the host loaded, with what it knows about it. Built with
/// [`LoadedPlugin::new`] (or by the host from a [`Loaded`]); fields may be
/// added, so it is not built by a literal outside this crate.
#[non_exhaustive]
pub struct LoadedPlugin {
    /// Unique within the host.
    pub name: String,
    /// The file or folder it came from.
    pub file: PathBuf,
    /// The engine it runs on.
    pub engine: EngineKind,
    /// Why it runs on that engine, when `engine = "auto"` chose another
    /// than its file's (`yohost check` shows it).
    pub routed: Option<String>,
    /// The API it is written against.
    pub ecosystem: Ecosystem,
    /// Its manifest (defaults if it has none).
    pub manifest: Manifest,
    /// The hooks it implements.
    pub hooks: BTreeSet<Hook>,
    /// Load warnings.
    pub warnings: Vec<String>,
    /// Its commands and flags.
    pub app: AppSurface,
    /// How the processes it runs in or starts are confined, if it has any.
    pub processes: Option<Confinement>,
    /// Its data folder, granted to it for reading and writing
    /// ([`data_dir`](crate::adapter::data_dir)); in a check, the folder it
    /// will have, which may not be made yet. `None` when its plugin
    /// directory has none (it could not be resolved).
    pub data_dir: Option<PathBuf>,
    /// The plugin itself.
    pub plugin: Arc<dyn Plugin>,
    /// What the host measured of its calls since it was loaded
    /// ([`PluginStats::default()`] for a new plugin).
    pub stats: PluginStats,
}

impl LoadedPlugin {
    /// `plugin`, named `name`, running on `engine` and implementing
    /// `hooks`, with the default manifest, written for yohost, from the
    /// file `<engine:name>`, with no warnings, no processes, not routed, and
    /// no figures yet. Set the other fields on the value.
    pub fn new(
        name: &str,
        engine: EngineKind,
        plugin: Arc<dyn Plugin>,
        hooks: impl IntoIterator<Item = Hook>,
    ) -> Self {
        Self {
            name: name.to_string(),
            file: PathBuf::from(format!("<{}:{name}>", engine.as_str())),
            engine,
            routed: None,
            ecosystem: Ecosystem::YOHOST,
            manifest: Manifest::default(),
            hooks: hooks.into_iter().collect(),
            warnings: Vec::new(),
            app: AppSurface::default(),
            processes: None,
            data_dir: None,
            plugin,
            stats: PluginStats::default(),
        }
    }

    /// The same plugin, as another host would hold it: the same code and
    /// what was learnt at load, with no figures yet.
    pub fn share(&self) -> Self {
        Self {
            name: self.name.clone(),
            file: self.file.clone(),
            engine: self.engine,
            routed: self.routed.clone(),
            ecosystem: self.ecosystem,
            manifest: self.manifest.clone(),
            hooks: self.hooks.clone(),
            warnings: self.warnings.clone(),
            app: self.app.clone(),
            processes: self.processes,
            data_dir: self.data_dir.clone(),
            plugin: Arc::clone(&self.plugin),
            stats: PluginStats::default(),
        }
    }

    /// Advisory or required.
    pub fn mode(&self) -> Mode {
        self.manifest.mode
    }

    /// Whether it implements `hook`.
    pub fn has(&self, hook: Hook) -> bool {
        self.hooks.contains(&hook)
    }
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("name", &self.name)
            .field("file", &self.file)
            .field("engine", &self.engine)
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}
