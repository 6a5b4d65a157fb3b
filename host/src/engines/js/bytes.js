// UTF-8 and base64 for the flavors' JavaScript, which the embedded engine
// runs without `TextEncoder`, `TextDecoder` or `Buffer`: the bytes of
// `fetch` (fetch.js) and pi's Node globals share them. Imported as
// `yohost:bytes` by the flavor modules that use it.

/** @param {unknown} text @returns {Uint8Array} */
export function utf8Encode(text) {
  const out = [];
  for (const ch of String(text)) {
    let code = ch.codePointAt(0);
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd; // a lone surrogate
    if (code < 0x80) out.push(code);
    else if (code < 0x800) out.push(0xc0 | (code >> 6), 0x80 | (code & 63));
    else if (code < 0x10000) out.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
    else out.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
  }
  return new Uint8Array(out);
}

// Malformed sequences become U+FFFD, one per maximal invalid subpart, as
// the WHATWG decoder does.
/** @param {ArrayLike<number>} bytes @returns {string} */
export function utf8Decode(bytes) {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      out += String.fromCharCode(b);
      i += 1;
      continue;
    }
    const need = b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : 0;
    // The allowed range of the second byte rules out overlong forms and
    // surrogates.
    const low = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const high = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    let code = b & (0x3f >> need);
    let k = 0;
    while (k < need) {
      const next = bytes[i + 1 + k];
      const [lo, hi] = k === 0 ? [low, high] : [0x80, 0xbf];
      if (next === undefined || next < lo || next > hi) break;
      code = (code << 6) | (next & 63);
      k += 1;
    }
    if (need === 0 || k < need) {
      out += "\ufffd";
      i += 1 + k;
      continue;
    }
    out += String.fromCodePoint(code);
    i += need + 1;
  }
  return out;
}

// --- base64 ----------------------------------------------------------------

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** @param {ArrayLike<number>} bytes @param {boolean} [url] @returns {string} */
export function toBase64(bytes, url) {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += BASE64[(n >> 18) & 63] + BASE64[(n >> 12) & 63];
    out += i + 1 < bytes.length ? BASE64[(n >> 6) & 63] : "=";
    out += i + 2 < bytes.length ? BASE64[n & 63] : "=";
  }
  return url ? out.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") : out;
}

/** @param {string} text @returns {number[]} */
export function fromBase64(text) {
  const clean = String(text).replace(/-/g, "+").replace(/_/g, "/").replace(/[^A-Za-z0-9+/]/g, "");
  const out = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    value = (value << 6) | BASE64.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >> bits) & 0xff);
    }
  }
  return out;
}
