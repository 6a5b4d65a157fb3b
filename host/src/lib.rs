//! yohost: a plugin host for the [yoagent](https://crates.io/crates/yoagent)
//! agent loop.
//!
//! Drop plugins into a directory (Rust dylibs, Wasm components, TypeScript
//! or Python files) and [`PluginHost`] presents them to yoagent as
//! [`Extension`](yoagent::Extension)s: tools, tool policy, output filters,
//! notes before a model request, input checks, stop verifiers and event
//! observers.
//!
//! Plugins of other agent ecosystems load through [`Adapter`](adapter::Adapter)s, one table
//! keyed by engine and ecosystem; adapter crates register theirs with
//! [`PluginHost::builder`], and build on [`adapter`], their one import.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = yohost::PluginHost::open("plugins")?;
//! let agent = yoagent::Agent::from_provider(
//!     yoagent::provider::MockProvider::text("done"),
//!     yoagent::provider::ModelConfig::mock(),
//! )
//! .with_extension(host.extension());
//! # Ok(()) }
//! ```
//!
//! # The API
//!
//! Two front doors:
//! - Embedding, the crate root: [`PluginHost`] (open, watch, report,
//!   [`PluginHost::extension`]), [`PluginHostBuilder`], [`PluginReport`],
//!   [`Refusal`], the directory's files ([`manifest`], [`lockfile`]), the
//!   log targets, and the errors [`HostError`], [`LoadError`],
//!   [`CallError`]. The plugins' tools without a model (an MCP server):
//!   [`ToolRun`]. Plugins in Rust, in process: [`NativePlugin`], or
//!   [`Plugin`] directly. The hook contract is [`contract`].
//! - Adapters for other ecosystems, and engines of their own: [`adapter`].
//!
//! # Fail closed
//!
//! A plugin that throws, panics, times out, runs out of memory or returns a
//! reply the host cannot use has failed, and the failure goes in the safe
//! direction. One module (`session.rs`) enforces this table:
//!
//! | Hook that failed | Result |
//! | --- | --- |
//! | `before_tool` | the call is denied (both modes) |
//! | `on_input` | the input is rejected (both modes) |
//! | `after_tool` | the output is withheld and replaced by an error; a required plugin also fails the run |
//! | `call_tool` | the tool call ends in an error result, which the model reads (a throw: the plugin's own words, after fixed ones); the run goes on in both modes |
//! | any other hook | an advisory plugin's hook is skipped; a required plugin's failure fails the run |
//! | (refused at load) | a required plugin (a `plugin.toml` that does not parse keeps the mode it writes; one that is not TOML counts as required) fails every run; an advisory one is logged at the start of every run |
//!
//! - What the model (and a failed run's message) reads is a fixed text that
//!   names the plugin, the kind of failure and the hook, such as
//!   `[yohost] call denied: plugin 'guard' timed out in before_tool`, never
//!   the plugin's own error text, but for a tool's: a tool's own error is
//!   its result, as pi's and MCP's tools give it, after the fixed words
//!   (cut at 4,096 characters). The detail goes to the log only, on one
//!   line with `run_id`, `plugin`, `hook` and `error_kind`
//!   ([`CallError::kind`]).
//! - A plugin's own error ([`CallError::Guest`]: a JS throw, a Python
//!   exception, an error a plugin returns) fails that call; the plugin keeps
//!   serving the run. A crash or trap, running out of memory, or a timeout
//!   ([`CallError::discards_instance`]) unloads the plugin for the rest of
//!   the run: every later call fails closed without reaching it. The next
//!   run starts clean.
//! - The deadline of every call is enforced once (`invoke.rs`); engines
//!   only use it to interrupt code.
//!
//! # How several plugins combine
//!
//! Plugins run in priority order (lower first), then by name. The run's
//! hooks behind [`HostExtension`] and [`PluginExtension`] (`runset.rs`)
//! enforce this table, in one place:
//!
//! | Hook | How several plugins combine |
//! | --- | --- |
//! | `tools` | the agent's own tools win a name clash, then the plugin that runs first |
//! | `before_tool` | in order; the first deny ends the chain; a rewrite feeds the next. When the arguments were rewritten, every plugin that ran before the last rewrite judges the final arguments again, and rechecks converge or deny: a deny wins, and a plugin that would rewrite them again (a later plugin undid or overrode its rewrite) denies the call, naming itself and the plugin that made the last rewrite |
//! | `after_tool` | chained; each sees the previous edit |
//! | `before_model` | notes joined with newlines; the first stop wins |
//! | `on_input` | the first reject wins |
//! | `on_stop` | continue messages joined; the first fail wins |
//! | `on_event` | every plugin sees every event, in order |
//! | `finish` | every plugin's `finish` runs |
//!
//! [`HostExtension`] declares `rechecks_modified_calls` when any plugin has
//! `before_tool`, so yohost's policies also judge a call that an extension
//! outside yohost rewrote.
//!
//! # Trust
//!
//! Wasm and JavaScript plugins are sandboxed: no file, environment or
//! network access unless their `plugin.toml` grants it, memory limits, and
//! running code is interrupted at its deadline. Dylib and Python plugins
//! are trusted code, not sandboxed: they run with the host's rights.

