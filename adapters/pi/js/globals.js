// The Node globals pi extensions use, as far as a plugin host should go:
// `process` (the granted environment only; `exit` throws), `Buffer` (the
// common subset), `setInterval`, `TextEncoder`, `TextDecoder`, `URL`,
// `URLSearchParams`, `Intl` where the engine has none (pi:intl), and `fetch`
// with `Headers`, `Request` and `Response` (the host's `yohost:fetch`, within
// `capabilities.network`, which yohost's own plugins get too). Evaluated
// before the extension's code; yohost's own TypeScript plugins do not get
// the others.

import { host } from "pi:host";
import { settings } from "pi:settings";
import { fetch, Headers, Request, Response } from "yohost:fetch";
import { makeIntl } from "pi:intl";
import { utf8Encode, utf8Decode, toBase64, fromBase64 } from "yohost:bytes";

// --- UTF-8 -----------------------------------------------------------------

export class TextEncoder {
  get encoding() {
    return "utf-8";
  }
  encode(text = "") {
    return utf8Encode(text);
  }
}

export class TextDecoder {
  constructor(label = "utf-8") {
    const name = String(label).toLowerCase();
    if (name !== "utf-8" && name !== "utf8") throw new RangeError(`TextDecoder: the encoding "${label}" is not supported (only utf-8)`);
  }
  get encoding() {
    return "utf-8";
  }
  decode(input) {
    if (input === undefined) return "";
    const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    return utf8Decode(bytes);
  }
}

// --- Buffer ----------------------------------------------------------------

function encodeAs(text, encoding = "utf8") {
  switch (String(encoding).toLowerCase()) {
    case "utf8":
    case "utf-8":
      return utf8Encode(text);
    case "base64":
    case "base64url":
      return fromBase64(text);
    case "hex": {
      const out = [];
      for (let i = 0; i + 1 < text.length; i += 2) {
        const byte = parseInt(text.slice(i, i + 2), 16);
        if (Number.isNaN(byte)) break;
        out.push(byte);
      }
      return out;
    }
    case "latin1":
    case "binary":
    case "ascii":
      return [...String(text)].map((c) => c.charCodeAt(0) & 0xff);
    default:
      throw new TypeError(`Unknown encoding: ${encoding}`);
  }
}

export class Buffer extends Uint8Array {
  static from(value, encodingOrOffset, length) {
    if (typeof value === "string") return Buffer.#of(encodeAs(value, encodingOrOffset));
    if (value instanceof ArrayBuffer) return new Buffer(value, encodingOrOffset ?? 0, length ?? value.byteLength - (encodingOrOffset ?? 0));
    if (ArrayBuffer.isView(value)) return Buffer.#of(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    if (Array.isArray(value)) return Buffer.#of(value);
    if (value?.type === "Buffer" && Array.isArray(value.data)) return Buffer.#of(value.data);
    throw new TypeError("Buffer.from needs a string, an array, an ArrayBuffer or a typed array");
  }
  static #of(bytes) {
    const buffer = new Buffer(bytes.length);
    buffer.set(bytes);
    return buffer;
  }
  /** @param {number} size @param {number | string} [fill] */
  static alloc(size, fill = 0) {
    const buffer = new Buffer(size);
    if (fill !== 0) buffer.fill(typeof fill === "string" ? fill.charCodeAt(0) : fill);
    return buffer;
  }
  static allocUnsafe(size) {
    return new Buffer(size);
  }
  static isBuffer(value) {
    return value instanceof Buffer;
  }
  static isEncoding(encoding) {
    return ["utf8", "utf-8", "base64", "base64url", "hex", "latin1", "binary", "ascii"].includes(String(encoding).toLowerCase());
  }
  static byteLength(value, encoding) {
    if (typeof value !== "string") return value.byteLength;
    return encodeAs(value, encoding).length;
  }
  static concat(list, total) {
    const size = total ?? list.reduce((n, b) => n + b.length, 0);
    const out = Buffer.alloc(size);
    let at = 0;
    for (const part of list) {
      if (at >= size) break;
      out.set(part.subarray(0, size - at), at);
      at += part.length;
    }
    return out;
  }
  toString(encoding = "utf8", start = 0, end = this.length) {
    const bytes = this.subarray(start, end);
    switch (String(encoding).toLowerCase()) {
      case "utf8":
      case "utf-8":
        return utf8Decode(bytes);
      case "base64":
        return toBase64(bytes, false);
      case "base64url":
        return toBase64(bytes, true);
      case "hex":
        return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
      case "latin1":
      case "binary":
      case "ascii":
        return String.fromCharCode(...bytes);
      default:
        throw new TypeError(`Unknown encoding: ${encoding}`);
    }
  }
  toJSON() {
    return { type: "Buffer", data: [...this] };
  }
  equals(other) {
    return this.length === other.length && this.every((b, i) => b === other[i]);
  }
  write(text, offset = 0) {
    const bytes = utf8Encode(text).subarray(0, this.length - offset);
    this.set(bytes, offset);
    return bytes.length;
  }
  slice(start, end) {
    return this.subarray(start, end);
  }
  subarray(start, end) {
    const view = super.subarray(start, end);
    return new Buffer(view.buffer, view.byteOffset, view.length);
  }
}

