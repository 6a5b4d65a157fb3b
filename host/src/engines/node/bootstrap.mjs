// The Node side of yohost's `node` engine. The host runs it with
// `node --input-type=module -e <this>` and speaks to it over stdio in frames:
// a 4-byte big-endian length, then a JSON object whose `t` names it (see
// host/src/engines/node/protocol.rs).
//
// It loads the plugin's entry and the flavor's modules (the same sources
// the embedded engine runs) as `vm.SourceTextModule`s, so that `yohost`,
// the flavor's shape and its other modules resolve by name without a
// loader thread (the permission model forbids threads). TypeScript reaches
// Node only after the host stripped its types: the source of a `.ts` file
// is asked of the host. Node's own built-ins, and npm packages that are not
// TypeScript, are Node's own modules.
//
// stdout carries frames only: `console` and `process.stdout.write` become
// log frames, attributed to the call whose code wrote them.
import { AsyncLocalStorage } from "node:async_hooks";
import { execFile } from "node:child_process";
import fs from "node:fs";
import { isBuiltin, syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";
import { Buffer } from "node:buffer";

// Node's contract for `fs.existsSync` is an answer, never a throw, but on
// Node 20 the permission model makes it throw `ERR_ACCESS_DENIED` for a path
// outside the grants; it answers `false` there, as on the embedded engine.
const existsSync = fs.existsSync;
fs.existsSync = function existsSyncWithinGrants(path) {
  try {
    return existsSync(path);
  } catch (e) {
    if (e?.code === "ERR_ACCESS_DENIED") return false;
    throw e;
  }
};
syncBuiltinESMExports();

const send = process.stdout.write.bind(process.stdout);
const callers = new AsyncLocalStorage();
let logLimit = 8192;
let replyLimit = 16 * 1024 * 1024;

function frame(text) {
  const body = Buffer.from(text, "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  send(Buffer.concat([head, body]));
}

/** @param {FromNode} object */
function message(object) {
  frame(JSON.stringify(object));
}

// `show` and `describe` (describe.js), `hookCalls` (hook_calls.js, which
// the embedded engine's driver shares) and `nodeFiles` (files.js) are
// declared by the files the host appends to this module.

/**
 * Send a log line of call `id` (null: outside a call).
 * @param {number | null} id
 * @param {string | null} runId
 * @param {LogLevel} level
 * @param {unknown[]} args
 */
function log(id, runId, level, args) {
  let text = args.map(show).join(" ");
  if (text.length > logLimit) text = text.slice(0, logLimit);
  message({ t: "log", id, run_id: runId, level, message: text });
}

// Lines written outside a hook's `ctx.log` belong to the call whose code is
// running, if any.
function ambient(level) {
  return (...args) => {
    const call = callers.getStore();
    log(call?.id ?? null, call?.runId ?? null, level, args);
  };
}
globalThis.console = Object.freeze({
  log: ambient("info"),
  info: ambient("info"),
  warn: ambient("warn"),
  error: ambient("error"),
  debug: ambient("debug"),
  trace: ambient("debug"),
});
process.stdout.write = (chunk, ...rest) => {
  ambient("info")(String(chunk).replace(/\n$/, ""));
  const done = rest.find((r) => typeof r === "function");
  if (done) queueMicrotask(done);
  return true;
};

// The host's answers to source requests, by request id.
const sources = new Map();
let nextSource = 1;

// The app user's answers, by request id.
const asked = new Map();
let nextAsk = 1;

/**
 * What call `call` asks the app's user through.
 * @param {number} call
 * @returns {(request: UiRequest) => Promise<unknown>}
 */
const askingFor = (call) => (request) => {
  const id = nextAsk++;
  return new Promise((resolve, reject) => {
    asked.set(id, { resolve, reject });
    message({ t: "ask", id, call, request: JSON.stringify(request) });
  });
};

function transpiled(file) {
  const id = nextSource++;
  return new Promise((resolve, reject) => {
    sources.set(id, { resolve, reject });
    message({ t: "source", id, path: file });
  });
}

const TYPESCRIPT = [".ts", ".mts", ".tsx"];
const TRIED = ["", ".ts", ".mts", ".tsx", ".js", ".mjs", "/index.ts", "/index.js", "/index.mjs"];

function isFile(file) {
  try {
    return fs.statSync(file).isFile();
  } catch (_) {
    return false;
  }
}

// The file a relative or absolute specifier names, trying the extensions
// TypeScript plugins leave out (and `x.js` for `x.ts`).
function fileOf(specifier, from) {
  const base = specifier.startsWith("file:")
    ? fileURLToPath(specifier)
    : path.resolve(path.dirname(from), specifier);
  for (const tail of TRIED) if (isFile(base + tail)) return base + tail;
  if (base.endsWith(".js") && isFile(base.slice(0, -3) + ".ts")) return base.slice(0, -3) + ".ts";
  throw Object.assign(new Error(`cannot find ${specifier} (imported from ${from})`), {
    code: "ERR_MODULE_NOT_FOUND",
  });
}

const modules = new Map();
let flavor = { builtins: {}, owned: [], internals: {} };
let ownPaths = [];

// A module Node loads itself, with the import's attributes (`with { type:
// "json" }`), which Node requires for JSON.
async function nodeModule(specifier, attributes) {
  const options = attributes && Object.keys(attributes).length > 0 ? { with: attributes } : undefined;
  const namespace = await import(specifier, options);
  const names = Object.keys(namespace);
  return new vm.SyntheticModule(names, function () {
    for (const name of names) this.setExport(name, namespace[name]);
  }, { identifier: specifier });
}

function sourceModule(code, identifier, file) {
  return new vm.SourceTextModule(code, {
    identifier,
    initializeImportMeta(meta) {
      if (file === null) return;
      meta.url = pathToFileURL(file).href;
      meta.filename = file;
      meta.dirname = path.dirname(file);
    },
    importModuleDynamically: async (specifier, referrer, attributes) =>
      ready(await link(specifier, referrer, { attributes })),
  });
}

async function ready(module) {
  if (module.status === "unlinked") await module.link(link);
  if (module.status === "linked") await module.evaluate();
  return module;
}

function cached(key, make) {
  let module = modules.get(key);
  if (module === undefined) {
    module = make();
    modules.set(key, module);
  }
  return module;
}

function flavorModule(specifier) {
  const code = flavor.builtins[specifier] ?? flavor.internals[specifier];
  return cached("flavor:" + specifier, () => sourceModule(code, specifier, null));
}

// The module `specifier` names, imported by module `referrer` with the
// import's attributes in `extra`.
async function link(specifier, referrer, extra) {
  const from = referrer?.identifier ?? "";
  const attributes = extra?.attributes;
  const fromFlavor = !path.isAbsolute(from);
  if (isBuiltin(specifier)) return cached("node:" + specifier, () => nodeModule(specifier));
  if (specifier in flavor.builtins || (fromFlavor && specifier in flavor.internals)) {
    return flavorModule(specifier);
  }
  // A package the flavor serves whole never comes from node_modules.
  const within = (pkg, s) => s === pkg || s.startsWith(pkg + "/");
  const owner = flavor.owned.find((pkg) => within(pkg, specifier));
  if (owner !== undefined && !fromFlavor) {
    const served = Object.keys(flavor.builtins).filter((s) => within(owner, s));
    throw new Error(
      `${from} imports "${specifier}": \`${owner}\` is served by the host, not taken from node_modules, and it serves only ${served.join(", ")}`,
    );
  }
  // A flavor module may import a plugin's own file by its `file:` URL (an
  // adapter's service that must share a class with the plugin's packages),
  // checked as every import of the plugin is.
  if (fromFlavor && !specifier.startsWith("file:")) {
    throw new Error(`the flavor module ${from} imports unknown ${specifier}`);
  }
  let file;
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("file:")) {
    const named = specifier.startsWith("file:")
      ? fileURLToPath(specifier)
      : path.resolve(path.dirname(from), specifier);
    ownFile(named, specifier, from);
    file = fileOf(specifier, from);
  } else {
    const url = import.meta.resolve(specifier, pathToFileURL(from).href);
    if (!url.startsWith("file:")) return cached(url, () => nodeModule(url, attributes));
    // A `#name` the package's `imports` maps to its own file may leave out
    // a TypeScript file's extension, as pi's loader allows.
    file = specifier.startsWith("#") ? fileOf(url, from) : fileURLToPath(url);
  }
  // Only the plugin's own paths (a single-file plugin's neighbours are
  // other plugins), checked on the path as named and as resolved.
  return plugin(ownFile(fs.realpathSync(ownFile(path.resolve(file), specifier, from)), specifier, from), attributes);
}

// `file`, if it lies in the plugin's own paths; else the import is refused.
function ownFile(file, specifier, from) {
  if (ownPaths.some((own) => file === own || file.startsWith(own + path.sep))) return file;
  throw new Error(
    `${from} imports "${specifier}", which resolves to ${file}, outside the plugin's own files (${ownPaths.join(", ")})`,
  );
}

// pi loads TypeScript with jiti, which gives each module CommonJS's
// `__dirname` and `__filename`: a module that uses them without declaring
// them gets them from its `import.meta`, on its first line (so its lines
// keep their numbers).
function withFileNames(code) {
  const missing = ["__dirname", "__filename"].filter(
    (name) =>
      new RegExp(`\\b${name}\\b`).test(code) &&
      !new RegExp(`\\b(?:const|let|var|function|class)\\s+${name}\\b`).test(code),
  );
  const from = { __dirname: "import.meta.dirname", __filename: "import.meta.filename" };
  return missing.map((name) => `const ${name} = ${from[name]};`).join(" ") + code;
}

// A JSON file, as an import with `{ type: "json" }` gives it: its value
// as the default export.
function jsonModule(file) {
  const value = JSON.parse(fs.readFileSync(file, "utf8"));
  return new vm.SyntheticModule(["default"], function () {
    this.setExport("default", value);
  }, { identifier: file });
}

// A file of the plugin (or of a package): TypeScript through the host,
// the plugin's own JavaScript as ES modules, JSON as its value, the rest
// as Node loads it (with the import's attributes).
async function plugin(file, attributes) {
  const known = modules.get(file);
  if (known !== undefined) return known;
  const ext = path.extname(file);
  const ownScript = [".js", ".mjs"].includes(ext) && !file.split(path.sep).includes("node_modules");
  let module;
  if (TYPESCRIPT.includes(ext)) module = sourceModule(withFileNames(await transpiled(file)), file, file);
  else if (ownScript) module = sourceModule(fs.readFileSync(file, "utf8"), file, file);
  else if (ext === ".json") module = jsonModule(file);
  else module = await nodeModule(pathToFileURL(file).href, attributes);
  return cached(file, () => module);
}

// The host's services, as the embedded engine offers them to flavors
// (`YohostHost`): files through files.js, and `exec` when it is granted.
/** @param {NodeServices | null} offered */
function services(offered) {
  if (offered === null) return;
  /** @type {YohostHost} */
  const host = {
    cwd: offered.cwd,
    fs: nodeFiles(fs, path, offered.relative_to, offered.module, offered.lacks),
  };
  if (offered.exec) {
    host.exec = (command, args, options) =>
      new Promise((resolve) => {
        const child = execFile(
          command,
          args,
          { cwd: options?.cwd ?? offered.cwd, timeout: options?.timeout ?? 0, maxBuffer: 1024 * 1024 },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === "number" ? error.code : child.exitCode ?? 127) : 0;
            resolve({ stdout, stderr, code, killed: Boolean(error?.killed) });
          },
        );
      });
  }
  globalThis[Symbol.for("yohost.host")] = Object.freeze(host);
}


