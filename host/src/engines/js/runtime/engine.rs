//! One runtime with the plugin loaded: built (the plugin evaluated and its
//! hooks shaped), entered for a call, and its expired calls aborted.

use super::alloc::Limited;
use super::calls::{Settled, Shared};
use super::host::install_services;
use super::inbox::Message;
use super::loader::{PluginLoader, PluginResolver};
use super::program::{Program, LOAD_TIMEOUT, MAX_STACK_BYTES};
use super::waiting::{settle, Waiting};
use crate::engines::js::glue::Shaped;
use crate::engines::js::positions::{self, LineMap};
use rquickjs::{Context, Ctx, Function, Module, Object, Persistent, Runtime};
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The glue between host and plugin, evaluated in every runtime: the
/// driver's function, closed over `show` and `describe` and the hook calls
/// (`hookCalls`) it shares with Node's bootstrap (the JavaScript half of the
/// [`glue`](crate::engines::js::glue)).
const DRIVER: &str = concat!(
    "(function () {\n\"use strict\";\nreturn (\n",
    include_str!("../driver.js"),
    ");\n",
    include_str!("../describe.js"),
    include_str!("../hook_calls.js"),
    "})()\n",
);

/// One runtime with the plugin loaded. Fields drop in order: the driver
/// before the context, the context before the runtime.
pub(super) struct Engine {
    pub(super) driver: Persistent<Object<'static>>,
    pub(super) context: Context,
    pub(super) _runtime: Runtime,
    /// An allocation was refused (the limit was hit).
    pub(super) refused: Arc<AtomicBool>,
    /// The interrupt handler stopped code.
    pub(super) interrupted: Rc<Cell<bool>>,
    /// When the interrupt handler stops running code.
    pub(super) interrupt_at: Rc<Cell<Option<Instant>>>,
    pub(super) memory_bytes: u64,
}

