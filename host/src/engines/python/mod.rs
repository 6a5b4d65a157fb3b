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
//! Calls run on worker threads ([`workers`]), never on the async runtime's.
//! An exception is the plugin's own error, like `raise
//! yohost.HookError(...)` (its traceback is logged with the plugin's name
//! and the `run_id`), and the plugin keeps serving the run; a reply that is
//! not JSON or not the hook's shape is a bad reply; `sys.exit()` is a crash,
//! not an exit. Each fails closed. A hook past its deadline (which the host
//! enforces) is interrupted when the host stops waiting (see [`workers`]
//! for what cannot be). Importing a
//! plugin is bounded too: an import still running after
//! [`IMPORT_TIMEOUT`] is interrupted and the plugin refused.
//!
//! Python plugins are trusted code, not sandboxed: they run with the host's
//! rights, and `os._exit()` or a crashing C extension takes the host down.

mod interpreter;
mod plugin;
mod workers;

use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::plugin::Loaded;
use pyo3::prelude::*;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use yohost_contract::Hook;

/// How long importing a plugin may take before it is interrupted.
pub const IMPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Numbers the module names plugins are imported under, so a changed file
/// imports as new code and two plugins never share a module.
static NEXT_MODULE: AtomicU64 = AtomicU64::new(1);

/// What importing a plugin found: its `Plugin`, the name it gives itself,
/// and the hooks it handles.
type Imported = (Py<PyAny>, Option<String>, Vec<String>);

/// Load a Python plugin.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    let path = &candidate.entry;
    let invalid = |message: String| LoadError::Invalid {
        path: path.clone(),
        message,
    };
    Python::attach(|py| interpreter::host_module(py).map(|_| ())).map_err(invalid)?;
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
    );
    let (tx, rx) = mpsc::channel::<Result<Imported, String>>();
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    let ticket = workers::submit(Box::new(move |py, _worker| {
        let imported = tracing::dispatcher::with_default(&dispatch, || import(py, args));
        Box::new(move || {
            let _ = tx.send(imported);
        })
    }))
    .map_err(|e| invalid(format!("cannot start a Python worker thread: {e}")))?;
    let (plugin, name, hook_names) = match rx.recv_timeout(IMPORT_TIMEOUT) {
        Ok(imported) => imported.map_err(invalid)?,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            ticket.interrupt();
            return Err(invalid(format!(
                "importing it did not finish within {IMPORT_TIMEOUT:?}"
            )));
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            return Err(invalid("its Python worker thread failed".into()))
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
    Ok(Loaded {
        plugin: std::sync::Arc::new(plugin::PythonPlugin::new(plugin_name, plugin, module)),
        hooks,
        name,
        warnings: Vec::new(),
        ecosystem: None,
    })
}

/// `_yohost_host.load(...)`: the plugin, or the file and line that failed.
fn import(
    py: Python<'_>,
    args: (String, String, String, bool, String),
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
