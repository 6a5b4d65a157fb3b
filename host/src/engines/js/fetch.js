// `fetch`, `Headers`, `Request` and `Response` for the flavors' plugins on
// the embedded engine, which has none of its own: yohost's own plugins
// (`yohost:globals`) and pi extensions (pi's `globals.js`) share this one
// module, imported as `yohost:fetch`. A request goes through the host's
// HTTP client (`fetch.rs`), off the plugin's thread, only to the hosts
// `capabilities.network` grants, and ends at the deadline of the hook that
// made it. The response body arrives whole (at most 16 MiB). Without the
// grant, `fetch` rejects, naming the key.

import { fromBase64, toBase64, utf8Decode, utf8Encode } from "yohost:bytes";

/** The host's services, or `undefined` when the flavor offers none. */
function host() {
  return /** @type {YohostHost | undefined} */ (globalThis[Symbol.for("yohost.host")]);
}

/** The global named `name` when the engine (or a prelude) has one. */
function global(name) {
  const value = globalThis[name];
  return typeof value === "function" ? value : undefined;
}

/** Node's `Headers`: names without regard to case. */
export class Headers {
  #map = new Map();
  constructor(init) {
    const pairs = init instanceof Headers ? [...init.entries()] : Array.isArray(init) ? init : Object.entries(init ?? {});
    for (const [name, value] of pairs) this.append(name, value);
  }
  append(name, value) {
    const key = String(name).toLowerCase();
    const had = this.#map.get(key);
    this.#map.set(key, had === undefined ? String(value) : `${had}, ${value}`);
  }
  set(name, value) {
    this.#map.set(String(name).toLowerCase(), String(value));
  }
  get(name) {
    return this.#map.get(String(name).toLowerCase()) ?? null;
  }
  has(name) {
    return this.#map.has(String(name).toLowerCase());
  }
  delete(name) {
    this.#map.delete(String(name).toLowerCase());
  }
  forEach(fn, self) {
    for (const [name, value] of this.entries()) fn.call(self, value, name, this);
  }
  *entries() {
    yield* [...this.#map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
  *keys() {
    for (const [name] of this.entries()) yield name;
  }
  *values() {
    for (const [, value] of this.entries()) yield value;
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}

/** The bytes of a body: a string (UTF-8), URLSearchParams, an ArrayBuffer or a typed array. */
function bodyBytes(body) {
  if (body == null) return null;
  if (typeof body === "string") return utf8Encode(body);
  const params = global("URLSearchParams");
  if (params !== undefined && body instanceof params) return utf8Encode(body.toString());
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError("fetch: the body must be a string, URLSearchParams, an ArrayBuffer or a typed array");
}

/** A request: what `fetch` takes instead of a URL and options. Its body is kept as bytes. */
export class Request {
  #body;
  constructor(input, init = {}) {
    const from = input instanceof Request ? input : null;
    this.url = from?.url ?? urlOf(input);
    this.method = String(init.method ?? from?.method ?? "GET").toUpperCase();
    this.headers = new Headers(init.headers ?? from?.headers);
    this.signal = init.signal ?? from?.signal ?? null;
    this.#body = init.body !== undefined ? bodyBytes(init.body) : from === null ? null : from.#body;
  }
  /** @param {Request} request */
  static bodyOf(request) {
    return request.#body;
  }
  clone() {
    return new Request(this);
  }
}

/** A response whose body arrived whole; it can be read once. */
export class Response {
  #bytes;
  constructor(body, init = {}) {
    this.#bytes = body == null ? new Uint8Array() : typeof body === "string" ? utf8Encode(body) : new Uint8Array(body);
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? "";
    this.headers = new Headers(init.headers);
    this.url = init.url ?? "";
    this.ok = this.status >= 200 && this.status < 300;
    this.redirected = false;
    this.bodyUsed = false;
  }
  #take() {
    if (this.bodyUsed) return Promise.reject(new TypeError("Body is unusable: Body has already been read"));
    this.bodyUsed = true;
    return Promise.resolve(this.#bytes);
  }
  async arrayBuffer() {
    const bytes = await this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  }
  async bytes() {
    return new Uint8Array(await this.#take());
  }
  async text() {
    return utf8Decode(await this.#take());
  }
  async json() {
    return JSON.parse(await this.text());
  }
  clone() {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    return new Response(this.#bytes, this);
  }
}

/** The URL `input` names: a string, a `URL` or a request. */
function urlOf(input) {
  return String(typeof input === "object" && input !== null ? (input.href ?? input.url ?? input) : input);
}

/** The host `url` names, for the message that says which to grant. */
function hostOf(url) {
  return /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(url)?.[1] ?? "";
}

function abortError(signal) {
  return signal.reason ?? Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
}

/** Node's `fetch`, within `capabilities.network`. */
export async function fetch(input, init = {}) {
  const request = new Request(input, init);
  const url = request.url;
  const start = host()?.fetch;
  if (typeof start !== "function") {
    const name = hostOf(url);
    const grant = name === "" ? "" : ` (as \`network = [${JSON.stringify(name)}]\`)`;
    throw new TypeError(
      `fetch(${JSON.stringify(url)}) is not available: the plugin's plugin.toml does not grant \`capabilities.network\`; add the host to it${grant}`,
    );
  }
  const signal = request.signal;
  if (signal?.aborted) throw abortError(signal);
  const body = Request.bodyOf(request);
  const sent = { url, method: request.method, headers: [...request.headers.entries()], body: body === null ? null : toBase64(body) };
  const pending = start(JSON.stringify(sent));
  const reply = await (signal
    ? Promise.race([pending, new Promise((_, reject) => signal.addEventListener?.("abort", () => reject(abortError(signal))))])
    : pending);
  const response = new Response(fromBase64(reply.body), {
    status: reply.status,
    statusText: reply.statusText,
    headers: reply.headers,
    url: reply.url,
  });
  response.redirected = reply.redirected;
  return response;
}
