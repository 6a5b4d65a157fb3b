//! The model at the bottom of the host: what kinds of plugin there are and
//! what bounds them. It depends on nothing else in the crate.
//!
//! - [`EngineKind`]: the engine a plugin runs on;
//! - [`Mode`]: what a plugin's failure means for the run;
//! - [`Ecosystem`]: the plugin API a plugin is written against;
//! - [`Confinement`]: whether the kernel confines a plugin's processes;
//! - [`limits`]: the fixed bounds on what a plugin sends the host;
//! - `names`: the known name closest to a misspelt one;
//! - `sync`: the one poisoning policy of the host's locks.

use serde::{Deserialize, Serialize};

pub mod limits;
// The closest known name, for the JS flavors' unknown names and the
// manifest's unknown keys.
pub(crate) mod names;
pub(crate) mod sync;

/// The engine a plugin runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum EngineKind {
    /// Rust closures in the host's own process ([`NativePlugin`](crate::NativePlugin)).
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
    /// A Model Context Protocol server, from an `mcp.json` file.
    Mcp,
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
            EngineKind::Mcp => "mcp",
        }
    }
}

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

/// Which plugin API a plugin is written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Ecosystem {
    /// yohost's own contract.
    #[default]
    Yohost,
    /// A pi extension.
    Pi,
    /// A DSH tool plugin.
    Dsh,
    /// A rutis-agent tool.
    RutisAgent,
    /// A Model Context Protocol server.
    Mcp,
}

impl Ecosystem {
    /// The ecosystem's name as the manifest spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Yohost => "yohost",
            Ecosystem::Pi => "pi",
            Ecosystem::Dsh => "dsh",
            Ecosystem::RutisAgent => "rutis-agent",
            Ecosystem::Mcp => "mcp",
        }
    }
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
