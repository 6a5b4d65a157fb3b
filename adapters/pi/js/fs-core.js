// The file functions behind `node:fs` and `node:fs/promises` for pi
// extensions: text files, within the directories the plugin's manifest
// grants (`capabilities.read` to read, `capabilities.write` to write). The
// host checks every path; a denied one throws an error with `code`
// "EACCES". Contents are UTF-8 strings: there are no Buffers. fs.js and
// fs-promises.js export from this module.

import { randomBytes } from "node:crypto";

function call(op, path, data) {
  const fs = globalThis[Symbol.for("yohost.host")]?.fs;
  if (typeof fs !== "function") throw new Error("node:fs is not available: the host gave this plugin no file access");
  const reply = JSON.parse(fs(op, String(path), data === undefined ? null : String(data)));
  if ("ok" in reply) return reply.ok;
  const error = new Error(reply.error);
  error.code = reply.code;
  error.path = String(path);
  throw error;
}

function stats(raw) {
  return {
    size: raw.size,
    mtimeMs: raw.mtimeMs,
    mtime: new Date(raw.mtimeMs),
    isFile: () => raw.isFile,
    isDirectory: () => raw.isDirectory,
    isSymbolicLink: () => false,
  };
}

export const constants = Object.freeze({ F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 });

export const existsSync = (path) => call("exists", path);
export const readFileSync = (path) => call("read", path);
export const writeFileSync = (path, data) => void call("write", path, data);
export const appendFileSync = (path, data) => void call("append", path, data);
export const mkdirSync = (path) => void call("mkdir", path);
export const readdirSync = (path) => call("readdir", path);
export const statSync = (path) => stats(call("stat", path));
export const accessSync = (path, mode = constants.F_OK) => void call("access", path, mode);

const NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A new folder named `prefix` plus six random characters, within the grants. */
export function mkdtempSync(prefix) {
  for (let attempt = 0; attempt < 16; attempt++) {
    const suffix = [...randomBytes(6)].map((b) => NAME_CHARS[b % NAME_CHARS.length]).join("");
    const path = `${prefix}${suffix}`;
    if (call("exists", path)) continue;
    call("mkdir", path);
    return path;
  }
  throw Object.assign(new Error(`node:fs: could not create a unique folder for ${prefix}`), { code: "EEXIST" });
}

export const watch = () => {
  throw new Error("node:fs.watch is not available: the host does not watch files for plugins");
};

const later = (fn) => async (...args) => fn(...args);
export const promises = Object.freeze({
  readFile: later(readFileSync),
  writeFile: later(writeFileSync),
  appendFile: later(appendFileSync),
  mkdir: later(mkdirSync),
  readdir: later(readdirSync),
  stat: later(statSync),
  access: later(accessSync),
  mkdtemp: later(mkdtempSync),
});
