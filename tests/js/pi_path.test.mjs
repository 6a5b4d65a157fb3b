// pi's `node:path` stand-in (adapters/pi/js/path.js) answers as Node's
// `path.posix` does, relative paths starting at the host's working
// directory (none here: `/`).

import assert from "node:assert/strict";
import posix from "node:path/posix";
import { test } from "node:test";
import * as path from "pi:path";

const CASES = ["", ".", "/", "a/b/../c", "/a//b/./c/", "../x/../../y", "a/", "/a/b.c.d", ".hidden", "a/.b"];

test("normalize, dirname, basename and extname match Node's", () => {
  for (const p of CASES) {
    for (const name of ["normalize", "dirname", "basename", "extname", "isAbsolute"]) {
      assert.equal(path[name](p), posix[name](p), `${name}(${JSON.stringify(p)})`);
    }
  }
});

test("join and relative match Node's", () => {
  assert.equal(path.join("a", "", "../b", "c/"), posix.join("a", "", "../b", "c/"));
  assert.equal(path.join(), ".");
  assert.equal(path.relative("/a/b/c", "/a/d"), posix.relative("/a/b/c", "/a/d"));
});

test("resolve starts a relative path at the working directory", () => {
  assert.equal(path.resolve("a", "../b"), "/b");
  assert.equal(path.resolve("/x", "y", "/z", "w"), "/z/w");
});
