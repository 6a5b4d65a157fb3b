// The file functions behind `node:fs` and `node:fs/promises` for pi
// extensions, within the directories the plugin's manifest grants
// (`capabilities.read` to read, `capabilities.write` to write). The host
// checks every path. Errors are Node's: `code` (`ENOENT`, `EEXIST`,
// `ENOTDIR`, `EISDIR`, `ENOTEMPTY`; `EACCES` outside the grants), `errno`,
// `syscall`, `path`, and Node's message (a refusal adds why, naming the key
// to grant). Reads without an encoding give a `Buffer`. fs.js and
// fs-promises.js export from this module.

import { host } from "pi:host";
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";

/** Linux's errno and libuv's description of each code the host replies. */
const ERRORS = {
  EPERM: [-1, "operation not permitted"],
  ENOENT: [-2, "no such file or directory"],
  EIO: [-5, "i/o error"],
  EACCES: [-13, "permission denied"],
  EEXIST: [-17, "file already exists"],
  ENOTDIR: [-20, "not a directory"],
  EISDIR: [-21, "illegal operation on a directory"],
  EINVAL: [-22, "invalid argument"],
  EMFILE: [-24, "too many open files"],
  EFBIG: [-27, "file too large"],
  ENOSPC: [-28, "no space left on device"],
  ENOSYS: [-38, "function not implemented"],
  ENOTEMPTY: [-39, "directory not empty"],
};

/** An error as Node builds it for `syscall` on `path`. */
function nodeError(code, syscall, path, why) {
  const [errno, description] = ERRORS[code] ?? ERRORS.EIO;
  const where = path === undefined ? "" : ` '${path}'`;
  const error = new Error(`${code}: ${description}, ${syscall}${where}${why ? ` (${why})` : ""}`);
  Object.assign(error, { errno, code, syscall });
  if (path !== undefined) Object.assign(error, { path });
  return error;
}

function call(op, syscall, path, data) {
  const fs = host()?.fs;
  if (typeof fs !== "function") throw new Error("node:fs is not available: the host gave this plugin no file access");
  const shown = typeof path === "string" ? path : String(path);
  const reply = JSON.parse(fs(op, shown, data === undefined || data === null ? null : String(data)));
  if ("ok" in reply) return reply.ok;
  // Node opens a directory, then fails to read it, naming no path.
  const readsDir = reply.code === "EISDIR" && op.startsWith("read") && syscall === "open";
  const why = reply.granted === false ? reply.error : undefined;
  // Node's own message, and the host's reason when it refused the path.
  throw readsDir ? nodeError("EISDIR", "read") : nodeError(reply.code, syscall, shown, why);
}

const encodingOf = (options) => (typeof options === "string" ? options : options?.encoding ?? null);
const isUtf8 = (encoding) => /^utf-?8$/i.test(encoding ?? "");
const asBuffer = (data) => (Buffer.isBuffer(data) ? data : Buffer.from(data.buffer ?? data, data.byteOffset, data.byteLength));

function readBytes(path) {
  return Buffer.from(call("read_bytes", "open", path), "base64");
}

function stats(raw) {
  const mtime = new Date(raw.mtimeMs);
  return {
    size: raw.size,
    mtimeMs: raw.mtimeMs,
    mtime,
    atime: mtime,
    ctime: mtime,
    birthtime: mtime,
    isFile: () => raw.isFile,
    isDirectory: () => raw.isDirectory,
    isSymbolicLink: () => false,
    isFIFO: () => false,
    isSocket: () => false,
    isBlockDevice: () => false,
    isCharacterDevice: () => false,
  };
}

/** Node's `fs.Dirent`: a name and what it is, symlinks not followed. */
export class Dirent {
  #kind;
  constructor(name, kind, parentPath) {
    this.name = name;
    this.parentPath = parentPath;
    this.path = parentPath;
    this.#kind = kind;
  }
  isFile() {
    return this.#kind === "file";
  }
  isDirectory() {
    return this.#kind === "dir";
  }
  isSymbolicLink() {
    return this.#kind === "symlink";
  }
  isFIFO() {
    return false;
  }
  isSocket() {
    return false;
  }
  isBlockDevice() {
    return false;
  }
  isCharacterDevice() {
    return false;
  }
}

