//! Compiled components, cached on disk so a second start does not compile
//! again.
//!
//! An artifact is named by the SHA-256 of the component's bytes and
//! wasmtime's [`precompile_compatibility_hash`](Engine::precompile_compatibility_hash),
//! so a changed component or another wasmtime build never reads a stale one.
//! Artifacts are only read from the private folder `wasm` of
//! [`crate::load::private_dir`] (wasmtime must only deserialize bytes it produced
//! itself). When that folder cannot be used, components are compiled in
//! memory each time, with a warning.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::component::Component;
use wasmtime::Engine;

/// The component of `wasm`: from the cache when an artifact is there and
/// loads, else compiled (and the artifact written for next time).
pub(super) fn compile(engine: &Engine, wasm: &[u8]) -> Result<Component, String> {
    let Some(artifact) = artifact_path(engine, wasm) else {
        return Component::new(engine, wasm).map_err(|e| format!("not a valid component: {e:?}"));
    };
    if artifact.is_file() {
        // SAFETY: the artifact lies in a private folder (see
        // `crate::load::private_dir`) and was written by `precompile_component` below;
        // wasmtime checks its version and configuration before using it.
        match unsafe { Component::deserialize_file(engine, &artifact) } {
            Ok(component) => return Ok(component),
            Err(e) => {
                tracing::debug!(artifact = %artifact.display(), "cached component unusable, compiling again: {e}")
            }
        }
    }
    let compiled = engine
        .precompile_component(wasm)
        .map_err(|e| format!("not a valid component: {e:?}"))?;
    if let Err(e) = write_atomically(&artifact, &compiled) {
        tracing::warn!(artifact = %artifact.display(), "cannot cache the compiled component: {e}");
    }
    // SAFETY: `compiled` was produced by this engine just now.
    unsafe { Component::deserialize(engine, &compiled) }
        .map_err(|e| format!("cannot load the compiled component: {e:?}"))
}

/// Where the artifact of `wasm` is cached, if there is a private cache
/// directory.
pub(super) fn artifact_path(engine: &Engine, wasm: &[u8]) -> Option<PathBuf> {
    let mut compat = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut compat);
    let digest = Sha256::digest(wasm);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(cache_dir()?.join(format!("{hex}-{:016x}.cwasm", compat.finish())))
}

/// The private cache folder, if it can be used (see [`crate::load::private_dir`]).
fn cache_dir() -> Option<PathBuf> {
    crate::load::private_dir::cache_folder("wasm")
        .map_err(|e| tracing::warn!("compiled components are not cached: {e}"))
        .ok()
}

/// Write to a private temporary name, then rename into place.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let partial = path.with_extension(format!("{}.part", std::process::id()));
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path)
}