// --- URL -------------------------------------------------------------------

export class URLSearchParams {
  #pairs = [];
  constructor(init = "") {
    if (typeof init === "string") {
      for (const part of init.replace(/^\?/, "").split("&")) {
        if (part === "") continue;
        const at = part.indexOf("=");
        const [k, v] = at < 0 ? [part, ""] : [part.slice(0, at), part.slice(at + 1)];
        this.#pairs.push([decode(k), decode(v)]);
      }
    } else if (init != null) {
      for (const [k, v] of Symbol.iterator in Object(init) ? init : Object.entries(init)) this.#pairs.push([String(k), String(v)]);
    }
  }
  get(name) {
    return this.#pairs.find(([k]) => k === name)?.[1] ?? null;
  }
  getAll(name) {
    return this.#pairs.filter(([k]) => k === name).map(([, v]) => v);
  }
  has(name) {
    return this.#pairs.some(([k]) => k === name);
  }
  set(name, value) {
    this.delete(name);
    this.#pairs.push([String(name), String(value)]);
  }
  append(name, value) {
    this.#pairs.push([String(name), String(value)]);
  }
  delete(name) {
    this.#pairs = this.#pairs.filter(([k]) => k !== name);
  }
  forEach(fn) {
    for (const [k, v] of this.#pairs) fn(v, k, this);
  }
  keys() {
    return this.#pairs.map(([k]) => k)[Symbol.iterator]();
  }
  values() {
    return this.#pairs.map(([, v]) => v)[Symbol.iterator]();
  }
  entries() {
    return this.#pairs.map((p) => [...p])[Symbol.iterator]();
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  get size() {
    return this.#pairs.length;
  }
  toString() {
    return this.#pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
  }
}

const decode = (text) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
};

const URL_PARTS = /^([a-zA-Z][a-zA-Z0-9+.-]*):(?:\/\/(?:([^@/?#]*)@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?)?([^?#]*)(\?[^#]*)?(#.*)?$/;
const DEFAULT_PORTS = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443", "ftp:": "21" };

function dotSegments(path) {
  const out = [];
  for (const part of path.split("/").slice(1)) {
    if (part === "..") out.pop();
    else if (part !== ".") out.push(part);
  }
  const last = path.split("/").pop();
  return "/" + out.join("/") + (last === "." || last === ".." ? (out.length ? "/" : "") : "");
}

export class URL {
  #protocol;
  #username;
  #password;
  #hostname;
  #port;
  #pathname;
  #search;
  #hash;
  #special;
  constructor(url, base) {
    const text = String(url).trim();
    let full = text;
    if (!URL_PARTS.test(text) && base !== undefined) {
      const root = base instanceof URL ? base : new URL(base);
      full = root.#resolve(text);
    }
    const match = URL_PARTS.exec(full);
    if (!match) throw new TypeError(`Invalid URL: ${text}`);
    const [, scheme, auth = "", hostname = "", port = "", path, search = "", hash = ""] = match;
    this.#protocol = scheme.toLowerCase() + ":";
    this.#special = full.slice(scheme.length + 1).startsWith("//");
    const [user = "", pass = ""] = auth.split(":");
    this.#username = user;
    this.#password = pass;
    this.#hostname = hostname.toLowerCase();
    this.#port = port === DEFAULT_PORTS[this.#protocol] ? "" : port;
    this.#pathname = this.#special ? dotSegments(path === "" ? "/" : path).replace(/ /g, "%20") : path;
    this.#search = search === "?" ? "" : search;
    this.#hash = hash === "#" ? "" : hash;
  }
  #resolve(relative) {
    if (relative.startsWith("//")) return this.#protocol + relative;
    const origin = `${this.#protocol}//${this.host}`;
    if (relative.startsWith("/")) return origin + relative;
    if (relative.startsWith("?")) return origin + this.#pathname + relative;
    if (relative.startsWith("#")) return origin + this.#pathname + this.#search + relative;
    return origin + this.#pathname.replace(/[^/]*$/, "") + relative;
  }
  get protocol() {
    return this.#protocol;
  }
  get username() {
    return this.#username;
  }
  get password() {
    return this.#password;
  }
  get hostname() {
    return this.#hostname;
  }
  get port() {
    return this.#port;
  }
  get host() {
    return this.#hostname + (this.#port ? `:${this.#port}` : "");
  }
  get origin() {
    return this.#special && this.#protocol !== "file:" ? `${this.#protocol}//${this.host}` : "null";
  }
  get pathname() {
    return this.#pathname;
  }
  get search() {
    return this.#search;
  }
  set search(value) {
    const text = String(value);
    this.#search = text === "" || text === "?" ? "" : text.startsWith("?") ? text : `?${text}`;
  }
  get searchParams() {
    const params = new URLSearchParams(this.#search);
    const url = this;
    for (const name of ["set", "append", "delete"]) {
      const original = params[name].bind(params);
      params[name] = (...args) => {
        original(...args);
        url.search = params.toString();
      };
    }
    return params;
  }
  get hash() {
    return this.#hash;
  }
  get href() {
    const auth = this.#username ? `${this.#username}${this.#password ? `:${this.#password}` : ""}@` : "";
    const authority = this.#special ? `//${auth}${this.host}` : "";
    return `${this.#protocol}${authority}${this.#pathname}${this.#search}${this.#hash}`;
  }
  toString() {
    return this.href;
  }
  toJSON() {
    return this.href;
  }
  static canParse(url, base) {
    try {
      new URL(url, base);
      return true;
    } catch {
      return false;
    }
  }
}

// --- timers ----------------------------------------------------------------

const intervals = new Map();
let nextInterval = 1;

function setInterval(fn, ms, ...args) {
  if (typeof fn !== "function") throw new TypeError("setInterval needs a function");
  const id = nextInterval++;
  const tick = () => {
    intervals.set(id, setTimeout(tick, ms));
    fn(...args);
  };
  intervals.set(id, setTimeout(tick, ms));
  return id;
}

function clearInterval(id) {
  if (!intervals.has(id)) return;
  clearTimeout(intervals.get(id));
  intervals.delete(id);
}

// --- process ---------------------------------------------------------------

/** What `process.exit` throws: a plugin cannot end the host. */
export class ProcessExit extends Error {
  constructor(code) {
    super(`process.exit(${code ?? ""}) is not available in yohost: a plugin cannot end the host`);
    this.name = "ProcessExit";
    this.code = code;
  }
}

function makeProcess(env) {
  const log = (level) => {
    const stream = {
      write(chunk) {
        console[level](String(chunk).replace(/\x1b\][^\x07]*\x07|\x1b\[[0-9;?]*[ -/]*[@-~]/g, ""));
        return true;
      },
      isTTY: false,
      columns: 80,
      rows: 24,
      // A stream that never resizes or closes: listeners are kept by none.
      on: () => stream,
      once: () => stream,
      off: () => stream,
      addListener: () => stream,
      removeListener: () => stream,
      removeAllListeners: () => stream,
      getWindowSize: () => [80, 24],
      hasColors: () => false,
    };
    return stream;
  };
  return Object.freeze({
    env,
    cwd: () => host()?.cwd ?? "/",
    platform: settings.platform,
    arch: settings.arch,
    argv: Object.freeze(["yohost", settings.entry]),
    execArgv: Object.freeze([]),
    execPath: "yohost",
    pid: 0,
    versions: Object.freeze({ ...settings.versions }),
    release: Object.freeze({ name: "yohost" }),
    stdout: Object.freeze(log("debug")),
    stderr: Object.freeze(log("debug")),
    exitCode: undefined,
    exit(code) {
      throw new ProcessExit(code);
    },
    on: () => undefined,
    once: () => undefined,
    off: () => undefined,
    emitWarning: (warning) => console.warn(String(warning)),
    nextTick: (fn, ...args) => queueMicrotask(() => fn(...args)),
    hrtime: Object.assign(
      (previous) => {
        const now = Date.now();
        const time = [Math.floor(now / 1000), (now % 1000) * 1e6];
        if (!previous) return time;
        return [time[0] - previous[0], time[1] - previous[1]];
      },
      { bigint: () => BigInt(Date.now()) * 1000000n },
    ),
    uptime: () => (Date.now() - started) / 1000,
    memoryUsage: () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }),
  });
}

const started = Date.now();

/**
 * Install the globals, given the adapter's settings and the environment the
 * manifest grants (both JSON text).
 */
export default function installGlobals(settingsJson, envJson) {
  Object.freeze(Object.assign(settings, JSON.parse(settingsJson)));
  Object.assign(globalThis, {
    process: makeProcess(Object.freeze(JSON.parse(envJson))),
    Buffer,
    TextEncoder,
    TextDecoder,
    URL,
    URLSearchParams,
    setInterval,
    clearInterval,
    // Node's own, where the engine has them.
    fetch: globalThis.fetch ?? fetch,
    Headers: globalThis.Headers ?? Headers,
    Request: globalThis.Request ?? Request,
    Response: globalThis.Response ?? Response,
    global: globalThis,
  });
  if (typeof globalThis.queueMicrotask !== "function") {
    globalThis.queueMicrotask = (fn) => void Promise.resolve().then(fn);
  }
  if (typeof globalThis.Intl !== "object") {
    const process = /** @type {{env: Record<string, string | undefined>}} */ (globalThis.process);
    // The subset above, not all of `Intl`'s types.
    Object.assign(globalThis, { Intl: makeIntl(() => process.env.TZ ?? "UTC") });
  }
}
