// The `yohost` module's runtime. The host embeds this file as the built-in
// module `yohost`; its types are in yohost.d.ts.

/** The version of the plugin API this SDK speaks. */
export const API_VERSION = "0.1.0";

/** Declare a plugin: the default export of a plugin file. */
export function definePlugin(plugin) {
  return plugin;
}

/** Declare a tool (a typed identity helper). */
export function defineTool(tool) {
  return tool;
}

/** A text content block. */
export function text(text) {
  return { type: "text", text };
}

/** An image content block (`data` is base64). */
export function image(data, mimeType) {
  return { type: "image", data, mimeType };
}
