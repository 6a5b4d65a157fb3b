// `fetch`, `Headers` and `Response` for pi extensions: a request goes
// through the host's HTTP client, off the plugin's thread, only to the hosts
// `capabilities.network` grants, and ends at the deadline of the hook that
// made it. The response body arrives whole (at most 16 MiB). Without the
// grant, `fetch` rejects, naming the key.

import { host } from "pi:host";

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

/** A response whose body arrived whole; it can be read once. */
export class Response {
  #bytes;
  constructor(body, init = {}) {
    this.#bytes = body == null ? new Uint8Array() : typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body);
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
    return new TextDecoder().decode(await this.#take());
  }
  async json() {
    return JSON.parse(await this.text());
  }
  clone() {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    return new Response(this.#bytes, this);
  }
}

function bodyBase64(body) {
  if (body == null) return null;
  if (typeof body === "string") return Buffer.from(body).toString("base64");
  if (body instanceof URLSearchParams) return Buffer.from(body.toString()).toString("base64");
  if (body instanceof ArrayBuffer) return Buffer.from(new Uint8Array(body)).toString("base64");
  if (ArrayBuffer.isView(body)) return Buffer.from(new Uint8Array(body.buffer, body.byteOffset, body.byteLength)).toString("base64");
  throw new TypeError("fetch: the body must be a string, URLSearchParams, an ArrayBuffer or a typed array");
}

function abortError(signal) {
  return signal.reason ?? Object.assign(new Error("This operation was aborted"), { name: "AbortError" });
}

/** Node's `fetch`, within `capabilities.network`. */
export async function fetch(input, init = {}) {
  const url = String(input instanceof URL ? input.href : input?.url ?? input);
  const start = host()?.fetch;
  if (typeof start !== "function") {
    throw new TypeError(`fetch(${JSON.stringify(url)}) is not available: the plugin's plugin.toml does not grant \`capabilities.network\``);
  }
  const signal = init.signal;
  if (signal?.aborted) throw abortError(signal);
  const headers = [...new Headers(init.headers ?? input?.headers).entries()];
  const request = { url, method: init.method ?? input?.method ?? "GET", headers, body: bodyBase64(init.body) };
  const pending = start(JSON.stringify(request));
  const reply = await (signal
    ? Promise.race([pending, new Promise((_, reject) => signal.addEventListener?.("abort", () => reject(abortError(signal))))])
    : pending);
  const response = new Response(Buffer.from(reply.body, "base64"), {
    status: reply.status,
    statusText: reply.statusText,
    headers: reply.headers,
    url: reply.url,
  });
  response.redirected = reply.url !== url && reply.url !== new URL(url).href;
  return response;
}
