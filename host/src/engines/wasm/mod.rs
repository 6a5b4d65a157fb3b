//! Wasm component plugins on wasmtime: the way to run a plugin you do not
//! fully trust.
//!
//! - **Interface.** A component exports `yohost:plugin/guest@<version>` and
//!   may import `yohost:plugin/host@<version>` (logging) and WASI p2, for
//!   one of the versions the host speaks (`version.rs`), each frozen in
//!   `contract/wit/since_v<version>/plugin.wit` and bound by a module of
//!   its own that converts to the contract's types (`since_v0_1_0`). A
//!   component built for a version the host does not speak is refused
//!   before it is linked, naming its version and the host's.
//! - **Compiled once.** One shared engine and linker ([`runtime`]); each
//!   component is compiled once and cached on disk ([`cache`]), then
//!   pre-linked (`InstancePre`) at load.
//! - **A fresh instance per run.** [`Plugin::open_run`] instantiates;
//!   [`PluginRun::close`] drops the instance. A trapped instance is dropped
//!   (it cannot be entered again); the session fails the rest of the run
//!   closed ([`CallError::discards_instance`]).
//! - **Sandboxed, default deny** ([`sandbox`]): no file, environment
//!   variable, network or wall clock unless `plugin.toml` grants it; memory
//!   capped per instance (64 MiB unless `limits.memory_mib` says otherwise,
//!   reported as [`CallError::OutOfMemory`]); a call still running at the
//!   deadline the host gives it is interrupted by an epoch deadline, and so
//!   is a call whose run is cancelled.
//! - **Threads.** Calls are synchronous wasmtime calls on the plugin's
//!   worker threads ([`crate::call::worker`]), so a guest that spins never holds
//!   an async worker; the epoch deadline bounds how long it holds its
//!   thread, and calls of other runs take another worker meanwhile.

pub mod cache;
mod denied;
mod released;
pub mod runtime;
pub mod sandbox;
#[cfg(test)]
mod since_next;
mod since_v0_1_0;
mod version;

use crate::call::error::CallError;
use crate::call::plugin::{CallLimits, Plugin, PluginRun};
use crate::call::worker::WorkerSlot;
use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::loaded::Loaded;
use crate::model::sync::lock;
use runtime::Runtime;
use sandbox::{Grants, Interrupted, State};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use version::{VersionedGuest, VersionedPre};
use wasmtime::Store;
use yohost_contract::{Hook, HookCall, RunInfo};

/// How long a component may take to answer `name` and `hooks` at load.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(5);

/// Load a Wasm component plugin, whose file grants the caller opened
/// (`files`).
pub fn load(
    candidate: &Candidate,
    files: &crate::load::grants::Grants,
) -> Result<Loaded, LoadError> {
    let runtime = runtime::runtime().map_err(|message| LoadError::Invalid {
        path: candidate.entry.clone(),
        message,
    })?;
    load_in(runtime, candidate, files)
}

