// Node's file service (host/src/engines/node/files.js): every file
// operation host.d.ts declares is served but those Node lacks, and the
// replies are the embedded engine's.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { declarations, text } from "./scripts.mjs";

const { nodeFiles } = declarations(["host/src/engines/node/files.js"], ["nodeFiles"]);

/** The string literals of the type alias `name` in host.d.ts. */
function declared(name) {
  const source = text("host/src/engines/js/host.d.ts");
  const alias = new RegExp(`^type ${name} =([^;]*);`, "m").exec(source);
  assert.ok(alias, `host.d.ts declares ${name}`);
  return [...alias[1].matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
}

/** A file service over a fresh folder, replying parsed. */
function files(fsModule = fs) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "yohost-files-"));
  const run = nodeFiles(fsModule, path, dir, "node:fs", { watch: "the reason" });
  return { dir, op: (op, p, data = null) => JSON.parse(run(op, p, data)) };
}

test("Node serves every declared file operation but those it is declared to lack", () => {
  const lacks = declared("NodeFileOp");
  assert.deepEqual(lacks, ["watch"]);
  const { op } = files();
  for (const name of declared("FileOp")) {
    const reply = op(name, "missing");
    assert.equal(reply.code === "ENOSYS", lacks.includes(name), `${name}: ${JSON.stringify(reply)}`);
  }
  assert.equal(op("watch", ".").error, "node:fs: `watch` is not available on Node: the reason");
  assert.equal(op("unlink", ".").error, "node:fs: `unlink` is not available");
});

test("text and bytes are written, appended and read back", () => {
  const { op } = files();
  assert.deepEqual(op("write", "a.txt", "one"), { ok: null });
  assert.deepEqual(op("append", "a.txt", " two"), { ok: null });
  assert.deepEqual(op("read", "a.txt"), { ok: "one two" });
  assert.deepEqual(op("write_bytes", "b.bin", Buffer.from([0, 255]).toString("base64")), { ok: null });
  assert.deepEqual(op("append_bytes", "b.bin", Buffer.from([7]).toString("base64")), { ok: null });
  assert.deepEqual(op("read_bytes", "b.bin"), { ok: Buffer.from([0, 255, 7]).toString("base64") });
});

test("folders are made, listed by name and kind, and removed", () => {
  const { op } = files();
  assert.deepEqual(op("mkdir", "d"), { ok: null });
  assert.equal(op("mkdir", "d").code, "EEXIST");
  assert.deepEqual(op("mkdir", "d/e/f", "recursive"), { ok: null });
  op("write", "d/z.txt", "");
  assert.deepEqual(op("readdir", "d"), { ok: ["e", "z.txt"] });
  assert.deepEqual(op("entries", "d"), { ok: [{ name: "e", kind: "dir" }, { name: "z.txt", kind: "file" }] });
  assert.equal(op("rm", "d/e").code, "EISDIR");
  assert.deepEqual(op("rm", "d/e/f", "dir"), { ok: null });
  assert.deepEqual(op("rm", "d/z.txt"), { ok: null });
  assert.deepEqual(op("rename", "d/e", "moved"), { ok: null });
  assert.deepEqual(op("exists", "moved"), { ok: true });
  assert.deepEqual(op("exists", "d/e"), { ok: false });
});

test("stat and access answer as the embedded engine does", () => {
  const { op } = files();
  op("write", "a.txt", "four");
  const { ok } = op("stat", "a.txt");
  assert.deepEqual({ ...ok, mtimeMs: 0 }, { size: 4, mtimeMs: 0, isFile: true, isDirectory: false });
  assert.deepEqual(op("access", "a.txt", "2"), { ok: null });
  assert.equal(op("access", "missing").code, "ENOENT");
});

test("errors name the module, the operation and the code", () => {
  const { op } = files();
  const reply = op("read", "missing.txt");
  assert.equal(reply.code, "ENOENT");
  assert.equal(reply.error, "node:fs: read missing.txt: ENOENT");
  assert.equal(reply.granted, undefined);
});

test("a path the permission model denies is EACCES and says it is not granted", () => {
  const denied = Object.assign(new Error("denied"), { code: "ERR_ACCESS_DENIED" });
  const { op } = files({
    ...fs,
    readFileSync: () => {
      throw denied;
    },
  });
  assert.deepEqual(op("read", "/etc/secret"), { error: "node:fs: read /etc/secret: EACCES", code: "EACCES", granted: false });
});
