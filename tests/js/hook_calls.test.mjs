// The hook calls both JavaScript engines share (host/src/engines/js/hook_calls.js).

import assert from "node:assert/strict";
import { test } from "node:test";
import { declarations } from "./scripts.mjs";

const { hookCalls, readyOf, replyJson } = declarations(
  ["host/src/engines/js/describe.js", "host/src/engines/js/hook_calls.js"],
  ["hookCalls", "readyOf", "replyJson"],
);

/** A plugin with `hooks` installed, and what reached its sink. */
function plugin(hooks, shaped = {}) {
  const sent = [];
  const sink = {
    done: (id, json) => sent.push(["done", id, json]),
    fail: (id, message) => sent.push(["fail", id, message]),
    badReply: (id, message) => sent.push(["bad", id, message]),
    write: (id, runId, level, args) => sent.push(["log", id, runId, level, args]),
    within: (id, runId, run) => {
      sent.push(["within", id, runId]);
      run();
    },
  };
  const calls = hookCalls(sink);
  const ready = calls.install({ hooks, ...shaped }, { KEY: "value" }, "/plugin");
  return { calls, sent, ready };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

test("a plain reply is sent as JSON, and undefined as null", () => {
  const { calls, sent } = plugin({ a: () => ({ ok: 1 }), b: () => undefined });
  calls.call(1, "a", {}, "run");
  calls.call(2, "b", {}, "run");
  assert.deepEqual(sent.filter(([kind]) => kind === "done"), [
    ["done", 1, '{"ok":1}'],
    ["done", 2, "null"],
  ]);
});

test("a promise's value is the reply and its rejection the failure", async () => {
  const { calls, sent } = plugin({
    good: async (args) => args.n + 1,
    bad: async () => {
      throw new RangeError("too far");
    },
  });
  calls.call(1, "good", { n: 1 }, "run");
  calls.call(2, "bad", {}, "run");
  await settled();
  assert.deepEqual(sent.find(([kind]) => kind === "done"), ["done", 1, "2"]);
  const [, id, message] = sent.find(([kind]) => kind === "fail");
  assert.equal(id, 2);
  assert.match(message, /^RangeError: too far/);
});

test("a throw is the call's failure, described with its name", () => {
  const { calls, sent } = plugin({
    a: () => {
      throw new TypeError("nope");
    },
    b: () => {
      throw "a string";
    },
  });
  calls.call(1, "a", {}, "run");
  calls.call(2, "b", {}, "run");
  const failures = sent.filter(([kind]) => kind === "fail");
  assert.match(failures[0][2], /^TypeError: nope/);
  assert.equal(failures[1][2], "threw a string");
});

test("a reply that cannot be JSON is a bad reply saying why", () => {
  const { calls, sent } = plugin({ big: () => 1n, fn: () => () => 1 });
  calls.call(1, "big", {}, "run");
  calls.call(2, "fn", {}, "run");
  const bad = sent.filter(([kind]) => kind === "bad");
  assert.match(bad[0][2], /^the reply cannot be turned into JSON: TypeError/);
  assert.equal(bad[1][2], "the reply cannot be turned into JSON (it is a function)");
  assert.deepEqual(replyJson({ a: [1] }), { json: '{"a":[1]}' });
});

test("the hook's code runs within its call", () => {
  const { calls, sent } = plugin({ a: () => null });
  calls.call(7, "a", {}, "run-7");
  assert.deepEqual(sent[0], ["within", 7, "run-7"]);
});

test("ctx carries the run, the granted environment, the folder and the call's log", () => {
  let seen;
  const { calls, sent } = plugin({
    a: (_args, ctx) => {
      seen = ctx;
      ctx.log.warn("careful", { n: 1 });
    },
  });
  calls.call(3, "a", {}, "run-3");
  assert.equal(seen.run_id, "run-3");
  assert.deepEqual({ ...seen.env }, { KEY: "value" });
  assert.equal(seen.pluginDir, "/plugin");
  assert.ok(Object.isFrozen(seen) && Object.isFrozen(seen.env));
  assert.deepEqual(sent.find(([kind]) => kind === "log"), ["log", 3, "run-3", "warn", ["careful", { n: 1 }]]);
});

test("a signal read before the host gives up aborts then, with the error named", () => {
  let signal;
  const { calls } = plugin({
    a: (_args, ctx) => {
      signal = ctx.signal;
      return new Promise(() => {});
    },
  });
  calls.call(1, "a", {}, "run");
  assert.equal(signal.aborted, false);
  calls.abort(1, "TimeoutError", "the call ran past its deadline");
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason.name, "TimeoutError");
  assert.equal(signal.reason.message, "the call ran past its deadline");
});

