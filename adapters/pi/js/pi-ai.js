// `@earendil-works/pi-ai` (and `@mariozechner/pi-ai`): what pi extensions
// use of it at run time and the host can honour: typebox's `Type`,
// `StringEnum` and `uuidv7`.

import { randomBytes } from "node:crypto";

export { Type } from "typebox";

/** A string enum schema (`{type: "string", enum}`), as pi's helper makes it. */
export function StringEnum(values, options) {
  return { type: "string", enum: [...values], ...(options ?? {}) };
}

/** A time-ordered (version 7) UUID, as pi's helper makes it. */
export function uuidv7() {
  const bytes = randomBytes(16);
  let now = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = now % 256;
    now = Math.floor(now / 256);
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
