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
//! keyed by engine and ecosystem ([`adapter`]); adapter crates register
//! theirs with [`PluginHost::builder`].
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
//! - Embedding: [`PluginHost`] (open, watch, report, [`PluginHost::extension`]),
//!   [`PluginHostBuilder`], [`PluginReport`], [`Refusal`], [`Manifest`](manifest::Manifest), and
//!   the errors [`HostError`], [`LoadError`], [`CallError`].
//! - Plugins in Rust, in process: [`NativePlugin`], or [`Plugin`] directly.
//! - Adapters for other ecosystems: [`adapter::Adapter`], [`discovery::Candidate`], [`Loaded`],
//!   the file grants ([`grants`]), the engines' seams ([`engines`]: a JS
//!   [`Flavor`](engines::js::Flavor) for JS plugin APIs), [`limits`] and
//!   [`logging`]. The hook contract is [`contract`].
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
//! | `call_tool` | the tool call ends in an error; a required plugin also fails the run |
//! | any other hook | an advisory plugin's hook is skipped; a required plugin's failure fails the run |
//! | (refused at load) | a required plugin (a `plugin.toml` that does not parse keeps the mode it writes; one that is not TOML counts as required) fails every run; an advisory one is logged at the start of every run |
//!
//! - What the model (and a failed run's message) reads is a fixed text that
//!   names the plugin, the kind of failure and the hook, such as
//!   `[yohost] call denied: plugin 'guard' timed out in before_tool`, never
//!   the plugin's own error text. The detail goes to the log only, on one
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
pub mod engines;
mod host;
mod load;
mod model;
mod run;
pub mod sandbox;

pub use call::{codec, logging, worker};
pub use load::{adapter, discovery, grants, lockfile, manifest, private_dir, source};
pub use model::limits;

pub use call::error::{CallError, HookError};
pub use call::plugin::{CallLimits, Plugin, PluginRun};
pub use call::stats::{HookFigures, PluginFigures, PluginStats};
pub use engines::native::NativePlugin;
pub use host::plugin_host::{PluginHost, PluginHostBuilder};
pub use host::report::{PluginReport, Status, CHECK_RUN_ID};
pub use load::error::{HostError, LoadError};
pub use load::loaded::{Loaded, LoadedPlugin};
pub use load::registry::{Refusal, Snapshot};
pub use load::routing::{NodeNeed, NodeNeeds, Routed};
pub use model::{Confinement, Ecosystem, EngineKind, Mode};
pub use run::extension::{HostExtension, PluginExtension, HOST_EXTENSION_NAME};
pub use run::invoke::call_hook;
pub use yohost_contract as contract;