const join = (dir, name) => (dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`);

export const constants = Object.freeze({ F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 });

export const existsSync = (path) => {
  try {
    return call("exists", "access", path);
  } catch {
    return false;
  }
};

export function readFileSync(path, options) {
  const encoding = encodingOf(options);
  if (isUtf8(encoding)) return call("read", "open", path);
  const bytes = readBytes(path);
  return encoding ? bytes.toString(encoding) : bytes;
}

function writeAs(op, path, data, options) {
  const encoding = encodingOf(options);
  if (typeof data === "string" && (encoding === null || isUtf8(encoding))) return void call(op, "open", path, data);
  const bytes = typeof data === "string" ? Buffer.from(data, encoding) : ArrayBuffer.isView(data) ? asBuffer(data) : Buffer.from(String(data));
  call(`${op}_bytes`, "open", path, bytes.toString("base64"));
}

export const writeFileSync = (path, data, options) => writeAs("write", path, data, options);
export const appendFileSync = (path, data, options) => writeAs("append", path, data, options);

function parentOf(path) {
  const at = path.replace(/\/+$/, "").lastIndexOf("/");
  return at > 0 ? path.slice(0, at) : at === 0 ? "/" : ".";
}

/** As Node: `recursive` answers the first folder it created, if any. */
export function mkdirSync(path, options) {
  const recursive = typeof options === "object" && options !== null && options.recursive === true;
  if (!recursive) return void call("mkdir", "mkdir", path);
  let first;
  for (let at = String(path); at !== "/" && at !== "." && !existsSync(at); at = parentOf(at)) first = at;
  call("mkdir", "mkdir", path, "recursive");
  return first;
}

export function readdirSync(path, options) {
  const withFileTypes = typeof options === "object" && options?.withFileTypes === true;
  const recursive = typeof options === "object" && options?.recursive === true;
  const shown = String(path);
  if (!withFileTypes && !recursive) return call("readdir", "scandir", shown);
  const entries = call("entries", "scandir", shown);
  const out = [];
  for (const entry of entries) {
    out.push(withFileTypes ? new Dirent(entry.name, entry.kind, shown) : entry.name);
    if (recursive && entry.kind === "dir") {
      for (const inner of readdirSync(join(shown, entry.name), options)) {
        out.push(withFileTypes ? inner : `${entry.name}/${inner}`);
      }
    }
  }
  return out;
}

export const statSync = (path, options) => {
  try {
    return stats(call("stat", "stat", path));
  } catch (error) {
    if (options?.throwIfNoEntry === false && error.code === "ENOENT") return undefined;
    throw error;
  }
};
export const lstatSync = statSync;
export const accessSync = (path, mode = constants.F_OK) => void call("access", "access", path, mode);
export const unlinkSync = (path) => void call("rm", "unlink", path);
export const rmdirSync = (path) => void call("rm", "rmdir", path, "dir");
/** `renameSync(from, to)`: both inside the write grants; replaces a file at `to`. */
export function renameSync(from, to) {
  const dest = String(to);
  try {
    call("rename", "rename", from, dest);
  } catch (error) {
    // Node names both paths.
    if (error.syscall === "rename" && error.path !== undefined) {
      error.message = error.message.replace(`rename '${error.path}'`, `rename '${error.path}' -> '${dest}'`);
      error.dest = dest;
    }
    throw error;
  }
}

/** `rmSync(path, {recursive, force})`, as Node: a directory needs `recursive`. */
export function rmSync(path, options) {
  const shown = String(path);
  try {
    call("rm", "rm", shown);
  } catch (error) {
    if (error.code === "ENOENT" && options?.force) return;
    if (error.code !== "EISDIR") throw error;
    if (!options?.recursive) {
      throw Object.assign(new Error(`Path is a directory: rm returned EISDIR (is a directory) ${shown}`), {
        code: "ERR_FS_EISDIR",
        errno: 21,
        syscall: "rm",
        path: shown,
      });
    }
    for (const entry of call("entries", "scandir", shown)) rmSync(join(shown, entry.name), options);
    call("rm", "rmdir", shown, "dir");
  }
}

const NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A new folder named `prefix` plus six random characters, within the write grants. */
export function mkdtempSync(prefix) {
  for (let attempt = 0; ; attempt++) {
    const suffix = [...randomBytes(6)].map((b) => NAME_CHARS[b % NAME_CHARS.length]).join("");
    const path = `${prefix}${suffix}`;
    try {
      call("mkdir", "mkdtemp", path);
      return path;
    } catch (error) {
      if (error.code === "EEXIST" && attempt < 16) continue;
      const shown = `${prefix}XXXXXX`;
      throw Object.assign(error, { path: shown, message: error.message.split(path).join(shown) });
    }
  }
}

/** The watchers alive, by the host's id of their watch. */
const watchers = new Map();

/** The host hands the events of the plugin's watches here (JSON). */
function deliverWatched(json) {
  for (const { watch: id, change, filename } of JSON.parse(json)) {
    const watcher = watchers.get(id);
    if (!watcher) continue;
    try {
      watcher.emit("change", change, watcher.encoding === "buffer" ? Buffer.from(filename) : filename);
    } catch (error) {
      console.error(`an fs.watch listener threw: ${error?.stack ?? error}`);
    }
  }
}

/** Node's `fs.FSWatcher`: `change` events `(eventType, filename)`, `close()`. */
export class FSWatcher extends EventEmitter {
  #id;
  constructor(id, encoding) {
    super();
    this.#id = id;
    this.encoding = encoding;
    watchers.set(id, this);
  }
  close() {
    if (this.#id === null) return;
    host().unwatch(this.#id);
    watchers.delete(this.#id);
    this.#id = null;
    Promise.resolve().then(() => this.emit("close"));
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
}

/**
 * `fs.watch`: a file or folder that exists within the grants (Node's
 * errors otherwise; `recursive` for a folder's tree). Its events reach the
 * listener while one of the plugin's hooks runs, or at the start of the
 * next (the host's rule: see the adapter's README).
 */
export function watch(path, options, listener) {
  if (typeof options === "function") [listener, options] = [options, undefined];
  if (typeof options === "string") options = { encoding: options };
  const id = call("watch", "watch", path, options?.recursive ? "recursive" : null);
  const services = host();
  if (services.watched !== deliverWatched) services.watched = deliverWatched;
  const watcher = new FSWatcher(id, options?.encoding ?? "utf8");
  if (typeof listener === "function") watcher.on("change", listener);
  const signal = options?.signal;
  if (signal?.aborted) watcher.close();
  else signal?.addEventListener?.("abort", () => watcher.close(), { once: true });
  return watcher;
}

/** The stat watchers of `fs.watchFile`, by path. */
const statWatchers = new Map();

const statsOrZero = (path) => {
  try {
    return statSync(path);
  } catch {
    return stats({ size: 0, mtimeMs: 0, isFile: false, isDirectory: false });
  }
};

/**
 * `fs.watchFile`: `listener(current, previous)` with the file's stats when
 * its size or modification time changes, driven by a watch on the file
 * (not by polling), so the file must exist within the grants.
 */
export function watchFile(path, options, listener) {
  if (typeof options === "function") listener = options;
  const key = String(path);
  let entry = statWatchers.get(key);
  if (!entry) {
    const watcher = watch(path);
    entry = { watcher, emitter: new EventEmitter(), previous: statsOrZero(path) };
    watcher.on("change", () => {
      const current = statsOrZero(path);
      const previous = entry.previous;
      if (current.mtimeMs === previous.mtimeMs && current.size === previous.size) return;
      entry.previous = current;
      entry.emitter.emit("change", current, previous);
    });
    statWatchers.set(key, entry);
  }
  if (typeof listener === "function") entry.emitter.on("change", listener);
  return entry.emitter;
}

/** `fs.unwatchFile`: one listener, or all; the watch ends with the last. */
export function unwatchFile(path, listener) {
  const key = String(path);
  const entry = statWatchers.get(key);
  if (!entry) return;
  if (typeof listener === "function") entry.emitter.off("change", listener);
  else entry.emitter.removeAllListeners("change");
  if (entry.emitter.listenerCount("change") === 0) {
    entry.watcher.close();
    statWatchers.delete(key);
  }
}

/**
 * `fs.promises.watch`: an async iterator of `{eventType, filename}`; it
 * ends when `signal` aborts (with Node's `AbortError`) or the loop stops.
 */
async function* watchEvents(path, options) {
  const waiting = [];
  /** @type {(value?: unknown) => void} */
  let wake = () => {};
  const watcher = watch(path, { ...options, signal: undefined }, (eventType, filename) => {
    waiting.push({ eventType, filename });
    wake();
  });
  const signal = options?.signal;
  const aborted = () => Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR", cause: signal.reason });
  const onAbort = () => wake();
  signal?.addEventListener?.("abort", onAbort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) throw aborted();
      if (waiting.length > 0) {
        yield waiting.shift();
        continue;
      }
      await new Promise((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener?.("abort", onAbort);
    watcher.close();
  }
}

const DEFAULT_CHUNK = 64 * 1024;

/**
 * A minimal `fs.ReadStream`: the file (at most the host's read limit) is
 * read when the stream first flows, then emitted in chunks (`Buffer`s, or
 * strings with an encoding) as `data`, then `end` and `close`; a failure is
 * an `error` event. It flows once a `data` listener is added, on `pipe`
 * and `resume`; `for await` reads it too.
 */
export class ReadStream extends EventEmitter {
  #chunks = null;
  #flowing = false;
  #encoding;
  #options;
  constructor(path, options) {
    super();
    this.path = String(path);
    this.#options = typeof options === "string" ? { encoding: options } : options ?? {};
    this.#encoding = this.#options.encoding ?? null;
    this.bytesRead = 0;
    this.destroyed = false;
  }
  #load() {
    if (this.#chunks) return this.#chunks;
    try {
      let bytes = readBytes(this.path);
      const start = this.#options.start ?? 0;
      const end = this.#options.end === undefined ? bytes.length : this.#options.end + 1;
      bytes = bytes.subarray(start, end);
      const size = Math.max(1, this.#options.highWaterMark ?? DEFAULT_CHUNK);
      this.#chunks = [];
      for (let at = 0; at < bytes.length; at += size) this.#chunks.push(bytes.subarray(at, at + size));
    } catch (error) {
      this.#chunks = error;
    }
    return this.#chunks;
  }
  #decode(chunk) {
    return this.#encoding ? chunk.toString(this.#encoding) : chunk;
  }
  setEncoding(encoding) {
    this.#encoding = encoding;
    return this;
  }
  on(name, listener) {
    super.on(name, listener);
    if (name === "data") this.resume();
    return this;
  }
  resume() {
    if (this.#flowing) return this;
    this.#flowing = true;
    Promise.resolve().then(() => {
      if (this.destroyed) return;
      const chunks = this.#load();
      if (chunks instanceof Error) {
        this.emit("error", chunks);
      } else {
        this.emit("open");
        this.emit("ready");
        for (const chunk of chunks) {
          if (this.destroyed) return;
          this.bytesRead += chunk.length;
          this.emit("data", this.#decode(chunk));
        }
        this.emit("end");
      }
      this.destroyed = true;
      this.emit("close");
    });
    return this;
  }
  pause() {
    return this;
  }
  pipe(destination) {
    this.on("data", (chunk) => destination.write(chunk));
    this.on("end", () => destination.end?.());
    return destination;
  }
  destroy(error) {
    if (!this.destroyed) {
      this.destroyed = true;
      if (error) this.emit("error", error);
      this.emit("close");
    }
    return this;
  }
  close(callback) {
    this.destroy();
    callback?.();
  }
  async *[Symbol.asyncIterator]() {
    const chunks = this.#load();
    if (chunks instanceof Error) throw chunks;
    for (const chunk of chunks) {
      this.bytesRead += chunk.length;
      yield this.#decode(chunk);
    }
    this.destroyed = true;
  }
}

export const createReadStream = (path, options) => new ReadStream(path, options);

/**
 * A minimal `fs.WriteStream`: `write` appends to the file at once (within
 * the write grants; the file is truncated first unless `flags` is `a`),
 * `end` finishes with `finish` and `close`; a failure is an `error` event.
 */
export class WriteStream extends EventEmitter {
  #failed = false;
  constructor(path, options) {
    super();
    this.path = String(path);
    this.bytesWritten = 0;
    const flags = (typeof options === "object" && options?.flags) || "w";
    this.#try(() => (flags.startsWith("a") ? appendFileSync(this.path, "") : writeFileSync(this.path, "")));
  }
  #try(action) {
    if (this.#failed) return false;
    try {
      action();
      return true;
    } catch (error) {
      this.#failed = true;
      Promise.resolve().then(() => this.emit("error", error));
      return false;
    }
  }
  write(chunk, encoding, callback) {
    const done = typeof encoding === "function" ? encoding : callback;
    const ok = this.#try(() => appendFileSync(this.path, chunk, typeof encoding === "string" ? encoding : undefined));
    if (ok) this.bytesWritten += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
    if (done) Promise.resolve().then(() => done());
    return ok;
  }
  end(chunk, encoding, callback) {
    const done = [chunk, encoding, callback].find((a) => typeof a === "function");
    if (chunk !== undefined && typeof chunk !== "function") this.write(chunk, typeof encoding === "string" ? encoding : undefined);
    Promise.resolve().then(() => {
      if (!this.#failed) this.emit("finish");
      this.emit("close");
      done?.();
    });
    return this;
  }
}

export const createWriteStream = (path, options) => new WriteStream(path, options);

/** Node's callback form of `sync`: the callback runs after the caller returns. */
const callback = (sync) => (...args) => {
  const done = args.pop();
  if (typeof done !== "function") throw Object.assign(new TypeError('The "cb" argument must be of type function'), { code: "ERR_INVALID_ARG_TYPE" });
  Promise.resolve().then(() => {
    let result;
    try {
      result = sync(...args);
    } catch (error) {
      done(error);
      return;
    }
    done(null, result);
  });
};

export const readFile = callback(readFileSync);
export const writeFile = callback(writeFileSync);
export const appendFile = callback(appendFileSync);
export const mkdir = callback(mkdirSync);
export const mkdtemp = callback(mkdtempSync);
export const readdir = callback(readdirSync);
export const stat = callback(statSync);
export const lstat = callback(lstatSync);
export const access = callback(accessSync);
export const unlink = callback(unlinkSync);
export const rename = callback(renameSync);
export const rmdir = callback(rmdirSync);
export const rm = callback(rmSync);
export const exists = (path, done) => void Promise.resolve().then(() => done(existsSync(path)));

const later = (fn) => async (...args) => fn(...args);
export const promises = Object.freeze({
  constants,
  readFile: later(readFileSync),
  writeFile: later(writeFileSync),
  appendFile: later(appendFileSync),
  mkdir: later(mkdirSync),
  readdir: later(readdirSync),
  stat: later(statSync),
  lstat: later(lstatSync),
  access: later(accessSync),
  mkdtemp: later(mkdtempSync),
  unlink: later(unlinkSync),
  rename: later(renameSync),
  rmdir: later(rmdirSync),
  rm: later(rmSync),
  watch: watchEvents,
});
