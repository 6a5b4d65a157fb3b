//! The one CPython interpreter of the process, set up once.
//!
//! On first use the interpreter is started (without Python's own signal
//! handlers), the `yohost` SDK module (and its `yohost._replies`) is
//! registered from the source embedded in the host (so plugins get the SDK
//! that matches the host, installed or not), the host's side of the engine (`_yohost_host`) is loaded, Python's
//! logs are routed to [`plugin_log`], and the packages of the virtualenv
//! named by `VIRTUAL_ENV` *at that moment* go on `sys.path` ahead of the
//! interpreter's own site-packages.

use crate::call::logging::{plugin_log, LogLevel};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCFunction, PyDict, PyModule, PyTuple};

/// The SDK's source, registered as the module `yohost`.
const SDK_SOURCE: &str = include_str!("yohost.py");

/// The SDK's replies, registered as the module `yohost._replies` (which
/// `yohost` imports, so it is registered first).
const SDK_REPLIES_SOURCE: &str = include_str!("yohost_replies.py");

/// The host's side of the engine, registered as the module `_yohost_host`.
const HOST_SOURCE: &str = include_str!("host.py");

/// The interpreter's host module, or why Python could not start.
static HOST: PyOnceLock<Result<Py<PyModule>, String>> = PyOnceLock::new();

/// The `_yohost_host` module, starting the interpreter on first use.
pub(super) fn host_module(py: Python<'_>) -> Result<&'static Py<PyModule>, String> {
    HOST.get_or_init(py, || {
        start(py).map_err(|e| format!("cannot start Python: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Start the interpreter and its host module once for the process, before
/// a worker's waits for the GIL are watched ([`super::wedge`]): the start
/// holds the GIL while no plugin code runs, so a slow one (a cold disk, a
/// busy machine) is no plugin wedging the interpreter. A start that fails
/// is kept, and [`host_module`] reports it.
pub(super) fn start_once() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        Python::attach(|py| {
            let _ = host_module(py);
        })
    });
}

fn start(py: Python<'_>) -> PyResult<Py<PyModule>> {
    PyModule::from_code(
        py,
        &c_string(SDK_REPLIES_SOURCE),
        c"<yohost sdk replies>",
        c"yohost._replies",
    )?;
    PyModule::from_code(py, &c_string(SDK_SOURCE), c"<yohost sdk>", c"yohost")?;
    let host = PyModule::from_code(
        py,
        &c_string(HOST_SOURCE),
        c"<yohost host>",
        c"_yohost_host",
    )?;
    let log = PyCFunction::new_closure(py, Some(c"log"), None, log)?;
    let venv = std::env::var_os("VIRTUAL_ENV").map(|v| v.to_string_lossy().into_owned());
    host.call_method1("start", (log, venv))?;
    Ok(host.unbind())
}

/// Source text as a C string (embedded sources hold no NUL byte).
fn c_string(source: &str) -> std::ffi::CString {
    std::ffi::CString::new(source).expect("embedded Python source has no NUL byte")
}

/// `log(run_id, plugin, level, message)`, the function the host module
/// writes a plugin's log lines with: one plugin log line.
fn log(args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let (run_id, plugin, level, message): (String, String, String, String) = args.extract()?;
    args.py()
        .detach(|| plugin_log(&run_id, &plugin, LogLevel::from_name(&level), &message));
    Ok(())
}