/// Load a Wasm component plugin on `runtime`, for the version of the
/// plugin interface it was built for.
fn load_in(
    runtime: &Runtime,
    candidate: &Candidate,
    files: &crate::load::grants::Grants,
) -> Result<Loaded, LoadError> {
    let path = &candidate.entry;
    let invalid = |message: String| LoadError::Invalid {
        path: path.clone(),
        message,
    };
    // Read as every plugin file is: a regular file, without blocking, at
    // most the size a library may have.
    let wasm = crate::load::source::read_bytes(path, crate::model::limits::MAX_LIBRARY_BYTES)
        .map_err(|e| invalid(format!("cannot read the component: {e}")))?;
    if wasm.get(..8) == Some(b"\0asm\x01\0\0\0") {
        return Err(invalid(
            "a core Wasm module, not a component: build it with `--target wasm32-wasip2` (yohost-sdk's `wasm` feature)".into(),
        ));
    }
    let component = cache::compile(&runtime.engine, &wasm).map_err(invalid)?;
    let version =
        version::pick(runtime.versions, &runtime.engine, &component).map_err(|message| {
            LoadError::IncompatibleApi {
                path: path.clone(),
                message,
            }
        })?;
    let pre = runtime
        .linker
        .instantiate_pre(&component)
        .and_then(|pre| version.prepare(pre))
        .map_err(|e| invalid(format!("cannot link the component: {e:?}")))?;
    if let Some(file) = files.iter().find(|g| g.is_file()) {
        return Err(LoadError::Refused {
            path: path.clone(),
            message: format!(
                "a Wasm component is given folders, not files: grant the folder of {} instead",
                file.written().display()
            ),
        });
    }
    let grants = Grants::of(candidate, files);
    let mut warnings = Vec::new();
    if candidate.manifest.capabilities.exec {
        warnings.push(
            "capabilities.exec has no effect: a Wasm component cannot start processes".into(),
        );
    }
    let mut plugin = Template {
        name: candidate.name.clone(),
        engine: runtime.engine.clone(),
        pre,
        grants,
    };
    let (own_name, hooks) = plugin
        .probe()
        .map_err(|e| invalid(format!("failed at load: {e}")))?;
    // Log lines carry the name the host gives the plugin (the registry's
    // rule: the manifest's, else the plugin's own).
    if !candidate.named_by_manifest && !own_name.is_empty() {
        plugin.name = own_name.clone();
    }
    let plugin = Arc::new(WasmPlugin {
        template: Arc::new(plugin),
        worker: Arc::new(WorkerSlot::new("wasm")),
    });
    let mut loaded = Loaded::new(plugin, hooks);
    loaded.name = Some(own_name);
    loaded.warnings = warnings;
    Ok(loaded)
}

/// Where the compiled artifact of the component `wasm` is cached, if there
/// is a cache directory.
pub fn cached_artifact(wasm: &[u8]) -> Option<PathBuf> {
    cache::artifact_path(&runtime::runtime().ok()?.engine, wasm)
}

/// What every instance of a plugin is made from.
struct Template {
    /// The plugin's name, for its log lines.
    name: String,
    /// The engine the component was compiled for.
    engine: wasmtime::Engine,
    /// The component, linked for the version it was built for.
    pre: Box<dyn VersionedPre>,
    grants: Grants,
}

impl Template {
    /// A fresh, sandboxed instance serving `run_id`.
    fn instantiate(&self, run_id: &str) -> Result<Instance, CallError> {
        let state =
            State::new(&self.grants, &self.name, run_id).map_err(CallError::CapabilityDenied)?;
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.memory);
        store.epoch_deadline_callback(|ctx| match ctx.data().interrupted() {
            Some(why) => Err(wasmtime::Error::new(why)),
            None => Ok(wasmtime::UpdateDeadline::Continue(1)),
        });
        let mut instance = Instance { store, guest: None };
        instance.arm(Instant::now() + LOAD_TIMEOUT, None);
        let started = Instant::now();
        match self.pre.instantiate(&mut instance.store) {
            Ok(guest) => {
                instance.guest = Some(guest);
                Ok(instance)
            }
            Err(e) => Err(instance.failure(e, started)),
        }
    }

    /// Instantiate once to read the plugin's name and hooks.
    fn probe(&self) -> Result<(String, BTreeSet<Hook>), CallError> {
        let mut instance = self.instantiate("")?;
        let started = Instant::now();
        instance.arm(started + LOAD_TIMEOUT, None);
        let Instance { store, guest } = &mut instance;
        let guest = guest.as_ref().expect("instantiated");
        let answers = guest
            .name(store)
            .and_then(|name| Ok((name, guest.hooks(store)?)));
        match answers {
            Ok((name, hooks)) => Ok((name, hooks.into_iter().collect())),
            Err(e) => Err(instance.failure(e, started)),
        }
    }
}

/// A loaded component: its template, and the thread its runs' instances
/// are made and called on (one for all its runs, as a dylib's, so that the
/// thread is known to the hand-off when a run starts).
struct WasmPlugin {
    template: Arc<Template>,
    worker: Arc<WorkerSlot>,
}

