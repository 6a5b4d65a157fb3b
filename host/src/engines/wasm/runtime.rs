//! The one wasmtime [`Engine`] and [`Linker`] every Wasm plugin shares, and
//! the epoch ticker that lets a call's deadline interrupt running code.

use super::released;
use super::sandbox::State;
use super::version::WitVersion;
use std::sync::OnceLock;
use std::time::Duration;
use wasmtime::component::Linker;
use wasmtime::{Config, Engine};

/// How often the epoch advances. A guest running past its deadline is
/// interrupted at most one tick late.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The shared engine and linker (WASI and the `host` import of every
/// version spoken).
pub(super) struct Runtime {
    /// Compiles and runs every component.
    pub engine: Engine,
    /// WASI p2 (sync) plus `yohost:plugin/host` of each version.
    pub linker: Linker<State>,
    /// The versions of `yohost:plugin` spoken, oldest first.
    pub versions: &'static [&'static dyn WitVersion],
}

/// The runtime, made on first use; its ticker thread starts with it.
pub(super) fn runtime() -> Result<&'static Runtime, String> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            build(&released::RELEASED).map_err(|e| format!("cannot start the Wasm engine: {e:?}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A runtime that speaks `versions`, its ticker started.
pub(super) fn build(versions: &'static [&'static dyn WitVersion]) -> wasmtime::Result<Runtime> {
    let mut config = Config::new();
    config.epoch_interruption(true);
    let engine = Engine::new(&config)?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    super::denied::add_to_linker(&mut linker)?;
    for version in versions {
        version.add_to_linker(&mut linker)?;
    }
    start_ticker(&engine);
    Ok(Runtime {
        engine,
        linker,
        versions,
    })
}

/// Advance the engine's epoch every [`EPOCH_TICK`] while the engine lives.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new()
        .name("yohost-wasm-epoch".into())
        .spawn(move || loop {
            std::thread::sleep(EPOCH_TICK);
            match weak.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => return,
            }
        });
    if let Err(e) = spawned {
        // Without a ticker no deadline fires inside the guest; the host still
        // abandons the wait at the deadline.
        tracing::error!("cannot start the Wasm epoch ticker: {e}");
    }
}
