//! yohost: a plugin host for the [yoagent](https://crates.io/crates/yoagent)
//! agent loop.
//!
//! Drop plugins into a directory (Rust dylibs, Wasm components, TypeScript,
//! Python, or pi extensions) and [`PluginHost`] presents them to yoagent as
//! [`Extension`](yoagent::Extension)s: tools, tool policy, output filters,
//! notes before a model request, input checks, stop verifiers and event
//! observers.
//!
//! Plugins of other agent ecosystems load through [`Adapter`]s, one table
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
//! # Fail closed
//!
//! A plugin that throws, panics, times out, or returns a reply the host
//! cannot parse has failed, and the failure goes in the safe direction: a
//! failing `before_tool` denies the call, a failing `on_input` rejects the
//! input, a failing `after_tool` withholds the output. Any other hook of an
//! advisory plugin is skipped and logged; a required plugin's failure fails
//! the run with a message that names it. See [`session`] for the table.
//!
//! # Trust
//!
//! Wasm and JavaScript plugins are sandboxed: no file, environment or
//! network access unless their `plugin.toml` grants it, memory limits, and
//! running code is interrupted at its deadline. Dylib and Python plugins
//! are trusted code, not sandboxed: they run with the host's rights.

pub mod adapter;
pub mod codec;
pub mod convert;
pub mod discovery;
pub mod engines;
pub mod error;
pub mod extension;
pub mod host;
pub mod invoke;
pub mod limits;
pub mod logging;
pub mod manifest;
pub mod native;
pub mod plugin;
pub mod private_dir;
pub mod registry;
pub mod report;
pub(crate) mod runset;
pub mod session;
pub mod source;
pub(crate) mod tool;
pub mod worker;

pub use adapter::{Adapter, Adapters};
pub use discovery::Candidate;
pub use error::{CallError, HookError, HostError, LoadError};
pub use extension::{HostExtension, PluginExtension, HOST_EXTENSION_NAME};
pub use host::{PluginHost, PluginHostBuilder};
pub use manifest::{Ecosystem, Manifest, Mode};
pub use native::NativePlugin;
pub use plugin::{CallLimits, EngineKind, Loaded, LoadedPlugin, Plugin, PluginRun};
pub use report::{PluginReport, Status};
pub use yohost_contract as contract;
