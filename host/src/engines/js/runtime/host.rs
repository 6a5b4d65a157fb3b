//! The host's services as the plugin sees them, and the work they start
//! off the engine thread: processes (`exec`) and HTTP requests (`fetch`).

use super::calls::{Running, Shared};
use super::inbox::Message;
use crate::engines::js::services::{self, ExecBounds, ExecRequest, Services};
use crate::engines::js::{crypto, fetch};
use crate::load::manifest::Network;
use crate::sandbox::ProcessSandbox;
use rquickjs::{Ctx, Function, Object};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The plugin's `exec` made of the host function that starts a process
/// (`exec.js`, a function of the driver's `later` and that function).
const EXEC: &str = include_str!("../exec.js");

/// Give the plugin the host's services as
/// `globalThis[Symbol.for("yohost.host")]` (`YohostHost` in `host.d.ts`):
/// `cwd`, `fs(op, path, data)` within its grants (see
/// [`services::FileAccess::run`]; op `watch` replies the watch's id), `unwatch(id)`,
/// `validate(tool, schema, args)` (JSON texts; `null` when the arguments match, else the host's
/// `Validation failed for tool` text), and, when it is granted,
/// `exec(command, args, options)`, which returns a promise of
/// `{stdout, stderr, code, killed}`.
pub(super) fn install_services<'js>(
    ctx: &Ctx<'js>,
    services: &Services,
    shared: &Rc<Shared>,
    driver: &Object<'js>,
) -> rquickjs::Result<()> {
    let object = Object::new(ctx.clone())?;
    object.set("cwd", services.cwd.to_string_lossy().into_owned())?;
    let files = services.files.clone();
    let s = Rc::clone(shared);
    object.set(
        "fs",
        Function::new(
            ctx.clone(),
            move |op: String, path: String, data: Option<String>| {
                files.run(&s.watches, &op, &path, data)
            },
        )?,
    )?;
    let s = Rc::clone(shared);
    object.set(
        "unwatch",
        Function::new(ctx.clone(), move |id: f64| s.watches.stop(id as u64))?,
    )?;
    object.set(
        "validate",
        Function::new(
            ctx.clone(),
            |tool: String, schema: String, args: String| -> Option<String> {
                let parse =
                    |text: &str| serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
                crate::call::arguments::check_once(&tool, &parse(&schema), &parse(&args)).err()
            },
        )?,
    )?;
    // In a check, `exec` is there even when not granted, to report what
    // would be denied.
    if services.exec || services.dry_run.is_some() {
        let granted = services.exec;
        let sandbox = services.sandbox.clone();
        let cwd = services.cwd.clone();
        let dry_run = services.dry_run.clone();
        let shared = Rc::clone(shared);
        let start = Function::new(
            ctx.clone(),
            move |command: String,
                  args: String,
                  dir: Option<String>,
                  timeout: Option<f64>,
                  env: Option<String>| {
                let options = ExecOptions { dir, timeout, env };
                let started = match &dry_run {
                    Some(dry_run) if granted => pretend_exec(&shared, dry_run, command, &args),
                    Some(dry_run) => Err(deny_exec(dry_run, command, &args)),
                    None => match &sandbox {
                        Some(sandbox) => {
                            start_exec(&shared, sandbox, &cwd, command, &args, options)
                        }
                        None => Err("exec: processes are not granted".into()),
                    },
                };
                let reply = match started {
                    Ok(id) => serde_json::json!({ "ok": id }),
                    Err(why) => serde_json::json!({ "error": why }),
                };
                reply.to_string()
            },
        )?;
        let exec: Function = ctx.eval(EXEC)?;
        let later: Function = driver.get("later")?;
        object.set("exec", exec.call::<_, Function>((later, start))?)?;
    }
    if services.network.is_granted() {
        let network = services.network.clone();
        let dry_run = services.dry_run.clone();
        let shared = Rc::clone(shared);
        let start = Function::new(ctx.clone(), move |request: String| {
            let started = match &dry_run {
                Some(dry_run) => Err(pretend_fetch(dry_run, &request)),
                None => start_fetch(&shared, &network, &request),
            };
            let reply = match started {
                Ok(id) => serde_json::json!({ "ok": id }),
                Err(why) => serde_json::json!({ "error": why }),
            };
            reply.to_string()
        })?;
        let later: Function = driver.get("later")?;
        object.set("fetch", later.call::<_, Function>((start,))?)?;
    }
    object.set(
        "randomBytes",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, count: f64| {
            let count = if count >= 0.0 {
                count as usize
            } else {
                usize::MAX
            };
            crypto::random_bytes(count)
                .map_err(|e| rquickjs::Exception::throw_message(&ctx, &e.to_string()))
        })?,
    )?;
    object.set(
        "hash",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, algorithm: String, data: Vec<u8>| {
                crypto::digest(&algorithm, &data)
                    .map_err(|e| rquickjs::Exception::throw_message(&ctx, &e.to_string()))
            },
        )?,
    )?;
    let key = rquickjs::Symbol::new_global(ctx.clone(), "yohost.host")?;
    ctx.globals().set(key, object)
}

/// The command line of a process the plugin asks for, as a check shows it.
fn command_line(command: String, args: &str) -> Result<String, String> {
    let args: Vec<String> = serde_json::from_str(args)
        .map_err(|e| format!("exec: the arguments must be strings: {e}"))?;
    Ok(std::iter::once(command)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" "))
}