// Run the flavor's prelude (it fills the flavor's settings and installs the
// globals the embedded engine lacks), then put back every global Node had:
// Node's own `process`, `Buffer` and `URL` win over emulations. Some of
// Node's globals (`process`, `Buffer`) are accessors whose setter keeps the
// value it is given, so their values are put back through the setter too.
async function prelude(specifier, settings, env) {
  if (specifier === null || specifier === undefined) return;
  const before = Object.getOwnPropertyNames(globalThis).map((name) => {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, name);
    const accessor = descriptor.get !== undefined && descriptor.set !== undefined;
    /** @type {[string, PropertyDescriptor, {value: unknown} | null]} */
    const saved = [name, descriptor, accessor ? { value: globalThis[name] } : null];
    return saved;
  });
  const module = await ready(flavorModule(specifier));
  try {
    module.namespace.default(JSON.stringify(settings), JSON.stringify(env));
  } finally {
    for (const [name, descriptor, kept] of before) {
      try {
        Object.defineProperty(globalThis, name, descriptor);
        if (kept !== null) globalThis[name] = kept.value;
      } catch (_) {
        // A property that cannot be redefined was not changed either.
      }
    }
  }
}

/** @param {NodeInit} init */
async function load(init) {
  logLimit = init.log_limit;
  replyLimit = init.reply_limit;
  flavor = init.flavor;
  ownPaths = init.own;
  services(init.services);
  const checkNotes = [];
  try {
    await prelude(init.flavor.prelude, init.settings, init.env);
    if (init.dry_run) {
      // A check makes no request: `fetch` is noted and fails. Other
      // connections fail in the kernel sandbox, which a check closes.
      globalThis.fetch = async function fetchInACheck(/** @type {any} */ input, /** @type {any} */ options) {
        const url = typeof input === "string" ? input : String(input?.url ?? input);
        const method = String(options?.method ?? input?.method ?? "GET").toUpperCase();
        if (checkNotes.length < 20) checkNotes.push(`in a check, not done: fetch ${method} ${url}`);
        throw new TypeError(`fetch failed: in a check, no request is made (${method} ${url})`);
      };
    }
    // Several entries (a pi package's extensions) reach the shape as one
    // module whose default export holds their namespaces, in order.
    const namespaces = [];
    for (const file of [init.entry, ...(init.also ?? [])]) {
      namespaces.push((await ready(await plugin(fs.realpathSync(file)))).namespace);
    }
    const entries = Object.freeze({ [Symbol.for("yohost.entries")]: Object.freeze(namespaces) });
    const namespace = namespaces.length === 1 ? namespaces[0] : { default: entries };
    const shape = await ready(flavorModule(init.flavor.shape));
    const shaped = await shape.namespace.default(namespace, init.settings);
    const loaded = calls.install(shaped, init.env, init.plugin_dir);
    message({ t: "ready", ...loaded, warnings: loaded.warnings.concat(checkNotes) });
  } catch (e) {
    message({ t: "refused", message: describe(e) });
  }
}

