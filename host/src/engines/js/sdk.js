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

/**
 * Run file operation `op` through the host's services (`YohostHost`).
 * @param {FileOp} op
 * @param {unknown} path
 * @param {unknown} [data]
 */
function hostFiles(op, path, data) {
  const host = /** @type {YohostHost | undefined} */ (globalThis[Symbol.for("yohost.host")]);
  const fs = host?.fs;
  if (typeof fs !== "function") throw new Error("yohost fs: the host gave this plugin no file access");
  const reply = JSON.parse(fs(op, String(path), data === undefined ? null : String(data)));
  if ("ok" in reply) return reply.ok;
  throw Object.assign(new Error(reply.error), { code: reply.code });
}

/**
 * Text files within the directories `plugin.toml` grants
 * (`capabilities.read`, `capabilities.write`) and the plugin's data folder
 * (`ctx.dataDir`). Relative paths start at the
 * plugin's folder (`ctx.pluginDir`); anything outside the grants throws an
 * error whose `code` is "EACCES" (`exists` answers false instead).
 */
export const fs = Object.freeze({
  readText: (path) => hostFiles("read", path),
  writeText: (path, text) => void hostFiles("write", path, text),
  list: (path) => hostFiles("readdir", path),
  exists: (path) => hostFiles("exists", path),
});
