// `@earendil-works/pi-ai` (and `@mariozechner/pi-ai`): what pi extensions
// use of it at run time and the host can honour. The host embeds this file
// after typebox.js, whose exports (`Type`) it shares.

/** A string enum schema (`{type: "string", enum}`), as pi's helper makes it. */
export function StringEnum(values, options) {
  return { type: "string", enum: [...values], ...(options ?? {}) };
}