// A reply within the limit goes as raw JSON inside its frame.
/** @param {number} id @param {string} json */
function done(id, json) {
  const bytes = Buffer.byteLength(json, "utf8");
  if (bytes > replyLimit) message({ t: "too_large", id, bytes });
  else frame(`{"t":"done","id":${id},"reply":${json}}`);
}

const calls = hookCalls({
  done,
  fail: (id, text) => message({ t: "fail", id, message: text }),
  badReply: (id, text) => message({ t: "bad_reply", id, message: text }),
  progress: (id, text) => message({ t: "progress", id, message: text }),
  write: log,
  within: (id, runId, run) => callers.run({ id, runId }, run),
});

/** @param {ToNode} msg */
function receive(msg) {
  switch (msg.t) {
    case "init":
      load(msg);
      break;
    case "source": {
      const pending = sources.get(msg.id);
      sources.delete(msg.id);
      if ("code" in msg) pending?.resolve(msg.code);
      else pending?.reject(new SyntaxError(msg.error));
      break;
    }
    case "call":
      calls.call(msg.id, msg.hook, msg.args, msg.run_id, msg.asks ? askingFor(msg.id) : null);
      break;
    case "answer": {
      const pending = asked.get(msg.id);
      asked.delete(msg.id);
      if ("ok" in msg.reply) pending?.resolve(msg.reply.ok);
      else pending?.reject(new Error(msg.reply.error));
      break;
    }
    case "abort":
      calls.abort(msg.id, msg.name, msg.message);
      break;
  }
}

let buffered = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 4) {
    const length = buffered.readUInt32BE(0);
    if (buffered.length < 4 + length) break;
    const body = buffered.subarray(4, 4 + length).toString("utf8");
    buffered = buffered.subarray(4 + length);
    receive(JSON.parse(body));
  }
});
// Unloaded: the host ends the process, with whatever the plugin started,
// once it hears so (exiting here would orphan those processes).
process.stdin.on("end", () => {
  Promise.race([calls.unload(), new Promise((r) => setTimeout(r, 1000))]).finally(() => {
    message({ t: "unloaded" });
    setInterval(() => {}, 1 << 30);
  });
});
// The host is gone (stdout is a broken pipe): nothing can be reported, and
// logging the failure would fail again, forever.
const hostGone = (e) => e?.code === "EPIPE" || e?.code === "ERR_STREAM_DESTROYED";
process.stdout.on("error", () => process.exit(1));
process.on("uncaughtException", (e) => {
  if (hostGone(e)) process.exit(1);
  log(null, null, "error", ["uncaught: " + describe(e)]);
});
process.on("unhandledRejection", (e) => log(null, null, "error", ["unhandled rejection: " + describe(e)]));
