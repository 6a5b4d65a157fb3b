//! The engines, one module each, behind one entry point: [`load`].
//!
//! Each engine turns a [`Candidate`] into a [`Loaded`] plugin or a
//! [`LoadError`] a person can act on. An engine left out of the build (its
//! cargo feature off) refuses its plugins with the feature to enable.
//!
//! Before any engine runs, the plugin's file grants are opened
//! ([`Grants::open`]): a granted directory that cannot be opened refuses the
//! plugin in every engine. The sandboxed engines (Wasm, JavaScript) get the
//! opened grants; dylib and Python plugins are trusted code and use the
//! file system directly.

use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::grants::Grants;
use crate::plugin::{EngineKind, Loaded};

pub mod dylib;
#[cfg(feature = "js")]
pub mod js;
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "wasm")]
pub mod wasm;

/// Load a candidate on its engine.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    if candidate.engine == EngineKind::Native {
        return Err(LoadError::UnknownFile(candidate.entry.clone()));
    }
    #[cfg_attr(not(any(feature = "wasm", feature = "js")), allow(unused_variables))]
    let grants =
        Grants::open(candidate.base_dir(), &candidate.manifest.capabilities).map_err(|error| {
            LoadError::Grant {
                path: candidate.entry.clone(),
                error,
            }
        })?;
    match candidate.engine {
        EngineKind::Native => Err(LoadError::UnknownFile(candidate.entry.clone())),
        EngineKind::Dylib => dylib::load(candidate),
        EngineKind::Wasm => {
            #[cfg(feature = "wasm")]
            return wasm::load(candidate, &grants);
            #[cfg(not(feature = "wasm"))]
            return Err(missing(candidate, "wasm"));
        }
        EngineKind::Js => {
            #[cfg(feature = "js")]
            return js::load(candidate, grants);
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
