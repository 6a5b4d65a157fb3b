//! Python plugins on embedded CPython (3.11+), through PyO3.
//!
//! # A plugin
//!
//! A `.py` file, or a folder with `__init__.py` (or a `plugin.toml` whose
//! `entry` names a `.py` file). The module creates exactly one
//! `yohost.Plugin` at top level and registers handlers with its decorators:
//!
//! ```python
//! from yohost import Plugin, Deny
//!
//! plugin = Plugin("guard")
//!
//! @plugin.before_tool
//! def no_rm(call):
//!     if "rm -rf" in call["args"].get("command", ""):
//!         return Deny("`rm -rf` is not allowed")
//! ```
//!
//! Each plugin module has its own `Plugin`, so two plugins never share
//! handlers, and each is imported under a module name of its own. Handlers
//! may be `def` or `async def`. The SDK (`sdk-python/`, module `yohost`) is
//! embedded in the host, so a plugin needs nothing installed.
//!
//! # Imports
//!
//! The plugin's folder is appended to `sys.path` (for a package, relative
//! imports work too). The interpreter's own site-packages are on `sys.path`,
//! and so are those of the virtualenv that `VIRTUAL_ENV` names when the
//! interpreter starts (the first Python plugin loaded), ahead of them.
//!
//! The interpreter is the one the host was built against: `PYO3_PYTHON`
//! if set at build time, else `python3` on `PATH`. The build script puts an
//! rpath to that interpreter's `LIBDIR` on the host's binaries, so the
//! library loaded at run time is the same one, not another `libpython` the
//! dynamic loader happens to know.
//!
//! # Calls, failures and deadlines
//!
//! Calls and imports run on worker threads (`workers.rs`), never on the
//! caller's: no thread of the host outside the engine ever waits for the
//! GIL. An exception and `raise yohost.HookError(...)` are the plugin's own
//! error (`CallError::Guest`: an exception's traceback is logged with the
//! plugin's name and the `run_id`, and the plugin keeps serving the run);
//! `sys.exit()` is a crash, not an exit; a reply that is not JSON
//! or not the hook's shape is a bad reply. Each fails closed. A hook past
//! its deadline (which the host enforces) is interrupted (see `workers.rs` for what cannot be).
//! Importing a plugin is bounded too: an import still running after its
//! load timeout (`[timeouts] load`, default 10 s) is interrupted and the
//! plugin refused.
//!
//! # A wedged interpreter
//!
//! Code that holds the GIL and never returns to the interpreter (one long C
//! call such as `sum(range(10**18))`) cannot be interrupted, and blocks
//! every Python plugin. The engine notices (`wedge.rs`): once some thread has
//! waited for the GIL for a second, Python imports are refused at once and
//! Python hook calls fail closed (`CallError::Unloaded`) without queueing,
//! each naming the plugin that holds the interpreter (the one whose import
//! or hook ran past its deadline); dylib, Wasm and JS plugins go on as
//! before. When the holder lets go, Python plugins load and serve again.
//!
//! Python plugins are trusted code, not sandboxed: they run with the host's
//! rights. `os._exit()` in the host's process raises instead of exiting
//! (a fork child's still exits), but a plugin that means to end the process
//! (`os.kill`, `os.abort`, `ctypes`) or a crashing C extension takes the
//! host down.

mod interpreter;
mod plugin;
mod wedge;
mod workers;

use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::loaded::Loaded;
use pyo3::prelude::*;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wedge::{Task, Work};
use yohost_contract::Hook;

/// How often a waiting load looks whether the interpreter is wedged.
const WEDGE_POLL: Duration = Duration::from_millis(50);

/// Numbers the module names plugins are imported under, so a changed file
/// imports as new code and two plugins never share a module.
static NEXT_MODULE: AtomicU64 = AtomicU64::new(1);

/// What importing a plugin found: its `Plugin`, the name it gives itself,
/// and the hooks it handles.
type Imported = (Py<PyAny>, Option<String>, Vec<String>);

/// Load a Python plugin. The import runs on a worker thread; this thread
/// never waits for the GIL, and waits for the import at most the plugin's
/// load timeout (`[timeouts] load`), or only until the interpreter is found
/// wedged, if the import cannot start.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    let path = &candidate.entry;
    let invalid = |message: String| LoadError::Invalid {
        path: path.clone(),
        message,
    };
    let package = path.file_name().is_some_and(|n| n == "__init__.py");
    let folder = path.parent().unwrap_or(candidate.base_dir()).to_path_buf();
    let module = format!(
        "_yohost_plugin_{}_{}",
        NEXT_MODULE.fetch_add(1, Ordering::Relaxed),
        candidate
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect::<String>()
    );
    let args = (
        path.to_string_lossy().into_owned(),
        module.clone(),
        folder.to_string_lossy().into_owned(),
        package,
        candidate.name.clone(),
        candidate
            .data_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
    );
    let (tx, rx) = mpsc::channel::<Result<Imported, String>>();
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    let task = Task {
        plugin: candidate.name.as_str().into(),
        work: Work::Import,
    };
    let ticket = workers::submit(
        task,
        Box::new(move |py, _worker| {
            let imported = tracing::dispatcher::with_default(&dispatch, || import(py, args));
            Box::new(move || {
                let _ = tx.send(imported);
            })
        }),
    )
    .map_err(|e| invalid(format!("not imported: {e}")))?;
    let timeout = candidate.manifest.load_timeout();
    let deadline = Instant::now() + timeout;
    let (plugin, name, hook_names) = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(WEDGE_POLL)) {
            Ok(imported) => break imported.map_err(invalid)?,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(invalid(workers::lost())),
            Err(mpsc::RecvTimeoutError::Timeout) if left <= WEDGE_POLL => {
                ticket.interrupt();
                return Err(invalid(format!(
                    "importing it did not finish within its load deadline of {timeout:?} \
                     (`[timeouts] load` in plugin.toml)"
                )));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // An import that cannot start waits for nobody.
                if let Some(wedged) = (!ticket.running()).then(wedge::wedged).flatten() {
                    ticket.interrupt();
                    return Err(invalid(format!("not imported: {wedged}")));
                }
            }
        }
    };
    let hooks: BTreeSet<Hook> = hook_names
        .iter()
        .filter_map(|h| Hook::from_name(h))
        .collect();
    // The registry's naming rule: the manifest's name, else the plugin's own.
    let plugin_name = match &name {
        Some(own) if !candidate.named_by_manifest && !own.is_empty() => own.clone(),
        _ => candidate.name.clone(),
    };
    let plugin = std::sync::Arc::new(plugin::PythonPlugin::new(plugin_name, plugin, module));
    let mut loaded = Loaded::new(plugin, hooks);
    loaded.name = name;
    Ok(loaded)
}

/// `_yohost_host.load(...)`: the plugin, or the file and line that failed.
fn import(
    py: Python<'_>,
    args: (String, String, String, bool, String, Option<String>),
) -> Result<Imported, String> {
    let host = interpreter::host_module(py)?;
    host.bind(py)
        .call_method1("load", args)
        .and_then(|loaded| loaded.extract::<Imported>())
        .map_err(|e| match e.value(py).str() {
            Ok(message) => message.to_string(),
            Err(_) => e.to_string(),
        })
}
