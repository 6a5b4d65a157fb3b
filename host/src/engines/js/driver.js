// The embedded engine's glue between the host and a plugin's JavaScript.
//
// Evaluated once per runtime as a function of `host`, the host's callbacks
// (`DriverHost` in host.d.ts): a call's reply, failure or unreadable reply,
// its progress, log lines, and timers. It installs `console`, `setTimeout`, `clearTimeout`,
// `AbortController` and `AbortSignal`, and returns the functions the host
// calls (`Driver`). Nothing else is added to the global object.
//
// Hook calls run through hook_calls.js, which Node's bootstrap shares.
//
// Work the host does off the engine thread (a process a plugin starts)
// settles a promise later: `later(start)` makes a promise-returning function
// of a host function that starts the work and replies `{"ok": id}` or
// `{"error": message}`; the host hands the outcome to `resume(id, json)`.
//
// `show` and `describe` (describe.js) and `hookCalls` (hook_calls.js) are
// declared around this function by the host (see `DRIVER` in
// runtime/engine.rs).
(/** @param {DriverHost} host @returns {Driver} */ function (host) {
  "use strict";
  /** @type {Map<number, () => void>} */
  const timers = new Map();
  let nextTimer = 1;
  /** @type {Map<number, {resolve: (value: unknown) => void, reject: (error: Error) => void}>} */
  const waiting = new Map();

  /** @param {unknown[]} args */
  function line(args) {
    return args.map(show).join(" ");
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

  const calls = hookCalls({
    done: host.done,
    fail: host.fail,
    badReply: host.badReply,
    progress: host.progress,
    write: (callId, runId, level, args) => host.log(callId, runId, level, line(args)),
    within: (_callId, _runId, run) => run(),
  });

  /** @type {Driver} */
  const driver = {
    // Turn the entry module's namespace into hooks with the flavor's
    // `shape` (which may be async), given the flavor's settings; resolves to
    // the `Ready` the host reads, as JSON.
    async install(shape, namespace, settingsJson, envJson, dir) {
      const shaped = await shape(namespace, JSON.parse(settingsJson));
      return JSON.stringify(calls.install(shaped, JSON.parse(envJson), dir));
    },
    // The plugin is being dropped: run the shape's `unload`, if it gave one.
    unload: () => calls.unload(),
    // Run hook `hook` for call `callId`; the reply comes back through
    // `host.done` or `host.fail`, now or after the promise settles.
    // `ctx.signal` aborts when the host gives up on the call (its run was
    // cancelled, or its deadline passed).
    // `asks`: the call may ask the app's user (`ctx.ui`).
    call(callId, hook, argsJson, runId, asks) {
      calls.call(callId, hook, JSON.parse(argsJson), runId, asks ? (request) => ask(callId, JSON.stringify(request)) : null);
    },
    // The host gave up on call `callId`: abort its `ctx.signal` with an
    // error named `name` ("AbortError" or "TimeoutError").
    abort: (callId, name, message) => calls.abort(callId, name, message),
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
  // A request to the app's user, answered off the engine thread (the
  // person takes their time).
  const ask = driver.later(host.ask);
  return driver;
})
