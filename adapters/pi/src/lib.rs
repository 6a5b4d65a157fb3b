//! pi extensions for yohost, unchanged, on yohost's JavaScript engine.
//!
//! A pi extension's default export is pi's factory, `(pi) => void`. This
//! adapter is a flavor of the engine: its JavaScript (in `js/`, embedded
//! here) provides the `pi` object, maps pi's events to yohost hooks (the
//! shape, in `js/shape/`, by concern), and provides the modules pi
//! extensions import at run time. `README.md` has the table of what maps,
//! what is refused and what is not available.
//!
//! Register it with the host (the `yohost` command registers it):
//!
//! ```no_run
//! # fn demo() -> Result<(), yohost::HostError> {
//! let host = yohost::PluginHost::builder("plugins")
//!     .adapter(yohost_adapter_pi::adapter())
//!     .open()?;
//! # Ok(()) }
//! ```

use std::sync::Arc;
use yohost::adapter::Adapter;
use yohost::discovery::Candidate;
use yohost::engines::js::modules::Builtin;
use yohost::engines::js::{load_with, Flavor, RelativeTo, ServiceApi};
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

/// The modules a pi extension may import at run time, under pi's current
/// (`@earendil-works/*`) and former (`@mariozechner/*`) names. Anything
/// else (`@earendil-works/pi-tui`, `node:child_process`, packages that are
/// not installed in the extension's folder) refuses the extension, naming
/// the import.
pub const BUILTINS: &[Builtin] = &[
    module!("@earendil-works/pi-coding-agent", "coding-agent.js"),
    module!("@mariozechner/pi-coding-agent", "coding-agent.js"),
    module!("@earendil-works/pi-ai", "pi-ai.js"),
    module!("@mariozechner/pi-ai", "pi-ai.js"),
    module!("typebox", "typebox.js"),
    module!("@sinclair/typebox", "typebox.js"),
    module!("node:path", "path.js"),
    module!("path", "path.js"),
    module!("node:url", "url.js"),
    module!("url", "url.js"),
    module!("node:fs", "fs.js"),
    module!("fs", "fs.js"),
    module!("node:fs/promises", "fs-promises.js"),
    module!("fs/promises", "fs-promises.js"),
];

/// The adapter's own modules: the shape, by concern, and the file
/// functions `node:fs` and `node:fs/promises` share.
const INTERNALS: &[Builtin] = &[
    module!("pi:shape", "shape/index.js"),
    module!("pi:shape/api", "shape/api.js"),
    module!("pi:shape/context", "shape/context.js"),
    module!("pi:shape/events", "shape/events.js"),
    module!("pi:shape/hooks", "shape/hooks.js"),
    module!("pi:shape/refusals", "shape/refusals.js"),
    module!("pi:shape/tools", "shape/tools.js"),
    module!("pi:fs-core", "fs-core.js"),
];

/// The pi flavor: pi's modules, and a shape that runs the extension's
/// factory against a `pi` object and maps its handlers to hooks. Files and
/// processes go through the host's services, within the manifest's grants.
pub const PI: Flavor = Flavor {
    builtins: BUILTINS,
    internals: INTERNALS,
    shape: "pi:shape",
    services: Some(ServiceApi {
        module: "node:fs",
        relative_to: RelativeTo::WorkingDir,
    }),
};

/// Loads pi extensions on the JavaScript engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiAdapter;

/// The adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn adapter() -> Arc<dyn Adapter> {
    Arc::new(PiAdapter)
}

impl Adapter for PiAdapter {
    fn engine(&self) -> EngineKind {
        EngineKind::Js
    }

    fn ecosystem(&self) -> Ecosystem {
        Ecosystem::Pi
    }

    /// Load a pi extension: refused, naming the event or call, when it
    /// would rewrite history or the request.
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        let mut loaded = load_with(candidate, &PI, &serde_json::Value::Null, grants)?;
        loaded.ecosystem = Some(Ecosystem::Pi);
        Ok(loaded)
    }
}