#[async_trait::async_trait]
impl Plugin for WasmPlugin {
    async fn open_run(&self, run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        let template = Arc::clone(&self.template);
        let run_id = run.run_id.clone();
        let worker = Arc::clone(&self.worker);
        let instance = worker
            .run(move || template.instantiate(&run_id))
            .await
            .unwrap_or_else(|e| Err(CallError::Crashed(e.to_string())))?;
        Ok(Arc::new(WasmRun {
            instance: Arc::new(Mutex::new(Some(Box::new(instance)))),
            worker,
        }))
    }
}

/// One instance and its store.
struct Instance {
    store: Store<State>,
    guest: Option<Box<dyn VersionedGuest>>,
}

impl Instance {
    /// Set the deadline (and the run's cancel) for the next call.
    fn arm(&mut self, deadline: Instant, cancel: Option<&tokio_util::sync::CancellationToken>) {
        let state = self.store.data_mut();
        state.deadline = deadline;
        state.cancel = cancel.cloned().unwrap_or_default();
        state.memory.hit = false;
        self.store.set_epoch_deadline(1);
    }

    /// What a trap means: an interrupt, the memory limit, or a crash.
    fn failure(&self, error: wasmtime::Error, started: Instant) -> CallError {
        if let Some(why) = error.downcast_ref::<Interrupted>() {
            return match why {
                Interrupted::Deadline => CallError::Timeout(started.elapsed()),
                Interrupted::Cancelled => CallError::Cancelled,
            };
        }
        let memory = &self.store.data().memory;
        if memory.hit {
            return CallError::OutOfMemory(memory.limit() as u64);
        }
        match error.downcast_ref::<wasmtime::Trap>() {
            Some(trap) => CallError::Crashed(format!("trapped: {trap}")),
            None => CallError::Crashed(format!("{error:?}")),
        }
    }

    /// Run `call`, within `limits`.
    fn call(&mut self, call: &HookCall, limits: &CallLimits) -> Result<Value, Failure> {
        self.arm(limits.deadline, Some(&limits.cancel));
        let started = Instant::now();
        let guest = self.guest.as_ref().expect("instantiated");
        match guest.call(&mut self.store, call) {
            Ok(answer) => answer.map_err(Failure::Kept),
            Err(trap) => Err(Failure::Trapped(self.failure(trap, started))),
        }
    }
}

/// A failed call, and whether the instance survived it.
enum Failure {
    /// The plugin answered badly; the instance is still usable.
    Kept(CallError),
    /// The instance trapped: it cannot be entered again.
    Trapped(CallError),
}

/// One run's instance. Whether the plugin is unloaded for the rest of the
/// run is the session's rule ([`CallError::discards_instance`]); this only
/// drops an instance that trapped, which cannot be entered again, and
/// answers a call that was already on its way to it.
struct WasmRun {
    instance: Arc<Mutex<Option<Box<Instance>>>>,
    worker: Arc<WorkerSlot>,
}

#[async_trait::async_trait]
impl PluginRun for WasmRun {
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        let instance = Arc::clone(&self.instance);
        let work = self.worker.run(move || {
            let mut slot = lock(&instance);
            let Some(live) = slot.as_mut() else {
                return Err(CallError::Unloaded(
                    "its instance trapped earlier in this run".into(),
                ));
            };
            match live.call(&call, &limits) {
                Ok(reply) => Ok(reply),
                Err(Failure::Kept(error)) => Err(error),
                Err(Failure::Trapped(error)) => {
                    *slot = None;
                    Err(error)
                }
            }
        });
        work.await
            .unwrap_or_else(|e| Err(CallError::Crashed(e.to_string())))
    }

    async fn close(&self) {
        // A call still running keeps the instance until its deadline
        // interrupts it; the last reference drops it then.
        if let Ok(mut slot) = self.instance.try_lock() {
            *slot = None;
        }
    }
}
