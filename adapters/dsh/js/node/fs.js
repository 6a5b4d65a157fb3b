// DSH's `fs` service on the Node engine (see services.js): files in the
// plugin's grants, checked before Node's permission model and the kernel
// sandbox see them, failing with DSH's `FsError` codes.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const inside = (dir, file) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** `ctx.fs`: files in the plugin's grants, with DSH's `FsError` codes. */
export async function createFs(host, mode, entry) {
  // The plugin's own `@deepseek-ai/dsh-fs`, so `instanceof FsError` holds.
  const url = pathToFileURL(createRequire(entry).resolve("@deepseek-ai/dsh-fs")).href;
  const { FsError, FsTargetKey, FsVersion } = await import(url);
  const fail = (message, code, cause) => new FsError(message, code, cause === undefined ? undefined : { cause });
  const readable = [...host.read, ...host.write];
  const target = (real) => ({ targetKey: FsTargetKey(real), displayPath: real });
  const real = (t) => String(t.targetKey);
  const versionOf = (s) => FsVersion(`${s.dev}:${s.ino}:${s.mtimeNs}:${s.ctimeNs}:${s.size}`);
  const kind = (s) => (s.isFile() ? "file" : s.isDirectory() ? "directory" : s.isSymbolicLink() ? "symlink" : "other");
  const mayRead = (file) => readable.some((dir) => inside(dir, file));
  const mayWrite = (file) => host.write.some((dir) => inside(dir, file));
  const code = (e) =>
    ({ ENOENT: "FS_NOT_FOUND", ENOTDIR: "FS_NOT_DIRECTORY", EACCES: "FS_PERMISSION_DENIED", EPERM: "FS_PERMISSION_DENIED", ERR_ACCESS_DENIED: "FS_PERMISSION_DENIED" })[e?.code] ?? "FS_IO_ERROR";
  const io = (what, file, e) => fail(`cannot ${what} "${file}": ${e?.message ?? e}`, code(e), e);
  const checkRead = (file) => {
    if (!mayRead(file)) throw fail(`cannot read "${file}": outside the plugin's read grants`, "FS_PERMISSION_DENIED");
  };
  // A mutation outside the write grants is a sandbox denial, as DSH's
  // confining filesystem reports it.
  const checkWrite = (file) => {
    if (!mayWrite(file)) throw fail(`cannot write "${file}": outside the plugin's write grants (${mode} mode)`, "FS_SANDBOX_DENIED");
  };
  const aborted = (signal) => {
    if (signal?.aborted) throw fail("the operation was aborted", "FS_ABORTED");
  };
  const lf = (text) => text.replace(/\r\n/g, "\n");
  const stat = (file) => {
    try {
      return fs.statSync(file, { bigint: true });
    } catch (e) {
      if (e?.code === "ENOENT") return undefined;
      throw io("stat", file, e);
    }
  };
  const text = (file) => {
    const bytes = fs.readFileSync(file);
    const decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
    if (bytes.includes(0)) throw fail(`cannot read "${file}": not a text file`, "FS_NOT_TEXT");
    try {
      return decoded.decode(bytes);
    } catch (_) {
      throw fail(`cannot read "${file}": not UTF-8 text`, "FS_NOT_TEXT");
    }
  };
  // Write `content` to `file` atomically: a sibling file, then a rename.
  const replace = (file, content) => {
    const temp = path.join(path.dirname(file), `.${path.basename(file)}.yohost-${process.pid}-${Date.now()}`);
    try {
      fs.writeFileSync(temp, content, { flag: "wx" });
      fs.renameSync(temp, file);
    } catch (e) {
      try {
        fs.rmSync(temp, { force: true });
      } catch (_) {}
      throw io("write", file, e);
    }
    return versionOf(fs.statSync(file, { bigint: true }));
  };

  return Object.freeze({
    get sandboxMode() {
      return mode;
    },
    async resolve(p, opts = {}) {
      aborted(opts.signal);
      const named = path.resolve(opts.cwd ?? host.workspace, String(p));
      // The real path of what exists; a missing tail keeps its names. A
      // path the plugin may not even look at stays as named: every
      // operation checks the grants.
      let head = named;
      const tail = [];
      for (;;) {
        try {
          head = fs.realpathSync(head);
          break;
        } catch (e) {
          if (e?.code !== "ENOENT" || path.dirname(head) === head) return target(named);
          tail.unshift(path.basename(head));
          head = path.dirname(head);
        }
      }
      return target(path.join(head, ...tail));
    },
    processPath: (t) => real(t),
    fileUrl: (t) => pathToFileURL(real(t)).href,
    contains: (parent, child) => inside(real(parent), real(child)),
    async stat(t, signal) {
      aborted(signal);
      const file = real(t);
      checkRead(file);
      const s = stat(file);
      if (s === undefined) return undefined;
      return { version: versionOf(s), type: kind(s) === "symlink" ? "other" : kind(s), ...(s.isFile() ? { size: Number(s.size) } : {}) };
    },
    async lstat(p, opts = {}, signal) {
      aborted(signal);
      const file = path.resolve(opts.cwd ?? host.workspace, String(p));
      checkRead(file);
      try {
        const s = fs.lstatSync(file, { bigint: true });
        return { version: versionOf(s), type: kind(s), ...(s.isFile() ? { size: Number(s.size) } : {}) };
      } catch (e) {
        if (e?.code === "ENOENT") return undefined;
        throw io("stat", file, e);
      }
    },
    async readText(t, signal) {
      aborted(signal);
      const file = real(t);
      checkRead(file);
      try {
        return text(file);
      } catch (e) {
        throw e instanceof FsError ? e : io("read", file, e);
      }
    },
    async streamText(t, signal) {
      const whole = await this.readText(t, signal);
      return (async function* () {
        yield whole;
      })();
    },
    async readBytes(t, signal, maxBytes) {
      aborted(signal);
      const file = real(t);
      checkRead(file);
      const s = stat(file);
      if (s === undefined) throw fail(`cannot read "${file}": not found`, "FS_NOT_FOUND");
      if (Number(s.size) > maxBytes) throw fail(`cannot read "${file}": larger than ${maxBytes} bytes`, "FS_TOO_LARGE");
      try {
        return new Uint8Array(fs.readFileSync(file));
      } catch (e) {
        throw io("read", file, e);
      }
    },
    async listDir(t, signal) {
      aborted(signal);
      const dir = real(t);
      checkRead(dir);
      let names;
      try {
        names = fs.readdirSync(dir).sort();
      } catch (e) {
        throw io("list", dir, e);
      }
      return names.map((name) => {
        const file = path.join(dir, name);
        const s = fs.lstatSync(file, { bigint: true });
        const type = kind(s) === "symlink" ? "other" : kind(s);
        return { name, type, target: target(file), version: versionOf(s), ...(s.isFile() ? { size: Number(s.size) } : {}) };
      });
    },
    async writeText(t, content, expected, signal) {
      aborted(signal);
      const file = real(t);
      checkWrite(file);
      const s = stat(file);
      if (expected?.kind === "createIfAbsent" && s !== undefined) throw fail(`"${file}" already exists`, "FS_NOT_OBSERVED");
      if (expected?.kind === "replaceIfVersion" && (s === undefined || versionOf(s) !== expected.version)) {
        throw fail(`"${file}" changed since it was read`, "FS_STALE_VERSION");
      }
      let before = null;
      if (s !== undefined) {
        try {
          before = lf(text(file));
        } catch (_) {
          before = null;
        }
      }
      const after = lf(String(content));
      const version = replace(file, String(content));
      return { operation: s === undefined ? "create" : "update", version, before, after };
    },
    async editText(t, edit, expected, signal) {
      aborted(signal);
      const file = real(t);
      checkWrite(file);
      const s = stat(file);
      if (s === undefined) throw fail(`cannot edit "${file}": not found`, "FS_NOT_FOUND");
      if (expected !== undefined && versionOf(s) !== expected.version) throw fail(`"${file}" changed since it was read`, "FS_STALE_VERSION");
      const before = lf(text(file));
      const old = lf(String(edit.oldString));
      if (old.length === 0) throw fail("the text to replace is empty", "FS_EDIT_NOT_FOUND");
      const count = before.split(old).length - 1;
      if (count === 0) throw fail(`the text to replace was not found in "${file}"`, "FS_EDIT_NOT_FOUND");
      if (count > 1 && !edit.replaceAll) throw fail(`the text to replace occurs ${count} times in "${file}"`, "FS_AMBIGUOUS_EDIT");
      const replacement = lf(String(edit.newString));
      const after = edit.replaceAll ? before.split(old).join(replacement) : before.replace(old, () => replacement);
      const version = replace(file, after);
      return { version, before, after };
    },
  });
}
