// How a logged or thrown value reads (host/src/engines/js/describe.js).

import assert from "node:assert/strict";
import { test } from "node:test";
import { declarations } from "./scripts.mjs";

const { show, describe } = declarations(["host/src/engines/js/describe.js"], ["show", "describe"]);

test("strings show as they are and other values as JSON where they can", () => {
  assert.equal(show("text"), "text");
  assert.equal(show({ a: 1 }), '{"a":1}');
  assert.equal(show(undefined), "undefined");
  const cycle = {};
  cycle.self = cycle;
  assert.equal(show(cycle), "[object Object]");
});

test("an error is its name, message and first frame", () => {
  const error = new TypeError("bad");
  error.stack = "TypeError: bad\n    at hook (file:///plugin.js:3:9)\n    at other (x:1:1)";
  assert.equal(describe(error), "TypeError: bad (at hook (file:///plugin.js:3:9))");
});

test("a thrown value that is not an error is named as thrown, and describing never throws", () => {
  assert.equal(describe(42), "threw 42");
  const hostile = new Error("x");
  Object.defineProperty(hostile, "name", {
    get() {
      throw new Error("no");
    },
  });
  assert.equal(describe(hostile), "threw a value that cannot be shown");
});
