//! The engine thread's loop: load, then serve calls, timers, the replies of
//! work the plugin started and file-watch events, until every
//! [`Instance`](super::Instance) is dropped.

use super::calls::{InFlight, Settled, Shared};
use super::engine::Engine;
use super::inbox::{Message, Request};
use super::program::Program;
use super::unload::unload;
use crate::call::codec::decode_json_reply;
use crate::call::error::CallError;
use crate::call::handoff::{Handoff, Pace};
use crate::call::progress::ProgressReporter;
use crate::engines::js::glue::Shaped;
use crate::engines::js::watch;
use rquickjs::{Function, Object};
use std::cmp::Reverse;
use std::rc::Rc;
use std::sync::{mpsc, Arc};
use std::time::Instant;
use yohost_contract::ReplyError;

/// The engine thread: load, then serve calls until every [`Instance`](super::Instance) is
/// dropped.
pub(super) fn serve(
    program: Program,
    inbox: mpsc::Receiver<Message>,
    wake: mpsc::Sender<Message>,
    ready: mpsc::SyncSender<Result<Shaped, String>>,
    handoff: Arc<Handoff>,
) {
    let shared = Rc::new(Shared::new(wake));
    // Lines logged while loading carry the name the plugin is found under.
    *shared.name.borrow_mut() = program.default_name.clone();
    let mut engine = match Engine::build(&program, &shared, &inbox) {
        Ok((engine, started)) => {
            let name = match (&started.name, program.name_is_fixed) {
                (Some(own), false) if !own.is_empty() => own.clone(),
                _ => program.default_name.clone(),
            };
            *shared.name.borrow_mut() = name;
            let _ = ready.send(Ok(started));
            Some(engine)
        }
        Err(why) => {
            shared.kill_running();
            let _ = ready.send(Err(why));
            return;
        }
    };
    let mut next_id: u64 = 0;
    let mut pace = Pace::on_this_thread(handoff);
    loop {
        let waiting = shared.backlog.borrow_mut().pop_front();
        let message = match (waiting, shared.next_wake()) {
            (Some(request), _) => Ok(Message::Call(request)),
            _ if shared.closed.get() => Ok(Message::Closed),
            (None, None) => pace
                .recv(&inbox)
                .ok_or(mpsc::RecvTimeoutError::Disconnected),
            (None, Some(at)) => inbox.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match &engine {
            Some(current) => current.expire(&shared),
            None => drop(shared.expire(Instant::now())),
        }
        match message {
            Ok(Message::Wake) => {}
            Ok(Message::Watched) => {
                if let Some(engine) = &engine {
                    deliver_watched(engine, &shared, None);
                }
            }
            Ok(Message::Call(request)) => {
                next_id += 1;
                match &engine {
                    Some(engine) => start_call(engine, &shared, next_id, *request),
                    None => {
                        let _ = request.reply.send(Err(CallError::Crashed(
                            "the plugin's engine could not be rebuilt after a failure".into(),
                        )));
                    }
                }
            }
            Ok(Message::Exec(id, reply)) => {
                if let Some(engine) = &engine {
                    resume_exec(engine, &shared, id, reply);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Ok(Message::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                shared.kill_running();
                if let Some(engine) = &engine {
                    unload(engine, &shared, &inbox);
                }
                shared.watches.stop_all();
                return;
            }
        }
        let Some(current) = &engine else { continue };
        fire_timers(current, &shared);
        current.run_jobs(&shared);
        if settle_calls(current, &shared) {
            // Out of memory: start afresh so later calls have room.
            shared.fail_all("the plugin's engine was rebuilt after it ran out of memory");
            shared.timers.borrow_mut().clear();
            shared.kill_running();
            shared.watches.stop_all();
            engine = Engine::build(&program, &shared, &inbox)
                .ok()
                .map(|(e, _)| e);
        }
    }
}

/// A process the plugin started replied: settle its promise, as part of
/// the call that started it.
fn resume_exec(engine: &Engine, shared: &Shared, id: u64, reply: String) {
    let Some(process) = shared.running.borrow_mut().remove(&id) else {
        return;
    };
    let owner = process
        .owner
        .filter(|owner| shared.calls.borrow().contains_key(owner));
    shared.current.set(owner);
    let entered = engine.enter(shared, "resume", |_, resume| {
        resume.call::<_, ()>((id as f64, reply))
    });
    shared.current.set(None);
    if let Err(why) = entered {
        fail_entry(engine, shared, owner, why);
    }
}

/// Register a call and run its hook up to its first `await`.
fn start_call(engine: &Engine, shared: &Shared, id: u64, request: Request) {
    if shared.calls.borrow().is_empty() {
        engine.take_refused();
    }
    let hook = request.hook.as_str();
    let args = request.args;
    let run_id = request.run_id.clone();
    let asks = request.limits.ui.is_some();
    shared.calls.borrow_mut().insert(
        id,
        InFlight {
            hook: request.hook,
            run_id: request.run_id,
            deadline: request.limits.deadline,
            cancel: request.limits.cancel,
            reply: request.reply,
            caller: request.caller,
            ui: request.limits.ui,
            progress: request.limits.progress.map(ProgressReporter::new),
        },
    );
    deliver_watched(engine, shared, Some(id));
    shared.current.set(Some(id));
    let entered = engine.enter(shared, "call", |_, call| {
        call.call::<_, ()>((id as f64, hook, args, run_id, asks))
    });
    shared.current.set(None);
    if let Err(why) = entered {
        fail_entry(engine, shared, Some(id), why);
    }
}

/// Hand the file-watch events that wait to the plugin (the flavor's
/// `host.watched(eventsJson)`), as part of `call` or of the call the loop
/// attributes them to. Only while a call is in flight: otherwise they wait
/// for the next call (see [`watch`]).
fn deliver_watched(engine: &Engine, shared: &Shared, call: Option<u64>) {
    if shared.calls.borrow().is_empty() {
        return;
    }
    let Some((events, dropped)) = shared.watches.take() else {
        return;
    };
    let owner = call.or_else(|| shared.attributed());
    if dropped > 0 {
        let limit = watch::MAX_QUEUED_EVENTS;
        let message = format!(
            "{dropped} file-watch events were dropped: at most {limit} wait for the plugin"
        );
        shared.log(owner, None, "warn", &message);
    }
    if events.is_empty() {
        return;
    }
    let batch = serde_json::to_string(&events).unwrap_or_else(|_| "[]".into());
    shared.current.set(owner);
    engine.interrupted.set(false);
    engine.interrupt_at.set(shared.earliest_deadline());
    let delivered = engine.context.with(|ctx| -> rquickjs::Result<()> {
        let key = rquickjs::Symbol::new_global(ctx.clone(), "yohost.host")?;
        let host: Option<Object> = ctx.globals().get(key)?;
        match host
            .map(|h| h.get::<_, Option<Function>>("watched"))
            .transpose()?
        {
            Some(Some(watched)) => watched.call((batch,)),
            _ => Ok(()),
        }
    });
    shared.current.set(None);
    if let Err(why) = delivered {
        if engine.interrupted.get() {
            fail_entry(engine, shared, owner, why.to_string());
        } else {
            shared.log(
                owner,
                None,
                "error",
                &format!("file-watch events were not delivered: {why}"),
            );
        }
    }
}

/// Fire the timers that are due and whose call is still in flight.
fn fire_timers(engine: &Engine, shared: &Shared) {
    loop {
        let now = Instant::now();
        let due = {
            let mut timers = shared.timers.borrow_mut();
            match timers.peek() {
                Some(Reverse((at, ..))) if *at <= now => timers.pop().map(|Reverse(t)| t),
                _ => None,
            }
        };
        let Some((_, timer, owner)) = due else { return };
        let live = match owner {
            Some(call) => shared.calls.borrow().contains_key(&call),
            None => !shared.calls.borrow().is_empty(),
        };
        if !live {
            continue;
        }
        shared.current.set(owner);
        let entered = engine.enter(shared, "fire", |_, fire| {
            fire.call::<_, ()>((timer as f64,))
        });
        shared.current.set(None);
        if let Err(why) = entered {
            fail_entry(engine, shared, owner, why);
        }
        engine.run_jobs(shared);
    }
}

/// The driver itself failed (interrupted, or out of memory before the
/// plugin's code could catch anything): answer who it concerns.
fn fail_entry(engine: &Engine, shared: &Shared, call: Option<u64>, why: String) {
    if engine.interrupted.get() {
        engine.expire(shared);
        if let Some(id) = call {
            shared.answer(id, |_| {
                Err(CallError::Crashed(
                    "interrupted: it kept the plugin busy past another call's deadline".into(),
                ))
            });
        }
    } else if let Some(id) = call {
        shared.settled.borrow_mut().push((id, Settled::Broke(why)));
    }
}

/// Answer the calls that replied or failed. Returns whether one ran out of
/// memory (the engine must be rebuilt).
fn settle_calls(engine: &Engine, shared: &Shared) -> bool {
    let settled: Vec<_> = shared.settled.borrow_mut().drain(..).collect();
    let mut out_of_memory = false;
    for (id, outcome) in settled {
        let refused = !matches!(outcome, Settled::Replied(_)) && engine.take_refused();
        out_of_memory |= refused;
        shared.answer(id, |hook| match outcome {
            _ if refused => Err(CallError::OutOfMemory(engine.memory_bytes)),
            Settled::Replied(json) => decode_json_reply(hook, &json),
            Settled::Threw(message) => Err(CallError::Guest(message)),
            Settled::Unreadable(problem) => Err(CallError::BadReply(ReplyError { hook, problem })),
            Settled::Broke(message) => Err(CallError::Crashed(message)),
        });
    }
    out_of_memory
}
