// `node:crypto` (and `crypto`) for pi extensions: `randomUUID`,
// `randomBytes`, `getRandomValues` and `createHash` (sha224, sha256,
// sha384, sha512). Random bytes and digests come from the host's Rust
// crates (getrandom, sha2), not from JavaScript.

import { host } from "pi:host";

function service(name) {
  const fn = host()?.[name];
  if (typeof fn !== "function") throw new Error(`node:crypto is not available: the host gave this plugin no ${name}`);
  return fn;
}

/** `size` random bytes from the operating system, as a Buffer. */
export function randomBytes(size, callback) {
  if (!Number.isInteger(size) || size < 0 || size > 65536) {
    throw new RangeError(`The value of "size" is out of range. It must be an integer from 0 to 65536. Received ${size}`);
  }
  const bytes = Buffer.from(service("randomBytes")(size));
  if (typeof callback === "function") {
    queueMicrotask(() => callback(null, bytes));
    return undefined;
  }
  return bytes;
}

/** Fill `array` (an integer typed array) with random values. */
export function getRandomValues(array) {
  const bytes = randomBytes(array.byteLength);
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes);
  return array;
}

/** A random (version 4) UUID. */
export function randomUUID() {
  const b = randomBytes(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const ALGORITHMS = ["sha224", "sha256", "sha384", "sha512"];

class Hash {
  #algorithm;
  #parts = [];
  #done = false;
  constructor(algorithm) {
    this.#algorithm = algorithm;
  }
  update(data, encoding) {
    if (this.#done) throw Object.assign(new Error("Digest already called"), { code: "ERR_CRYPTO_HASH_FINALIZED" });
    this.#parts.push(typeof data === "string" ? Buffer.from(data, encoding) : Buffer.from(data));
    return this;
  }
  digest(encoding) {
    if (this.#done) throw Object.assign(new Error("Digest already called"), { code: "ERR_CRYPTO_HASH_FINALIZED" });
    this.#done = true;
    const digest = Buffer.from(service("hash")(this.#algorithm, [...Buffer.concat(this.#parts)]));
    return encoding === undefined ? digest : digest.toString(encoding);
  }
  copy() {
    const copy = new Hash(this.#algorithm);
    for (const part of this.#parts) copy.update(part);
    return copy;
  }
}

/** A hash of one of the sha2 family; others throw as node does. */
export function createHash(algorithm) {
  const name = String(algorithm).toLowerCase().replace("-", "");
  if (!ALGORITHMS.includes(name)) {
    throw Object.assign(new Error(`Digest method not supported: ${algorithm} (yohost offers ${ALGORITHMS.join(", ")})`), { code: "ERR_OSSL_EVP_UNSUPPORTED" });
  }
  return new Hash(name);
}

export const getHashes = () => [...ALGORITHMS];
export const webcrypto = Object.freeze({ getRandomValues, randomUUID });

export default { randomBytes, randomUUID, getRandomValues, createHash, getHashes, webcrypto };
