// A plugin's hooks and its calls in flight: what a flavor's shape gave, read
// the one way the host reads it, and each hook call run, its `ctx` made and
// its reply (or error) shaped. Shared by the embedded engine's driver
// (driver.js) and Node's bootstrap (bootstrap.mjs), which both include this
// file after describe.js; each engine says where outcomes go (`CallSink`).
// Plain function declarations, no globals.

/**
 * Where a plugin's call outcomes and log lines go: the engine's side.
 * @typedef {object} CallSink
 * @property {(callId: number, json: string) => void} done A reply, as JSON text.
 * @property {(callId: number, message: string) => void} fail The hook threw or rejected.
 * @property {(callId: number, message: string) => void} badReply The reply is not JSON.
 * @property {(callId: number, message: string) => void} progress How a tool call goes, for its
 *   listener (`crate::call::progress`); the host drops it when no one listens.
 * @property {(callId: number | null, runId: string | null, level: LogLevel, args: unknown[]) => void} write
 *   A log line's values (ids null: outside a call).
 * @property {(callId: number, runId: string, run: () => void) => void} within
 *   Run the hook's code as the call's own (Node attributes `console` by it).
 */

/**
 * What a call asks the app's user through, when the host gives it a user
 * interface.
 * @typedef {(request: UiRequest) => Promise<unknown>} Asking
 */

/**
 * What the host reads of a shape's result (`Ready`).
 * @param {Shaped} shaped
 * @returns {Ready}
 */
function readyOf(shaped) {
  return {
    name: typeof shaped.name === "string" ? shaped.name : null,
    hooks: Object.keys(shaped.hooks),
    warnings: Array.isArray(shaped.warnings) ? shaped.warnings.map(String) : [],
    unknown: Array.isArray(shaped.unknown) ? shaped.unknown : [],
    unloads: typeof shaped.unload === "function",
    app: appOf(shaped.app),
  };
}

/**
 * The commands and flags a shape gave, as the host reads them: names as
 * strings, descriptions as text, anything else left out.
 * @param {unknown} app
 * @returns {AppSurface}
 */
function appOf(app) {
  const given = /** @type {{commands?: unknown, flags?: unknown}} */ (app ?? {});
  const list = (/** @type {unknown} */ items) => (Array.isArray(items) ? items : []).filter((item) => typeof item?.name === "string");
  return {
    commands: list(given.commands).map((c) => ({ name: c.name, description: String(c.description ?? "") })),
    flags: list(given.flags).map((f) => ({
      name: f.name,
      description: String(f.description ?? ""),
      type: f.type === "string" ? "string" : "boolean",
      default: f.default ?? null,
    })),
  };
}

/**
 * A hook's reply as JSON text (`undefined` is `null`), or why it cannot be.
 * @param {unknown} value
 * @returns {{json: string} | {bad: string}}
 */
function replyJson(value) {
  let json;
  try {
    json = JSON.stringify(value === undefined ? null : value);
  } catch (e) {
    return { bad: "the reply cannot be turned into JSON: " + describe(e) };
  }
  if (json === undefined) return { bad: `the reply cannot be turned into JSON (it is a ${typeof value})` };
  return { json };
}

/**
 * Whether `value` is a promise (or any thenable), whose outcome is the reply.
 * @param {unknown} value
 * @returns {value is PromiseLike<unknown>}
 */
function isThenable(value) {
  return value !== null && typeof value === "object" && typeof (/** @type {any} */ (value).then) === "function";
}

/**
 * `ctx.log` of a call: each level writes the call's line.
 * @param {CallSink["write"]} write
 * @param {number} callId
 * @param {string} runId
 * @returns {PluginLog}
 */
