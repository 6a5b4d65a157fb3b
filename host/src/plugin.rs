//! The engine-neutral plugin interface.
//!
//! Every engine (dylib, Wasm, JS, Python) and every adapter turns a file into
//! a [`Plugin`]. The host never looks inside: it opens a [`PluginRun`] per
//! agent run and sends it [`HookCall`]s. Deadlines, reply checks and spans
//! (`invoke.rs`) and the fail-closed rules (`session.rs`) live in
//! the host, once, for all engines. An engine maps its failures to
//! [`CallError`] the same way as every other: the plugin's own error (a JS
//! throw, a Python exception, an error a dylib or Wasm plugin returns) is
//! `Guest`; a panic, a trap or a broken engine is `Crashed`.

use crate::error::CallError;
use crate::manifest::{Ecosystem, Manifest, Mode};
use crate::routing::Routed;
use crate::sandbox::Confinement;
use crate::stats::PluginStats;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use yohost_contract::{Hook, HookCall, HookReply, RunInfo};

/// The engine a plugin runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum EngineKind {
    /// Rust closures in the host's own process ([`NativePlugin`](crate::native::NativePlugin)).
    Native,
    /// A Rust dylib through the C ABI.
    Dylib,
    /// A Wasm component on wasmtime.
    Wasm,
    /// TypeScript or JavaScript on QuickJS.
    Js,
    /// Python on embedded CPython.
    Python,
    /// TypeScript or JavaScript in a `node` process (`engine = "node"`).
    Node,
}

impl EngineKind {
    /// The engine's name.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Native => "native",
            EngineKind::Dylib => "dylib",
            EngineKind::Wasm => "wasm",
            EngineKind::Js => "js",
            EngineKind::Python => "python",
            EngineKind::Node => "node",
        }
    }
}

/// What bounds one hook call.
#[derive(Debug, Clone)]
pub struct CallLimits {
    /// When the host stops waiting and reports a timeout
    /// (the host enforces it, once). An
    /// engine that can interrupt running code (epochs, interrupt handlers,
    /// async exceptions) stops it here; none times the call itself.
    pub deadline: Instant,
    /// Cancelled when the run is cancelled.
    pub cancel: CancellationToken,
}

/// A loaded plugin, ready to serve runs.
#[async_trait::async_trait]
pub trait Plugin: Send + Sync {
    /// Open the plugin for one run. Engines that keep per-run state (a fresh
    /// Wasm instance) create it here; stateless ones share themselves.
    async fn open_run(&self, run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError>;
}

/// A plugin opened for one run.
#[async_trait::async_trait]
pub trait PluginRun: Send + Sync {
    /// Run one hook. The host wraps this in the deadline, the run's cancel
    /// and a span; the engine returns the typed reply or why it failed.
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<HookReply, CallError>;

    /// The run ended: release per-run state. Called once, after `finish`.
    async fn close(&self) {}
}

/// What an engine found when it loaded a plugin.
pub struct Loaded {
    /// The plugin.
    pub plugin: Arc<dyn Plugin>,
    /// The hooks it implements; the host calls no others.
    pub hooks: BTreeSet<Hook>,
    /// The name the plugin gives itself, if any (the manifest's wins).
    pub name: Option<String>,
    /// Things a person should know that do not stop it loading.
    pub warnings: Vec<String>,
    /// Whether it has code that runs when it is unloaded (pi's
    /// `session_shutdown`): the host calls that even when it has no hooks.
    pub unloads: bool,
    /// The API it was written against, if the engine detected it.
    pub ecosystem: Option<Ecosystem>,
    /// Set when `engine = "auto"` sent it to another engine than its
    /// file's ([`crate::routing`]): which, and why. Engines leave it `None`.
    pub routed: Option<Routed>,
    /// How the processes it runs in or starts are confined, for a plugin
    /// that has any (the Node engine; `exec` granted); `None` otherwise.
    pub processes: Option<Confinement>,
}

/// A plugin the host loaded, with what it knows about it.
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
    /// How the processes it runs in or starts are confined, if it has any.
    pub processes: Option<Confinement>,
    /// The plugin itself.
    pub plugin: Arc<dyn Plugin>,
    /// What the host measured of its calls since it was loaded
    /// ([`PluginStats::default()`] for a new plugin).
    pub stats: PluginStats,
}

impl LoadedPlugin {
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