impl Engine {
    /// Build a runtime, evaluate the plugin and shape its hooks. While it
    /// loads, processes it started reply through `inbox` (calls that arrive
    /// meanwhile wait in the backlog).
    pub(super) fn build(
        program: &Program,
        shared: &Rc<Shared>,
        inbox: &mpsc::Receiver<Message>,
    ) -> Result<(Engine, Shaped), String> {
        let refused = Arc::new(AtomicBool::new(false));
        let limit = usize::try_from(program.sandbox.memory_bytes).unwrap_or(usize::MAX);
        let runtime = Runtime::new_with_alloc(Limited {
            used: 0,
            limit,
            refused: Arc::clone(&refused),
        })
        .map_err(|e| format!("cannot create a JavaScript runtime: {e}"))?;
        runtime.set_max_stack_size(MAX_STACK_BYTES);
        let interrupted = Rc::new(Cell::new(false));
        let interrupt_at = Rc::new(Cell::new(None::<Instant>));
        {
            let interrupted = Rc::clone(&interrupted);
            let interrupt_at = Rc::clone(&interrupt_at);
            runtime.set_interrupt_handler(Some(Box::new(move || {
                let stop = interrupt_at.get().is_some_and(|at| Instant::now() >= at);
                if stop {
                    interrupted.set(true);
                }
                stop
            })));
        }
        let modules = Arc::new(program.modules.clone());
        runtime.set_loader(
            PluginResolver(Arc::clone(&modules)),
            PluginLoader(Arc::clone(&modules)),
        );
        let context = Context::full(&runtime)
            .map_err(|e| format!("cannot create a JavaScript context: {e}"))?;
        let load_deadline = Instant::now() + LOAD_TIMEOUT;
        interrupt_at.set(Some(load_deadline));
        shared.phase_deadline.set(Some(load_deadline));
        let loaded: Result<_, String> = context.with(|ctx| {
            let positions = Arc::new(program.modules.positions.clone());
            let driver =
                install_driver(&ctx, shared, &positions).map_err(|e| format!("internal: {e}"))?;
            let describe: Function = driver.get("describe").map_err(|e| e.to_string())?;
            let fail = |e: rquickjs::Error| {
                if interrupted.get() {
                    format!("loading took longer than {LOAD_TIMEOUT:?}")
                } else if refused.load(Ordering::Relaxed) {
                    format!(
                        "loading ran out of memory (limit {} bytes)",
                        program.sandbox.memory_bytes
                    )
                } else {
                    positions::in_source(
                        &program.modules.positions,
                        &error_text(&ctx, &describe, e),
                    )
                }
            };
            if let Some(services) = &program.sandbox.services {
                install_services(&ctx, services, shared, &driver)
                    .map_err(|e| format!("internal: {e}"))?;
            }
            let waiting = Waiting {
                shared,
                inbox,
                deadline: load_deadline,
                resume: driver.get("resume").map_err(|e| format!("internal: {e}"))?,
            };
            let env = serde_json::to_string(&program.sandbox.env).unwrap_or_else(|_| "{}".into());
            if let Some(prelude) = &modules.prelude {
                let install: Function = Module::import(&ctx, prelude.as_str())
                    .and_then(|p| settle::<Object>(&ctx, &p, &waiting))
                    .and_then(|prelude| prelude.get("default"))
                    .map_err(fail)?;
                install
                    .call::<_, ()>((program.settings.as_str(), env.as_str()))
                    .map_err(fail)?;
            }
            let namespace = Module::import(&ctx, modules.entry.as_str())
                .and_then(|p| settle::<Object>(&ctx, &p, &waiting))
                .map_err(fail)?;
            let shape: Function = Module::import(&ctx, program.flavor.shape)
                .and_then(|p| settle::<Object>(&ctx, &p, &waiting))
                .and_then(|shape| shape.get("default"))
                .map_err(fail)?;
            let plugin_dir = program.plugin_dir.to_string_lossy().into_owned();
            let install: Function = driver.get("install").map_err(fail)?;
            let settings = program.settings.as_str();
            let info: String = install
                .call::<_, rquickjs::Promise>((shape, namespace, settings, env, plugin_dir))
                .and_then(|p| settle::<String>(&ctx, &p, &waiting))
                .map_err(fail)?;
            let started: Shaped = serde_json::from_str(&info)
                .map_err(|e| format!("internal: the plugin's shape is unreadable: {e}"))?;
            Ok((Persistent::save(&ctx, driver), started))
        });
        interrupt_at.set(None);
        shared.phase_deadline.set(None);
        let (driver, started) = loaded?;
        Ok((
            Engine {
                driver,
                context,
                _runtime: runtime,
                refused,
                interrupted,
                interrupt_at,
                memory_bytes: program.sandbox.memory_bytes,
            },
            started,
        ))
    }

    /// Run `f` with the driver's function `name`, interrupting it at the
    /// earliest deadline in flight. On failure, returns why.
    pub(super) fn enter(
        &self,
        shared: &Shared,
        name: &str,
        f: impl for<'js> FnOnce(&Ctx<'js>, Function<'js>) -> rquickjs::Result<()>,
    ) -> Result<(), String> {
        self.interrupted.set(false);
        self.interrupt_at.set(shared.earliest_deadline());
        self.context.with(|ctx| {
            let driver = self
                .driver
                .clone()
                .restore(&ctx)
                .map_err(|e| e.to_string())?;
            let function: Function = driver.get(name).map_err(|e| e.to_string())?;
            f(&ctx, function).map_err(|e| match driver.get::<_, Function>("describe") {
                Ok(describe) => error_text(&ctx, &describe, e),
                Err(lookup) => lookup.to_string(),
            })
        })
    }

