//! rutis-agent tools in yohost.
//!
//! rutis-agent hot-plugs tools from shared libraries with a small C ABI:
//!
//! ```c
//! uint32_t    rutis_plugin_tool_count(void);
//! const char* rutis_plugin_tool_schema(uint32_t i);                  // {name, description, parameters}
//! const char* rutis_plugin_tool_invoke(uint32_t i, const char* args); // {"ok":true,...} or an error
//! const char* rutis_plugin_name(void);                               // optional
//! void        rutis_plugin_free(char* s);                            // optional
//! ```
//!
//! [`RutisAgentAdapter`] serves the (dylib, rutis-agent) pair of yohost's
//! adapter table. It recognises such a library in a plugin directory by its
//! exported symbol names, without running it, and offers its tools through
//! the `tools` and `call_tool` hooks. Register it with
//! `PluginHost::builder(dir).adapter(yohost_adapter_rutis_agent::adapter())`.
//!
//! [`tool_defs`] turns rutis-agent `ToolDef`s of a Rust host into a yohost
//! plugin, without depending on rutis-agent.
//!
//! Like yohost's own dylibs, these libraries are trusted code, not
//! sandboxed: they run in the host's process with its rights.

mod detect;
mod library;
mod plugin;
mod reply;
mod schema;
pub mod tool_defs;

pub use schema::{SchemaError, MAX_SCHEMA_BYTES, MAX_TOOLS};

use std::sync::Arc;
use yohost::adapter::grants::Grants;
use yohost::adapter::Adapter;
use yohost::adapter::Candidate;
use yohost::Ecosystem;
use yohost::{EngineKind, LoadError, Loaded};

/// The rutis-agent ecosystem's id, as a manifest's `ecosystem = "rutis-agent"`
/// names it.
pub const ECOSYSTEM: Ecosystem = Ecosystem::new("rutis-agent");

/// Loads rutis-agent tool libraries: the (dylib, rutis-agent) entry of
/// yohost's adapter table.
#[derive(Debug, Default, Clone, Copy)]
pub struct RutisAgentAdapter;

/// The adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn adapter() -> Arc<dyn Adapter> {
    Arc::new(RutisAgentAdapter)
}

impl Adapter for RutisAgentAdapter {
    fn engine(&self) -> EngineKind {
        EngineKind::DYLIB
    }

    fn ecosystem(&self) -> Ecosystem {
        ECOSYSTEM
    }

    /// Open a private copy of the library, read and check every tool's
    /// schema, and refuse it with the reason when anything is malformed.
    fn load(&self, candidate: &Candidate, _grants: Grants) -> Result<Loaded, LoadError> {
        plugin::load(candidate)
    }

    /// A library that exports `rutis_plugin_tool_count` and not yohost's
    /// own entry point, found in the file's bytes (read bounded, without
    /// blocking, and without loading it).
    fn recognises(&self, candidate: &Candidate) -> bool {
        detect::is_tool_library(&candidate.entry)
    }
}
