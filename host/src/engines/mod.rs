//! The engines, one module each, behind one entry point: [`load`].
//!
//! Each engine turns a [`Candidate`] into a [`Loaded`] plugin or a
//! [`LoadError`] a person can act on. An engine left out of the build (its
//! cargo feature off) refuses its plugins with the feature to enable. A
//! plugin written for an ecosystem its engine has no adapter for is refused
//! before the engine sees it.

use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::manifest::Ecosystem;
use crate::plugin::{EngineKind, Loaded};

pub mod dylib;
#[cfg(feature = "js")]
pub mod js;
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "wasm")]
pub mod wasm;

/// Load a candidate on its engine, if the engine serves its ecosystem.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    // Which (engine, ecosystem) pairs have an adapter: every engine runs
    // yohost's own contract; the JS engine also runs pi extensions.
    match (candidate.engine, candidate.ecosystem) {
        (_, Ecosystem::Yohost) | (EngineKind::Js, Ecosystem::Pi) => {}
        (engine, ecosystem) => {
            return Err(LoadError::NoAdapter {
                path: candidate.entry.clone(),
                engine,
                ecosystem,
            })
        }
    }
    match candidate.engine {
        EngineKind::Native => Err(LoadError::UnknownFile(candidate.entry.clone())),
        EngineKind::Dylib => dylib::load(candidate),
        EngineKind::Wasm => {
            #[cfg(feature = "wasm")]
            return wasm::load(candidate);
            #[cfg(not(feature = "wasm"))]
            return Err(missing(candidate, "wasm"));
        }
        EngineKind::Js => {
            #[cfg(feature = "js")]
            return js::load(candidate);
            #[cfg(not(feature = "js"))]
            return Err(missing(candidate, "js"));
        }
        EngineKind::Python => {
            #[cfg(feature = "python")]
            return python::load(candidate);
            #[cfg(not(feature = "python"))]
            return Err(missing(candidate, "python"));
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
