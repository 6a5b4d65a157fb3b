//! A loaded Python plugin serving hook calls.
//!
//! The hook's argument crosses to Python as JSON text and the reply comes
//! back as JSON text, read by [`decode_json_reply`]. The plugin's `Plugin`
//! object is shared by every run (Python plugins keep no per-run instance).

use super::wedge::{Task, Work};
use super::workers::{self, Ticket, Unavailable};
use crate::call::codec::{decode_json_reply, encode_json_args};
use crate::call::error::CallError;
use crate::call::plugin::{CallLimits, Plugin, PluginRun};
use crate::call::progress::ProgressReporter;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use yohost_contract::{HookCall, ReplyError, RunInfo};

/// A plugin module's `yohost.Plugin`, ready to serve runs. Dropping it
/// (the file changed or went away) removes its module from `sys.modules`.
pub(super) struct PythonPlugin {
    run: Arc<PythonRun>,
    module: String,
}

impl PythonPlugin {
    /// The plugin named `name` whose handlers `plugin` holds, imported as
    /// the module `module`.
    pub(super) fn new(name: String, plugin: Py<PyAny>, module: String) -> Self {
        Self {
            run: Arc::new(PythonRun {
                name: name.into(),
                plugin: Arc::new(plugin),
            }),
            module,
        }
    }
}

impl Drop for PythonPlugin {
    fn drop(&mut self) {
        let module = std::mem::take(&mut self.module);
        let task = Task {
            plugin: Arc::clone(&self.run.name),
            work: Work::Unload,
        };
        let forget = workers::submit(
            task,
            Box::new(move |_py, worker| {
                if let Err(e) = worker.call_method1("forget", (module,)) {
                    tracing::warn!("cannot unload a Python plugin's module: {e}");
                }
                Box::new(|| {})
            }),
        );
        if let Err(e) = forget {
            tracing::warn!("cannot unload a Python plugin's module: {e}");
        }
    }
}

#[async_trait::async_trait]
impl Plugin for PythonPlugin {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(self.run.clone())
    }
}

struct PythonRun {
    name: Arc<str>,
    plugin: Arc<Py<PyAny>>,
}

/// What `_yohost_host.Worker.call` answered: `(status, text)`, or the
/// Python error that escaped it.
type Outcome = Result<(String, String), String>;

#[async_trait::async_trait]
impl PluginRun for PythonRun {
    async fn call(&self, call: HookCall, limits: CallLimits) -> Result<Value, CallError> {
        let started = Instant::now();
        let (tx, rx) = tokio::sync::oneshot::channel::<Outcome>();
        let plugin = Arc::clone(&self.plugin);
        let name = Arc::clone(&self.name);
        let hook = call.hook();
        let args = encode_json_args(&call)?;
        // The argument is held once, encoded: the typed call goes now.
        drop(call);
        let task = Task {
            plugin: Arc::clone(&self.name),
            work: Work::Hook(hook),
        };
        let hook_name = hook.as_str();
        // Log lines written on the worker go to this task's subscriber,
        // inside the hook's span.
        let span = tracing::Span::current();
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        let progress = limits.progress.map(|s| Arc::new(ProgressReporter::new(s)));
        let reporter = progress.clone();
        let ticket = workers::submit(
            task,
            Box::new(move |py, worker| {
                let outcome = tracing::dispatcher::with_default(&dispatch, || {
                    span.in_scope(|| {
                        let progress = reporter.map(|r| progress_function(py, r)).transpose()?;
                        worker
                            .call_method1(
                                "call",
                                (plugin.bind(py), &*name, hook_name, args, progress),
                            )
                            .and_then(|reply| reply.extract::<(String, String)>())
                    })
                })
                .map_err(|e| e.to_string());
                Box::new(move || {
                    let _ = tx.send(outcome);
                })
            }),
        )
        .map_err(|e| match e {
            // Queueing behind a wedged interpreter would only time out.
            Unavailable::Wedged(wedged) => CallError::Unloaded(wedged.to_string()),
            Unavailable::NoThread(_) => CallError::Crashed(e.to_string()),
        })?;
        // The host enforces the deadline (`invoke`): when it stops waiting,
        // this future is dropped, and so is `pending`, which interrupts the
        // job.
        let wait = ticket.wait;
        let pending = Pending(ticket, progress);
        let outcome = wait.reply(rx).await.ok_or(());
        drop(pending); // finished: the job is no longer running, a no-op
        match outcome {
            Err(_) => Err(CallError::Crashed(workers::lost())),
            Ok(Err(escaped)) => Err(CallError::Crashed(escaped)),
            Ok(Ok((status, text))) => match status.as_str() {
                "ok" => decode_json_reply(hook, &text),
                "guest" => Err(CallError::Guest(text)),
                "bad_reply" => Err(CallError::BadReply(ReplyError {
                    hook,
                    problem: text,
                })),
                "interrupted" => Err(CallError::Timeout(started.elapsed())),
                _ => Err(CallError::Crashed(text)),
            },
        }
    }
}

/// `yohost.progress`'s way to the call's listener: a Python function of
/// one message, which passes it on without the interpreter's lock (as a
/// log line goes), so a listener that is slow holds up no other plugin.
fn progress_function(
    py: Python<'_>,
    reporter: Arc<ProgressReporter>,
) -> PyResult<Bound<'_, PyCFunction>> {
    let report = move |args: &Bound<'_, PyTuple>, _: Option<&Bound<'_, PyDict>>| {
        let (message,): (String,) = args.extract()?;
        args.py().detach(|| reporter.report(&message));
        PyResult::Ok(())
    };
    PyCFunction::new_closure(py, Some(c"progress"), None, report)
}

/// A submitted job and its progress listener: dropping it interrupts the
/// job if it is still running (the deadline passed, or the host stopped
/// waiting), and ends its progress, which the plugin may still hold.
struct Pending(Ticket, Option<Arc<ProgressReporter>>);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.interrupt();
        if let Some(progress) = &self.1 {
            progress.end();
        }
    }
}
