// `@earendil-works/pi-ai` (and `@mariozechner/pi-ai`): what pi extensions
// use of it at run time and the host can honour: typebox's `Type`, and
// `StringEnum`.

export { Type } from "typebox";

/** A string enum schema (`{type: "string", enum}`), as pi's helper makes it. */
export function StringEnum(values, options) {
  return { type: "string", enum: [...values], ...(options ?? {}) };
}
