//! DSH (DeepSeek Harness) tool plugins for yohost.
//!
//! A DSH tool plugin is an ES module (usually an npm package such as
//! `@deepseek-ai/dsh-tool-todo`) that exports `name`, `inject` (the services
//! it needs), `Config` (a schemastery schema) and `apply(ctx, config)`. This
//! adapter runs it on yohost's JavaScript engine as a flavor: its
//! JavaScript (in `js/`, embedded here) provides `ctx` and the built-in
//! `@deepseek-ai/dsh-tools` module, and maps what `apply` registers to
//! hooks. `README.md` has the table of what maps, what is refused and what
//! is not available.
//!
//! Register it with the host:
//!
//! ```no_run
//! # fn demo() -> Result<(), yohost::HostError> {
//! let host = yohost::PluginHost::builder("plugins")
//!     .adapter(yohost_adapter_dsh::adapter())
//!     .open()?;
//! # Ok(()) }
//! ```

use std::sync::Arc;
use yohost::adapter::Adapter;
use yohost::discovery::Candidate;
use yohost::engines::js::modules::Builtin;
use yohost::engines::js::{load_with, Flavor};
use yohost::grants::Grants;
use yohost::{Ecosystem, EngineKind, LoadError, Loaded};

macro_rules! module {
    ($specifier:literal, $file:literal) => {
        Builtin {
            specifier: $specifier,
            source: include_str!(concat!("../js/", $file)),
        }
    };
}

/// The DSH flavor: `@deepseek-ai/dsh-tools` as a built-in module (plugins
/// list it as a development dependency, so it is not installed with them),
/// and a shape that runs `apply(ctx, config)` against the adapter's `ctx`.
/// Other packages (`zod`, `@deepseek-ai/schemastery`) come from the
/// plugin's own `node_modules`.
pub const FLAVOR: Flavor = Flavor {
    builtins: &[module!("@deepseek-ai/dsh-tools", "dsh-tools.js")],
    internals: &[
        module!("dsh:schema", "schema.js"),
        module!("dsh:shape", "shape/index.js"),
        module!("dsh:shape/context", "shape/context.js"),
        module!("dsh:shape/events", "shape/events.js"),
        module!("dsh:shape/prompt", "shape/prompt.js"),
        module!("dsh:shape/tools", "shape/tools.js"),
    ],
    shape: "dsh:shape",
    prelude: None,
    services: None,
};

/// Loads DSH tool plugins on the JavaScript engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct DshAdapter;

/// The adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn adapter() -> Arc<dyn Adapter> {
    Arc::new(DshAdapter)
}

impl Adapter for DshAdapter {
    fn engine(&self) -> EngineKind {
        EngineKind::Js
    }

    fn ecosystem(&self) -> Ecosystem {
        Ecosystem::Dsh
    }

    /// Load a DSH plugin. Its `Config` gets `plugin.toml`'s `[config]`
    /// table (defaults come from the schema); a plugin whose `inject` needs
    /// a service the adapter does not provide is refused, naming them.
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        let config =
            serde_json::to_value(&candidate.manifest.config).map_err(|e| LoadError::Invalid {
                path: candidate.entry.clone(),
                message: format!("[config] cannot be handed to the plugin: {e}"),
            })?;
        let settings = serde_json::json!({ "config": config });
        let mut loaded = load_with(candidate, &FLAVOR, &settings, grants)?;
        loaded.ecosystem = Some(Ecosystem::Dsh);
        Ok(loaded)
    }
}