/// A process the plugin asks for in a check without `capabilities.exec`:
/// noted in `dry_run` as denied; the call fails, as it would in a run.
fn deny_exec(dry_run: &services::DryRun, command: String, args: &str) -> String {
    let shown = match command_line(command, args) {
        Ok(shown) => shown,
        Err(why) => return why,
    };
    let why = format!(
        "exec: `{shown}` would be denied: the plugin's plugin.toml does not grant `capabilities.exec = true`"
    );
    dry_run.note(why.clone());
    why
}

/// A process the plugin asks for in a check: noted in `dry_run`, not
/// started; it "ends" at once with code 0 and no output.
fn pretend_exec(
    shared: &Shared,
    dry_run: &services::DryRun,
    command: String,
    args: &str,
) -> Result<u64, String> {
    let shown = command_line(command, args)?;
    dry_run.note(format!("would run `{shown}`"));
    let id = shared.next_exec.get() + 1;
    shared.next_exec.set(id);
    let (owner, _, _) = shared
        .exec_bounds()
        .ok_or("exec: a process can only start while a hook, load or unload is running")?;
    shared.running.borrow_mut().insert(
        id,
        Running {
            owner,
            kill: Arc::new(AtomicBool::new(false)),
        },
    );
    let reply = serde_json::json!({"ok": {"stdout": "", "stderr": "", "code": 0, "killed": false}});
    let _ = shared.wake.send(Message::Exec(id, reply.to_string()));
    Ok(id)
}

/// The options of `exec(command, args, options)`, as the plugin gave them.
struct ExecOptions {
    /// `cwd`, relative to the working directory.
    dir: Option<String>,
    /// `timeout` in ms.
    timeout: Option<f64>,
    /// `env` as JSON: `{name: value or null}`, changes to the inherited
    /// environment.
    env: Option<String>,
}

/// Start a process for the plugin, bounded by the call that asks for it
/// (see [`Shared::exec_bounds`]); returns its id, whose reply comes back
/// through the inbox as [`Message::Exec`].
fn start_exec(
    shared: &Shared,
    sandbox: &ProcessSandbox,
    cwd: &std::path::Path,
    command: String,
    args: &str,
    options: ExecOptions,
) -> Result<u64, String> {
    let args: Vec<String> = serde_json::from_str(args)
        .map_err(|e| format!("exec: the arguments must be strings: {e}"))?;
    let env = match options.env {
        Some(env) => services::exec_env(&env)?,
        None => Vec::new(),
    };
    let own_limit = services::exec_timeout(options.timeout)?;
    let (owner, deadline, cancels) = shared
        .exec_bounds()
        .ok_or("exec: a process can only start while a hook, load or unload is running")?;
    let now = Instant::now();
    let deadline = own_limit
        .map_or(deadline, |limit| deadline.min(now + limit))
        .min(now + services::MAX_EXEC);
    let request = ExecRequest {
        command,
        args,
        dir: services::exec_dir(cwd, options.dir.as_deref()),
        env,
    };
    start_work(shared, owner, deadline, cancels, |bounds, done| {
        services::spawn(request, sandbox.clone(), bounds, done)
    })
}

/// Start a piece of work off the engine thread (a process, a request) for
/// the call `owner`, bounded by `deadline` and `cancels`: `spawn` gets the
/// bounds and what to call with the reply, which comes back through the
/// inbox as [`Message::Exec`]. Returns the work's id.
fn start_work(
    shared: &Shared,
    owner: Option<u64>,
    deadline: Instant,
    cancels: Vec<CancellationToken>,
    spawn: impl FnOnce(ExecBounds, Box<dyn FnOnce(String) + Send>) -> Result<(), String>,
) -> Result<u64, String> {
    let (id, kill) = shared.next_work();
    let bounds = ExecBounds {
        deadline,
        cancels,
        kill: Arc::clone(&kill),
    };
    let wake = shared.wake.clone();
    spawn(
        bounds,
        Box::new(move |reply| {
            let _ = wake.send(Message::Exec(id, reply));
        }),
    )?;
    shared
        .running
        .borrow_mut()
        .insert(id, Running { owner, kill });
    Ok(id)
}

/// A request the plugin makes in a check: noted in `dry_run`, not made;
/// the request fails, saying so.
fn pretend_fetch(dry_run: &services::DryRun, request: &str) -> String {
    let what = match serde_json::from_str::<fetch::FetchRequest>(request) {
        Ok(request) => format!(
            "fetch {} {}",
            request.method.as_deref().unwrap_or("GET").to_uppercase(),
            request.url
        ),
        Err(_) => "fetch of a request that cannot be read".to_string(),
    };
    dry_run.note(what.clone());
    format!("{what}: in a check, no request is made")
}

/// Start an HTTP request for the plugin (`request` is a
/// [`fetch::FetchRequest`] as JSON), bounded as a process is; returns its
/// id, whose reply comes back through the inbox as [`Message::Exec`].
fn start_fetch(shared: &Shared, network: &Network, request: &str) -> Result<u64, String> {
    let request: fetch::FetchRequest =
        serde_json::from_str(request).map_err(|e| format!("fetch: {e}"))?;
    let (owner, deadline, cancels) = shared
        .exec_bounds()
        .ok_or("fetch: a request can only start while a hook, load or unload is running")?;
    let deadline = deadline.min(Instant::now() + services::MAX_EXEC);
    start_work(shared, owner, deadline, cancels, |bounds, done| {
        fetch::spawn(request, network, bounds, done)
    })
}
