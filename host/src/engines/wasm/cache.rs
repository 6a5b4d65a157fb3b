//! Compiled components, cached on disk so a second start does not compile
//! again.
//!
//! An artifact is named by the SHA-256 of the component's bytes and
//! wasmtime's [`precompile_compatibility_hash`](Engine::precompile_compatibility_hash),
//! so a changed component or another wasmtime build never reads a stale one.
//! Artifacts are only read from a directory this user owns and nobody else
//! can write (wasmtime must only deserialize bytes it produced itself): the
//! first of `$YOHOST_CACHE_DIR`, `$XDG_CACHE_HOME/yohost/wasm`,
//! `$HOME/.cache/yohost/wasm`, `$TMPDIR/yohost-cache-<uid>/wasm`. Anywhere
//! else, components are compiled in memory each time.

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
        // SAFETY: the artifact lies in a private directory (see
        // `private_dir`) and was written by `precompile_component` below;
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

/// The private cache directory, created if needed.
fn cache_dir() -> Option<PathBuf> {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = env("YOHOST_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("yohost/wasm")))
        .or_else(|| env("HOME").map(|d| d.join(".cache/yohost/wasm")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("yohost-cache-{}/wasm", uid())));
    create_private(&dir).ok()?;
    private_dir(&dir).then_some(dir)
}

#[cfg(unix)]
fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
fn uid() -> u32 {
    0
}

fn create_private(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A real directory (not a link), owned by this user, that no one else can
/// write.
#[cfg(unix)]
fn private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta.is_dir() && meta.uid() == uid() && meta.mode() & 0o022 == 0,
        Err(_) => false,
    }
}

#[cfg(not(unix))]
fn private_dir(dir: &Path) -> bool {
    dir.is_dir()
}

/// Write to a private temporary name, then rename into place.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let partial = path.with_extension(format!("{}.part", std::process::id()));
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path)
}
