//! pi extensions, unchanged, on the JavaScript engine.
//!
//! The adapter's JavaScript lives in `adapters/pi/js/` (see
//! `adapters/pi/README.md`): the `pi` object an extension's factory
//! receives, the translation of pi's events to yohost hooks ([`PI`]'s
//! shape), and the built-in modules pi extensions import. This module is the
//! Rust side: the flavor, with the host's [`services`](super::services)
//! behind `node:fs` and `pi.exec`.

use super::modules::Builtin;
use super::{load_with, Flavor, RelativeTo, ServiceApi};
use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::grants::Grants;
use crate::manifest::Ecosystem;
use crate::plugin::Loaded;

macro_rules! adapter {
    ($($file:literal),+) => {
        concat!($(include_str!(concat!("../../../../adapters/pi/js/", $file))),+)
    };
}

const CODING_AGENT: &str = adapter!("coding-agent.js");
const PI_AI: &str = adapter!("typebox.js", "pi-ai.js");
const TYPEBOX: &str = adapter!("typebox.js");
const PATH: &str = adapter!("path.js");
const URL: &str = adapter!("url.js");
const FS: &str = adapter!("fs-core.js", "fs.js");
const FS_PROMISES: &str = adapter!("fs-core.js", "fs-promises.js");

const fn builtin(specifier: &'static str, source: &'static str) -> Builtin {
    Builtin { specifier, source }
}

/// The modules a pi extension may import at run time, under pi's current
/// (`@earendil-works/*`) and former (`@mariozechner/*`) names. Anything
/// else (`@earendil-works/pi-tui`, `node:child_process`, npm packages)
/// refuses the extension, naming the import.
pub const BUILTINS: &[Builtin] = &[
    builtin("@earendil-works/pi-coding-agent", CODING_AGENT),
    builtin("@mariozechner/pi-coding-agent", CODING_AGENT),
    builtin("@earendil-works/pi-ai", PI_AI),
    builtin("@mariozechner/pi-ai", PI_AI),
    builtin("typebox", TYPEBOX),
    builtin("@sinclair/typebox", TYPEBOX),
    builtin("node:path", PATH),
    builtin("path", PATH),
    builtin("node:url", URL),
    builtin("url", URL),
    builtin("node:fs", FS),
    builtin("fs", FS),
    builtin("node:fs/promises", FS_PROMISES),
    builtin("fs/promises", FS_PROMISES),
];

/// The pi flavor: pi's modules, and a shape that runs the extension's
/// factory against a `pi` object and maps its handlers to hooks.
pub const PI: Flavor = Flavor {
    builtins: BUILTINS,
    shape: adapter!("shape.js"),
    services: Some(ServiceApi {
        module: "node:fs",
        relative_to: RelativeTo::WorkingDir,
    }),
};

/// Load a pi extension, whose file grants the caller opened.
pub fn load(candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
    let mut loaded = load_with(candidate, PI, grants)?;
    loaded.ecosystem = Some(Ecosystem::Pi);
    Ok(loaded)
}
