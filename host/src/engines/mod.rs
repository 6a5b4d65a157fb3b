//! The engines, one module each, and the entry point [`load`], which
//! dispatches through the [`Adapters`] table.
//!
//! Each engine turns a [`Candidate`] of yohost's own API into a [`Loaded`]
//! plugin or a [`LoadError`] a person can act on; `Own` is the table entry
//! that serves an engine's (engine, yohost) pair. An engine left out of the
//! build (its cargo feature off) refuses its plugins with the feature to
//! enable. No engine knows a foreign ecosystem: those pairs are adapters'.
//!
//! Before any adapter runs, the plugin's file grants are opened
//! ([`Grants::open`], in [`Adapters::load`]): a granted directory that cannot
//! be opened refuses the plugin whatever its engine. The sandboxed engines
//! (Wasm, JavaScript) use the opened grants; dylib and Python plugins are
//! trusted code and use the file system directly.

use crate::load::adapter::{Adapter, Adapters};
use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::grants::Grants;
use crate::load::loaded::Loaded;
use crate::model::Ecosystem;
use crate::model::EngineKind;
use std::sync::Arc;

#[cfg(feature = "dylib")]
pub mod dylib;
#[cfg(feature = "js")]
pub mod js;
pub(crate) mod native;
#[cfg(feature = "node")]
pub mod node;
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "wasm")]
pub mod wasm;

impl Default for Adapters {
    /// The built-in set: yohost's own plugins on every engine. Foreign
    /// ecosystems come from adapter crates.
    fn default() -> Self {
        let mut adapters = Adapters::empty();
        for engine in [
            EngineKind::DYLIB,
            EngineKind::WASM,
            EngineKind::JS,
            EngineKind::PYTHON,
            EngineKind::NODE,
        ] {
            adapters.register(Arc::new(Own(engine)));
        }
        adapters
    }
}

/// The table entry for yohost's own plugins on one engine.
pub(crate) struct Own(pub(crate) EngineKind);

impl Adapter for Own {
    fn engine(&self) -> EngineKind {
        self.0
    }

    fn ecosystem(&self) -> Ecosystem {
        Ecosystem::YOHOST
    }

    fn available(&self) -> Result<(), String> {
        match self.0 {
            #[cfg(feature = "node")]
            EngineKind::NODE => node::node()
                .map(|_| ())
                .map_err(|missing| missing.to_string()),
            #[cfg(not(feature = "node"))]
            EngineKind::NODE => Err(
                "this host was built without the `node` feature, which runs the Node engine".into(),
            ),
            _ => Ok(()),
        }
    }

    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        #[cfg_attr(not(any(feature = "wasm", feature = "js")), allow(unused_variables))]
        let grants = grants;
        match self.0 {
            EngineKind::DYLIB => {
                #[cfg(feature = "dylib")]
                return dylib::load(candidate);
                #[cfg(not(feature = "dylib"))]
                return Err(missing(candidate, "dylib"));
            }
            EngineKind::WASM => {
                #[cfg(feature = "wasm")]
                return wasm::load(candidate, &grants);
                #[cfg(not(feature = "wasm"))]
                return Err(missing(candidate, "wasm"));
            }
            EngineKind::JS => {
                #[cfg(feature = "js")]
                return js::load(candidate, grants);
                #[cfg(not(feature = "js"))]
                return Err(missing(candidate, "js"));
            }
            EngineKind::NODE => {
                #[cfg(feature = "node")]
                return node::load(candidate, grants);
                #[cfg(not(feature = "node"))]
                return Err(missing(candidate, "node"));
            }
            EngineKind::PYTHON => {
                #[cfg(feature = "python")]
                return python::load(candidate);
                #[cfg(not(feature = "python"))]
                return Err(missing(candidate, "python"));
            }
            // Registered only for the engines above.
            _ => Err(LoadError::UnknownFile(candidate.entry.clone())),
        }
    }
}

#[allow(dead_code)] // used only when an engine's feature is off
fn missing(candidate: &Candidate, feature: &'static str) -> LoadError {
    LoadError::EngineMissing {
        path: candidate.entry.clone(),
        feature,
    }
}