    /// Answer the calls whose deadline passed or whose run was cancelled,
    /// and abort their `ctx.signal`, giving the listeners at most
    /// [`ABORT_TIMEOUT`].
    pub(super) fn expire(&self, shared: &Shared) {
        for expired in shared.expire(Instant::now()) {
            let (name, message) = if expired.cancelled {
                ("AbortError", "the run was cancelled")
            } else {
                ("TimeoutError", "the call ran past its deadline")
            };
            self.interrupted.set(false);
            self.interrupt_at.set(Some(Instant::now() + ABORT_TIMEOUT));
            expired.caller.in_scope(|| {
                let _ = self.context.with(|ctx| -> rquickjs::Result<()> {
                    let driver = self.driver.clone().restore(&ctx)?;
                    let abort: Function = driver.get("abort")?;
                    abort.call::<_, ()>((expired.id as f64, name, message))
                });
            });
        }
        self.interrupt_at.set(None);
    }

    /// Run queued promise jobs, one at a time, expiring calls whose deadline
    /// an interrupted job passed.
    pub(super) fn run_jobs(&self, shared: &Shared) {
        loop {
            self.interrupted.set(false);
            self.interrupt_at.set(shared.earliest_deadline());
            let ran = self.context.with(|ctx| ctx.execute_pending_job());
            if self.interrupted.get() {
                self.expire(shared);
            }
            if !ran {
                return;
            }
        }
    }

    /// Whether an allocation was refused since the last call; clears it.
    pub(super) fn take_refused(&self) -> bool {
        self.refused.swap(false, Ordering::Relaxed)
    }
}

/// How long the abort listeners of a call the host gave up on may run.
const ABORT_TIMEOUT: Duration = Duration::from_millis(100);

/// Evaluate the driver with the host's callbacks; returns its functions.
fn install_driver<'js>(
    ctx: &Ctx<'js>,
    shared: &Rc<Shared>,
    positions: &Arc<BTreeMap<String, LineMap>>,
) -> rquickjs::Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;
    let s = Rc::clone(shared);
    host.set(
        "done",
        Function::new(ctx.clone(), move |id: f64, json: String| {
            s.settled
                .borrow_mut()
                .push((id as u64, Settled::Replied(json)));
        })?,
    )?;
    let s = Rc::clone(shared);
    let positions = Arc::clone(positions);
    host.set(
        "fail",
        Function::new(ctx.clone(), move |id: f64, message: String| {
            let message = positions::in_source(&positions, &message);
            s.settled
                .borrow_mut()
                .push((id as u64, Settled::Threw(message)));
        })?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "badReply",
        Function::new(ctx.clone(), move |id: f64, message: String| {
            s.settled
                .borrow_mut()
                .push((id as u64, Settled::Unreadable(message)));
        })?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "progress",
        Function::new(ctx.clone(), move |id: f64, message: String| {
            s.progress(id as u64, &message);
        })?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "log",
        Function::new(
            ctx.clone(),
            move |id: Option<f64>, run_id: Option<String>, level: String, message: String| {
                s.log(id.map(|i| i as u64), run_id, &level, &message);
            },
        )?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "timer",
        Function::new(ctx.clone(), move |id: f64, ms: f64| {
            let ms = if ms > 0.0 { ms.min(1e9) } else { 0.0 }; // NaN is 0
            let due = Instant::now() + Duration::from_secs_f64(ms / 1000.0);
            let owner = s.attributed();
            s.timers.borrow_mut().push(Reverse((due, id as u64, owner)));
        })?,
    )?;
    let s = Rc::clone(shared);
    host.set(
        "ask",
        Function::new(ctx.clone(), move |id: f64, request: String| {
            let reply = match s.ask(id as u64, request) {
                Ok(work) => serde_json::json!({ "ok": work }),
                Err(why) => serde_json::json!({ "error": why }),
            };
            reply.to_string()
        })?,
    )?;
    let driver: Function = ctx.eval(DRIVER)?;
    driver.call((host,))
}

/// A failure as text: a thrown value through the driver's `describe`.
fn error_text<'js>(ctx: &Ctx<'js>, describe: &Function<'js>, error: rquickjs::Error) -> String {
    if !error.is_exception() {
        return error.to_string();
    }
    let thrown = ctx.catch();
    describe
        .call::<_, String>((thrown,))
        .unwrap_or_else(|_| "threw a value that cannot be shown".into())
}
