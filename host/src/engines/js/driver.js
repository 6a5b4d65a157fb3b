// The engine-neutral glue between the host and a plugin's JavaScript.
//
// Evaluated once per runtime as a function of `host`, the host's callbacks:
//   host.done(callId, replyJson)     a hook call's reply, as JSON text
//   host.fail(callId, message)       a hook call threw or rejected
//   host.badReply(callId, message)   a hook call's reply is not JSON
//   host.log(callId, runId, level, message)
//                                    a log line (callId/runId null: console)
//   host.timer(timerId, ms)          fire `fire(timerId)` in `ms`
// It installs `console`, `setTimeout`, `clearTimeout`, `AbortController` and
// `AbortSignal`, and returns the functions the host calls. Nothing else is
// added to the global object.
//
// Work the host does off the engine thread (a process a plugin starts)
// settles a promise later: `later(start)` makes a promise-returning function
// of a host function that starts the work and replies `{"ok": id}` or
// `{"error": message}`; the host hands the outcome to `resume(id, json)`.
//
// `show` and `describe` come from describe.js, which the host evaluates
// around this function (see `DRIVER` in runtime/engine.rs).
(function (host) {
  "use strict";
  const timers = new Map();
  // callId -> the AbortController behind that call's `ctx.signal`.
  const signals = new Map();
  let nextTimer = 1;
  let hooks = Object.create(null);
  let unload = () => {};
  let env = Object.freeze(Object.create(null));
  let pluginDir = "";
  const waiting = new Map();

  function line(args) {
    return args.map(show).join(" ");
  }

  function logger(callId, runId) {
    const at = (level) => (...args) => host.log(callId, runId, level, line(args));
    return Object.freeze({
      info: at("info"),
      warn: at("warn"),
      error: at("error"),
      debug: at("debug"),
    });
  }

  globalThis.console = Object.freeze({
    log: (...args) => host.log(null, null, "info", line(args)),
    info: (...args) => host.log(null, null, "info", line(args)),
    warn: (...args) => host.log(null, null, "warn", line(args)),
    error: (...args) => host.log(null, null, "error", line(args)),
    debug: (...args) => host.log(null, null, "debug", line(args)),
  });
  globalThis.setTimeout = function setTimeout(fn, ms, ...args) {
    if (typeof fn !== "function") throw new TypeError("setTimeout needs a function");
    const id = nextTimer++;
    timers.set(id, () => fn(...args));
    host.timer(id, Math.max(0, Number(ms) || 0));
    return id;
  };
  globalThis.clearTimeout = function clearTimeout(id) {
    timers.delete(id);
  };

  // A plain AbortSignal: `aborted`, `reason`, `onabort`, abort listeners.
  const abortSignal = Symbol("abort");
  class AbortSignal {
    #aborted = false;
    #reason = undefined;
    #listeners = [];
    onabort = null;
    get aborted() {
      return this.#aborted;
    }
    get reason() {
      return this.#reason;
    }
    addEventListener(type, listener, options) {
      if (type !== "abort" || typeof listener !== "function") return;
      if (!this.#listeners.some((l) => l.listener === listener)) {
        this.#listeners.push({ listener, once: options === true ? false : Boolean(options?.once) });
      }
    }
    removeEventListener(type, listener) {
      if (type === "abort") this.#listeners = this.#listeners.filter((l) => l.listener !== listener);
    }
    throwIfAborted() {
      if (this.#aborted) throw this.#reason;
    }
    [abortSignal](reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason;
      const event = Object.freeze({ type: "abort", target: this });
      const listeners = this.#listeners;
      this.#listeners = [];
      for (const run of [this.onabort, ...listeners.map((l) => l.listener)]) {
        if (typeof run !== "function") continue;
        try {
          run.call(this, event);
        } catch (e) {
          host.log(null, null, "error", "an abort listener threw: " + describe(e));
        }
      }
    }
    static abort(reason) {
      const controller = new AbortController();
      controller.abort(reason);
      return controller.signal;
    }
    static any(signals) {
      const controller = new AbortController();
      for (const signal of signals) {
        if (signal.aborted) {
          controller.abort(signal.reason);
          break;
        }
        signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
      }
      return controller.signal;
    }
  }
  class AbortController {
    #signal = new AbortSignal();
    get signal() {
      return this.#signal;
    }
    abort(reason) {
      const why = reason === undefined ? Object.assign(new Error("This operation was aborted"), { name: "AbortError" }) : reason;
      this.#signal[abortSignal](why);
    }
  }
  globalThis.AbortSignal = AbortSignal;
  globalThis.AbortController = AbortController;

  function reply(callId, value) {
    signals.delete(callId);
    let json;
    try {
      json = JSON.stringify(value === undefined ? null : value);
    } catch (e) {
      host.badReply(callId, "the reply cannot be turned into JSON: " + describe(e));
      return;
    }
    if (json === undefined) {
      host.badReply(callId, `the reply cannot be turned into JSON (it is a ${typeof value})`);
      return;
    }
    host.done(callId, json);
  }

  return {
    // Turn the entry module's namespace into hooks with the flavor's
    // `shape` (which may be async), given the flavor's settings; resolves to
    // `{name, hooks, warnings, unknown, unloads}` as JSON (`unloads`: the shape gave
    // an `unload`).
    async install(shape, namespace, settingsJson, envJson, dir) {
      env = Object.freeze(JSON.parse(envJson));
      pluginDir = dir;
      const shaped = await shape(namespace, JSON.parse(settingsJson));
      hooks = shaped.hooks;
      if (typeof shaped.unload === "function") unload = shaped.unload;
      const name = typeof shaped.name === "string" ? shaped.name : null;
      const warnings = Array.isArray(shaped.warnings) ? shaped.warnings.map(String) : [];
      const unknown = Array.isArray(shaped.unknown) ? shaped.unknown : [];
      const unloads = typeof shaped.unload === "function";
      return JSON.stringify({ name, hooks: Object.keys(hooks), warnings, unknown, unloads });
    },
    // The plugin is being dropped: run the shape's `unload`, if it gave one.
    unload() {
      return Promise.resolve(unload()).catch((e) =>
        host.log(null, null, "error", "unloading failed: " + describe(e)),
      );
    },
    // Run hook `hook` for call `callId`; the reply comes back through
    // `host.done` or `host.fail`, now or after the promise settles.
    // `ctx.signal` aborts when the host gives up on the call (its run was
    // cancelled, or its deadline passed).
    call(callId, hook, argsJson, runId) {
      // `ctx.log` and `ctx.signal` are made when the plugin first reads
      // them: most calls read neither, and the signal's controller is the
      // dearest part of a call. A call the host gave up on before its signal
      // was read gets a signal aborted already (`abort` below).
      const call = { controller: null, aborted: null, log: null };
      signals.set(callId, call);
      const ctx = Object.freeze({
        run_id: runId,
        get log() {
          return (call.log ??= logger(callId, runId));
        },
        env,
        pluginDir,
        get signal() {
          if (call.controller === null) {
            call.controller = new AbortController();
            if (call.aborted !== null) call.controller.abort(call.aborted);
          }
          return call.controller.signal;
        },
      });
      const failed = (e) => {
        signals.delete(callId);
        host.fail(callId, describe(e));
      };
      let result;
      try {
        result = hooks[hook](JSON.parse(argsJson), ctx);
      } catch (e) {
        failed(e);
        return;
      }
      if (result !== null && typeof result === "object" && typeof result.then === "function") {
        Promise.resolve(result).then((value) => reply(callId, value), failed);
      } else {
        reply(callId, result);
      }
    },
    // The host gave up on call `callId`: abort its `ctx.signal` with an
    // error named `name` ("AbortError" or "TimeoutError").
    abort(callId, name, message) {
      const call = signals.get(callId);
      signals.delete(callId);
      if (call === undefined) return;
      call.aborted = Object.assign(new Error(message), { name });
      call.controller?.abort(call.aborted);
    },
    // Run timer `timerId`, if it was not cleared.
    fire(timerId) {
      const run = timers.get(timerId);
      if (run === undefined) return;
      timers.delete(timerId);
      try {
        run();
      } catch (e) {
        host.log(null, null, "error", "uncaught error in a timer: " + describe(e));
      }
    },
    // A promise-returning function of host function `start` (see the top).
    later(start) {
      return (...args) =>
        new Promise((resolve, reject) => {
          const reply = JSON.parse(start(...args));
          if ("error" in reply) throw new Error(reply.error);
          waiting.set(reply.ok, { resolve, reject });
        });
    },
    // The host work `id` ended: `json` is `{"ok": value}` or `{"error": message}`.
    resume(id, json) {
      const pending = waiting.get(id);
      if (pending === undefined) return;
      waiting.delete(id);
      const reply = JSON.parse(json);
      if ("error" in reply) pending.reject(new Error(reply.error));
      else pending.resolve(reply.ok);
    },
    describe,
  };
})
