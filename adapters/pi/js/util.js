// `node:util` (and `util`) for pi extensions: `promisify`, `format`,
// `inspect` (as JSON), `isDeepStrictEqual`, and `TextEncoder`/`TextDecoder`.

const custom = Symbol.for("nodejs.util.promisify.custom");

/** `fn(...args, callback)` as a function returning a promise. */
export function promisify(fn) {
  if (typeof fn !== "function") throw new TypeError('The "original" argument must be of type function');
  if (typeof fn[custom] === "function") return fn[custom];
  return (...args) => new Promise((resolve, reject) => fn(...args, (error, value) => (error ? reject(error) : resolve(value))));
}
promisify.custom = custom;

/** A value as text, JSON where it can be. */
export function inspect(value) {
  if (typeof value === "string") return `'${value}'`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `%s`, `%d`, `%i`, `%f`, `%j`, `%o`, `%O` and `%%`, as node formats them. */
export function format(template, ...args) {
  if (typeof template !== "string") return [template, ...args].map((v) => (typeof v === "string" ? v : inspect(v))).join(" ");
  let rest = args;
  const text = template.replace(/%[sdifjoO%]/g, (token) => {
    if (token === "%%") return "%";
    if (rest.length === 0) return token;
    const [value, ...others] = rest;
    rest = others;
    if (token === "%s") return String(value);
    if (token === "%d" || token === "%i") return String(token === "%i" ? parseInt(value, 10) : Number(value));
    if (token === "%f") return String(parseFloat(value));
    return inspect(value);
  });
  return [text, ...rest.map((v) => (typeof v === "string" ? v : inspect(v)))].join(" ");
}

/** Whether `a` and `b` are equal as JSON values. */
export function isDeepStrictEqual(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export const TextEncoder = globalThis.TextEncoder;
export const TextDecoder = globalThis.TextDecoder;

export default { promisify, inspect, format, isDeepStrictEqual, TextEncoder, TextDecoder };