function loggerOf(write, callId, runId) {
  /** @param {LogLevel} level */
  const at = (level) => (/** @type {unknown[]} */ ...args) => write(callId, runId, level, args);
  return Object.freeze({ info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") });
}

/**
 * A plugin's hooks, once installed, and its calls in flight.
 * @param {CallSink} sink
 */
function hookCalls(sink) {
  /** @type {Record<string, Hook>} */
  let hooks = Object.create(null);
  /** @type {() => void} */
  let unload = () => {};
  /** @type {Readonly<Record<string, string>>} */
  let env = Object.freeze(Object.create(null));
  let pluginDir = "";
  let dataDir = "";
  /**
   * The calls in flight: the controller behind `ctx.signal` once read, and
   * the reason it aborts with once the host gave up on the call.
   * @type {Map<number, {controller: AbortController | null, aborted: Error | null, log: PluginLog | null}>}
   */
  const open = new Map();

  /** @param {number} callId @param {unknown} value */
  function reply(callId, value) {
    open.delete(callId);
    const shaped = replyJson(value);
    if ("json" in shaped) sink.done(callId, shaped.json);
    else sink.badReply(callId, shaped.bad);
  }

  /** @param {number} callId @param {unknown} error */
  function failed(callId, error) {
    open.delete(callId);
    sink.fail(callId, describe(error));
  }

  return {
    /**
     * Take the hooks `shaped` gives, with the granted environment and the
     * plugin's folder every `ctx` carries (and its data folder, which the
     * environment names in `YOHOST_DATA_DIR`); what the host reads of them.
     * @param {Shaped} shaped
     * @param {Record<string, string>} grantedEnv
     * @param {string} dir
     * @returns {Ready}
     */
    install(shaped, grantedEnv, dir) {
      const ready = readyOf(shaped);
      hooks = shaped.hooks;
      if (typeof shaped.unload === "function") unload = /** @type {() => void} */ (shaped.unload);
      env = Object.freeze({ ...grantedEnv });
      pluginDir = dir;
      dataDir = env.YOHOST_DATA_DIR ?? "";
      return ready;
    },

    /**
     * Run hook `hook` for call `callId`; the outcome goes to the sink, now
     * or when the promise settles. `ctx.log` and `ctx.signal` are made when
     * the plugin first reads them (most calls read neither, and the
     * signal's controller is the dearest part of a call); a call the host
     * gave up on before its signal was read gets one aborted already.
     * @param {number} callId
     * @param {string} hook
     * @param {unknown} args
     * @param {string} runId
     * @param {Asking | null} ask The app's user interface, if any (`ctx.ui`).
     */
    call(callId, hook, args, runId, ask) {
      /** @type {{controller: AbortController | null, aborted: Error | null, log: PluginLog | null}} */
      const call = { controller: null, aborted: null, log: null };
      open.set(callId, call);
      /** @type {HookContext} */
      const ctx = Object.freeze({
        run_id: runId,
        get log() {
          return (call.log ??= loggerOf(sink.write, callId, runId));
        },
        env,
        pluginDir,
        dataDir,
        get signal() {
          if (call.controller === null) {
            call.controller = new AbortController();
            if (call.aborted !== null) call.controller.abort(call.aborted);
          }
          return call.controller.signal;
        },
        progress(message) {
          if (open.has(callId)) sink.progress(callId, String(message));
        },
        ...(ask !== null && { ui: ask }),
      });
      sink.within(callId, runId, () => {
        let result;
        try {
          result = hooks[hook](args, ctx);
        } catch (e) {
          failed(callId, e);
          return;
        }
        if (isThenable(result)) {
          Promise.resolve(result).then(
            (value) => reply(callId, value),
            (e) => failed(callId, e),
          );
        } else {
          reply(callId, result);
        }
      });
    },

    /**
     * The host gave up on call `callId`: abort its `ctx.signal` with an
     * error named `name` ("AbortError" or "TimeoutError").
     * @param {number} callId
     * @param {string} name
     * @param {string} message
     */
    abort(callId, name, message) {
      const call = open.get(callId);
      open.delete(callId);
      if (call === undefined) return;
      call.aborted = Object.assign(new Error(message), { name });
      call.controller?.abort(call.aborted);
    },

    /**
     * The plugin is being dropped: run the shape's `unload`, if it gave
     * one; a throw or a rejection is logged, never thrown.
     * @returns {Promise<void>}
     */
    unload() {
      return Promise.resolve()
        .then(unload)
        .then(
          () => {},
          (e) => sink.write(null, null, "error", ["unloading failed: " + describe(e)]),
        );
    },
  };
}