test("a signal first read after the host gave up is aborted already", async () => {
  let ctx;
  const { calls } = plugin({
    a: (_args, given) => {
      ctx = given;
      return new Promise(() => {});
    },
  });
  calls.call(1, "a", {}, "run");
  calls.abort(1, "AbortError", "the run was cancelled");
  assert.equal(ctx.signal.aborted, true);
  assert.equal(ctx.signal.reason.name, "AbortError");
});

test("aborting a call that already replied changes nothing", () => {
  const { calls, sent } = plugin({ a: () => 1 });
  calls.call(1, "a", {}, "run");
  calls.abort(1, "AbortError", "late");
  assert.deepEqual(
    sent.map(([kind]) => kind),
    ["within", "done"],
  );
});

test("a shape's result is read one way: a string name, warnings as text, whether it unloads", () => {
  const ready = readyOf({
    name: 3,
    hooks: { before_tool() {}, tools() {} },
    warnings: ["w", 2],
    unknown: "not a list",
    unload: () => {},
  });
  assert.deepEqual(ready, {
    name: null,
    hooks: ["before_tool", "tools"],
    warnings: ["w", "2"],
    unknown: [],
    unloads: true,
    app: { commands: [], flags: [] },
  });
  assert.throws(() => readyOf({}), TypeError);
});

test("a shape's commands and flags are read with names as given and the rest as text", () => {
  const { app } = readyOf({
    hooks: { command() {} },
    app: {
      commands: [{ name: "plan", description: 7 }, { name: 3 }, null],
      flags: [{ name: "fast", type: "string", default: "no" }, { name: "dry" }],
    },
  });
  assert.deepEqual(app, {
    commands: [{ name: "plan", description: "7" }],
    flags: [
      { name: "fast", description: "", type: "string", default: "no" },
      { name: "dry", description: "", type: "boolean", default: null },
    ],
  });
});

test("a call with the app's user interface has `ctx.ui`, and one without has none", async () => {
  const asked = [];
  const { calls, sent } = plugin({ check: (_args, ctx) => (ctx.ui ? ctx.ui({ kind: "confirm", title: "t", message: "m" }) : "headless") });
  calls.call(1, "check", {}, "r1", (request) => {
    asked.push(request);
    return Promise.resolve(true);
  });
  calls.call(2, "check", {}, "r2", null);
  await settled();
  assert.deepEqual(asked, [{ kind: "confirm", title: "t", message: "m" }]);
  const replies = sent.filter(([kind]) => kind === "done").map(([, id, json]) => [id, json]);
  assert.deepEqual(replies.sort(), [
    [1, "true"],
    [2, '"headless"'],
  ]);
});

test("an unload that throws at once or rejects is logged, never thrown", async () => {
  for (const unload of [
    () => {
      throw new Error("at once");
    },
    async () => {
      throw new Error("later");
    },
  ]) {
    const { calls, sent } = plugin({}, { unload });
    await calls.unload();
    const [, id, runId, level, [line]] = sent.find(([kind]) => kind === "log");
    assert.deepEqual([id, runId, level], [null, null, "error"]);
    assert.match(line, /^unloading failed: Error: (at once|later)/);
  }
});
