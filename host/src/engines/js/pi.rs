//! pi extensions, unchanged, on the JavaScript engine.

use super::modules::Builtin;
use super::{load_with, Flavor};
use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::manifest::Ecosystem;
use crate::plugin::Loaded;

macro_rules! module {
    ($specifier:literal, $file:literal) => {
        Builtin {
            specifier: $specifier,
            source: include_str!(concat!("../../../../adapters/pi/js/", $file)),
        }
    };
}

/// The modules a pi extension may import at run time, under pi's current
/// (`@earendil-works/*`) and former (`@mariozechner/*`) names. Anything
/// else (`@earendil-works/pi-tui`, `node:child_process`, packages that are
/// not installed) refuses the extension, naming the import.
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
/// factory against a `pi` object and maps its handlers to hooks.
pub const PI: Flavor = Flavor {
    builtins: BUILTINS,
    internals: INTERNALS,
    shape: "pi:shape",
    services: true,
};

/// Load a pi extension.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    let mut loaded = load_with(candidate, &PI, &serde_json::Value::Null)?;
    loaded.ecosystem = Some(Ecosystem::Pi);
    Ok(loaded)
}
