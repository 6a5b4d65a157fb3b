// The host's file service on Node: the file operations (`NodeFileOp` in
// host.d.ts: every `FileOp` but those the host says Node lacks, and why,
// in `init`) on Node's own `fs`, inside the
// permission model's grants, replying as the embedded engine's service
// (services/files.rs) does: `{"ok": value}`, or `{"error", "code"}` with
// `"granted": false` for a path outside the grants. Bytes travel as base64.
// The host appends this file to bootstrap.mjs: plain function declarations,
// no globals.

/**
 * The file service over `relativeTo`, its errors starting with `module`.
 * @param {typeof import("node:fs")} fs
 * @param {typeof import("node:path")} path
 * @param {string} relativeTo Where relative paths start.
 * @param {string} module The module a plugin imported, named in errors.
 * @param {NodeServices["lacks"]} lacks The operations Node does not serve, with why.
 * @returns {YohostHost["fs"]}
 */
function nodeFiles(fs, path, relativeTo, module, lacks) {
  /** @param {string} p */
  const where = (p) => path.resolve(relativeTo, p);
  /** @param {string | null} data */
  const bytes = (data) => Buffer.from(data ?? "", "base64");
  /** @type {{[op in NodeFileOp]: (p: string, data: string | null) => unknown}} */
  const ops = {
    read: (p) => fs.readFileSync(where(p), "utf8"),
    read_bytes: (p) => fs.readFileSync(where(p)).toString("base64"),
    write: (p, data) => fs.writeFileSync(where(p), data ?? ""),
    append: (p, data) => fs.appendFileSync(where(p), data ?? ""),
    write_bytes: (p, data) => fs.writeFileSync(where(p), bytes(data)),
    append_bytes: (p, data) => fs.appendFileSync(where(p), bytes(data)),
    // A recursive `mkdirSync` answers the first folder it made: not a reply.
    mkdir: (p, data) => void fs.mkdirSync(where(p), { recursive: data === "recursive" }),
    rm: (p, data) => (data === "dir" ? fs.rmdirSync(where(p)) : fs.unlinkSync(where(p))),
    rename: (p, to) => fs.renameSync(where(p), where(to ?? "")),
    exists: (p) => {
      try {
        fs.accessSync(where(p));
        return true;
      } catch (_) {
        return false;
      }
    },
    stat: (p) => {
      const s = fs.statSync(where(p));
      return { size: s.size, mtimeMs: s.mtimeMs, isFile: s.isFile(), isDirectory: s.isDirectory() };
    },
    readdir: (p) => fs.readdirSync(where(p)).sort(),
    entries: (p) =>
      fs
        .readdirSync(where(p), { withFileTypes: true })
        .map((e) => ({ name: e.name, kind: e.isSymbolicLink() ? "symlink" : e.isDirectory() ? "dir" : e.isFile() ? "file" : "other" }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    access: (p, mode) => fs.accessSync(where(p), Number(mode) & 2 ? fs.constants.W_OK : fs.constants.R_OK),
  };
  return function files(op, p, data) {
    if (!Object.hasOwn(ops, op)) {
      const why = Object.hasOwn(lacks, op) ? ` on Node: ${lacks[op]}` : "";
      return JSON.stringify({ error: `${module}: \`${op}\` is not available${why}`, code: "ENOSYS" });
    }
    try {
      const value = ops[/** @type {NodeFileOp} */ (op)](p, data);
      return JSON.stringify({ ok: value ?? null });
    } catch (e) {
      const denied = e?.code === "ERR_ACCESS_DENIED";
      const code = denied ? "EACCES" : String(e?.code ?? "EIO");
      const reply = { error: `${module}: ${op} ${p}: ${code}`, code };
      return JSON.stringify(denied ? { ...reply, granted: false } : reply);
    }
  };
}
