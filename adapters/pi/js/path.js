// `node:path` (and `path`) for pi extensions: the POSIX functions, on
// strings only. `path.posix` is the module itself.

import { host } from "pi:host";

export const sep = "/";
export const delimiter = ":";

function normalizeParts(parts, absolute) {
  const out = [];
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
    } else {
      out.push(part);
    }
  }
  return out;
}

export function isAbsolute(path) {
  return path.startsWith("/");
}

export function normalize(path) {
  if (path === "") return ".";
  const absolute = isAbsolute(path);
  const trailing = path.endsWith("/");
  let out = normalizeParts(path.split("/"), absolute).join("/");
  if (out === "" && !absolute) out = ".";
  if (out !== "" && trailing) out += "/";
  return (absolute ? "/" : "") + out;
}

export function join(...parts) {
  const joined = parts.filter((p) => p !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

export function resolve(...parts) {
  let path = "";
  for (let i = parts.length - 1; i >= 0 && !isAbsolute(path); i--) {
    if (parts[i] !== "") path = path === "" ? parts[i] : `${parts[i]}/${path}`;
  }
  if (!isAbsolute(path)) {
    const cwd = host()?.cwd ?? "/";
    path = `${cwd}/${path}`;
  }
  const out = normalizeParts(path.split("/"), true).join("/");
  return "/" + out;
}

export function relative(from, to) {
  const a = resolve(from).split("/").filter(Boolean);
  const b = resolve(to).split("/").filter(Boolean);
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...a.slice(common).map(() => ".."), ...b.slice(common)].join("/");
}

export function dirname(path) {
  if (path === "") return ".";
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  const at = trimmed.lastIndexOf("/");
  if (at === -1) return ".";
  if (at === 0) return "/";
  return trimmed.slice(0, at);
}

export function basename(path, ext) {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  let base = trimmed.slice(trimmed.lastIndexOf("/") + 1);
  if (ext !== undefined && base !== ext && base.endsWith(ext)) base = base.slice(0, -ext.length);
  return base;
}

export function extname(path) {
  const base = basename(path);
  const at = base.lastIndexOf(".");
  return at <= 0 ? "" : base.slice(at);
}

export function parse(path) {
  const base = basename(path);
  const ext = extname(path);
  const dir = path.includes("/") ? dirname(path) : "";
  return { root: isAbsolute(path) ? "/" : "", dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
}

export function format({ dir, root, base, name, ext }) {
  const file = base ?? `${name ?? ""}${ext ?? ""}`;
  const folder = dir ?? root ?? "";
  return folder === "" ? file : folder === root ? `${folder}${file}` : `${folder}/${file}`;
}

const path = { sep, delimiter, isAbsolute, normalize, join, resolve, relative, dirname, basename, extname, parse, format };
path.posix = path;
export const posix = path;
export default path;