#![warn(missing_docs)]

mod call;
mod engines;
mod host;
mod load;
mod model;
mod run;
mod sandbox;

pub use load::{lockfile, manifest};

pub use call::error::{CallError, HookError};
pub use call::logging::{DECISION_LOG_TARGET, HOOK_SPAN, PLUGIN_LOG_TARGET};
pub use call::plugin::{CallLimits, Plugin, PluginRun};
pub use call::stats::{HookFigures, PluginFigures, PluginStats};
pub use call::ui::{Asker, Headless, NotifyLevel, UserInterface};
pub use engines::native::NativePlugin;
pub use host::commands::{CommandError, PluginCommand};
pub use host::plugin_host::{PluginHost, PluginHostBuilder};
pub use host::report::{PluginReport, Status, CHECK_RUN_ID};
pub use host::tool_run::{ToolCallOutcome, ToolRun};
pub use load::error::{HostError, LoadError};
pub use load::loaded::{AppSurface, FlagSpec, Loaded, LoadedPlugin};
pub use load::registry::{Refusal, Snapshot};
pub use load::routing::{NodeNeed, NodeNeeds, Routed};
pub use model::{Confinement, Ecosystem, EngineKind, Mode};
pub use run::extension::{HostExtension, PluginExtension, HOST_EXTENSION_NAME};
pub use run::invoke::call_hook;
pub use yohost_contract as contract;

/// Everything an adapter crate needs, in one import: the
/// [`Adapter`](adapter::Adapter) trait and its table, the candidates discovery hands it, file grants,
/// bounded reading of a plugin's files, the engines' seams (a JS
/// `Flavor` for a JavaScript plugin API, the Node engine,
/// the dylib engine's private copies), the process sandbox, workers and
/// the host's bounds. A new engine or ecosystem is an adapter crate built
/// on this module alone, with ids of its own ([`EngineKind::new`],
/// [`Ecosystem::new`]).
pub mod adapter {
    pub use crate::call::{codec, logging, progress, worker};
    #[cfg(feature = "dylib")]
    pub use crate::engines::dylib;
    #[cfg(feature = "js")]
    pub use crate::engines::js;
    #[cfg(feature = "node")]
    pub use crate::engines::node;
    pub use crate::load::adapter::{serving_crate, Adapter, Adapters};
    pub use crate::load::discovery::{engine_for, Candidate, FolderEntry, Found};
    pub use crate::load::fingerprint::{folder_fingerprint, stat, Fingerprint};
    pub use crate::load::{data_dir, grants, manifest, private_dir, source};
    pub use crate::model::{limits, KnownEcosystem, KNOWN_ECOSYSTEMS};
    /// The sandbox of plugin processes: every layer a process of a
    /// plugin runs under, from its grants.
    pub mod sandbox {
        pub use crate::sandbox::*;
    }
    pub use crate::{
        CallError, CallLimits, Ecosystem, EngineKind, LoadError, Loaded, LoadedPlugin, NodeNeed,
        NodeNeeds, Plugin, PluginRun, Routed,
    };
    pub use yohost_contract as contract;
}

/// Not API: what only the `yohost` command and the host's own tests reach
/// inside the library. It may change in any release.
#[doc(hidden)]
pub mod internal {
    #[cfg(feature = "wasm")]
    pub use crate::engines::wasm::cached_artifact;
    pub use crate::load::grants::lexical;
    pub use crate::sandbox::ProcessSandbox;
}
