// The DSH adapter's services on Node, the parts that start no process:
// `shellEnv`'s contributors, `jobs`' registry and `shell.resolve`
// (adapters/dsh/js/node/shell.js and jobs.js).

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { createJobs } from "dsh:services/jobs";
import { createShell, createShellEnv } from "dsh:services/shell";

const session = (id) => ({ session: { header: { id } } });

test("shell env contributors own their DSH_ keys, and the values come sorted", () => {
  const env = createShellEnv();
  const variables = { DSH_B: { description: "b" }, DSH_A: { description: "a" } };
  const remove = env.register({ name: "one", variables, resolve: () => ({ DSH_B: "2", DSH_A: "1" }) });
  assert.deepEqual(Object.entries(env.collect({ agent: session("s1") })), [
    ["DSH_A", "1"],
    ["DSH_B", "2"],
    ["DSH_SESSION_ID", "s1"],
    ["DSH_SHELL", "1"],
  ]);
  assert.deepEqual(env.list().map((v) => v.key), ["DSH_A", "DSH_B"]);
  assert.throws(() => env.register({ name: "two", variables: { DSH_A: {} }, resolve: () => ({}) }), /already owned by contributor "one"/);
  remove();
  assert.deepEqual(env.list(), []);
});

test("shell env keys must be DSH_ names, not reserved, and values strings", () => {
  const env = createShellEnv();
  assert.throws(() => env.register({ name: "", variables: {} }), /non-empty/);
  assert.throws(() => env.register({ name: "x", variables: { HOME: {} } }), /invalid key "HOME"/);
  assert.throws(() => env.register({ name: "x", variables: { DSH_SHELL: {} } }), /reserved key "DSH_SHELL"/);
  env.register({ name: "x", variables: { DSH_X: {} }, resolve: () => ({ DSH_X: 1 }) });
  assert.throws(() => env.collect({}), /non-string value for "DSH_X"/);
});

test("shell.resolve bounds the timeout and output and starts in the workspace", () => {
  const host = { workspace: "/work/space", exec: false, read: [], write: [] };
  const policy = { resolve: () => ({ mode: "read-only", workspaceRoot: host.workspace }) };
  const shell = createShell(host, "read-only", policy);
  const spec = shell.resolve({ command: "ls", workdir: "sub", timeoutMs: 10_000_000, stdoutMaxBytes: 10 });
  assert.equal(spec.workdir, path.resolve("/work/space", "sub"));
  assert.equal(spec.timeoutMs, 600_000);
  assert.equal(spec.stdoutMaxBytes, 10);
  assert.deepEqual(spec.sandboxPolicy, { mode: "read-only", workspaceRoot: "/work/space" });
  assert.equal(shell.resolve({ command: "ls" }).timeoutMs, 120_000);
  assert.throws(() => shell.resolve({}), TypeError);
});

test("without exec a command ends as a sandbox denial, and runs nothing", async () => {
  const host = { workspace: "/", exec: false, read: [], write: [] };
  const shell = createShell(host, "read-only", { resolve: () => ({}) });
  const result = await shell.run(shell.resolve({ command: "touch /should-not-exist" }));
  assert.equal(result.exitCode, 126);
  assert.equal(result.sandbox.denied, true);
  assert.match(result.stderr.text, /does not grant `exec`/);
});

test("a job is seen by its own session only, and ends with its run", async () => {
  const jobs = createJobs();
  let cancelled = null;
  let finish;
  const run = { id: "run-1", ...session("s1") };
  const id = jobs.service.start({
    kind: "task",
    label: "waits",
    owner: run,
    run: () => ({ done: new Promise((resolve) => (finish = resolve)), cancel: (why) => (cancelled = why) }),
  });
  assert.equal(id, "task-1");
  assert.deepEqual(jobs.service.list(session("s1")).map((j) => [j.id, j.status]), [["task-1", "running"]]);
  assert.deepEqual(jobs.service.list(session("s2")), []);
  assert.throws(() => jobs.service.get(id, session("s2")), /no job task-1/);
  const ended = jobs.endOwned((owner) => owner?.id === "run-1");
  assert.equal(cancelled, "the run ended");
  finish({ status: "killed" });
  await ended;
  assert.deepEqual(jobs.service.list(session("s1")), []);
});

test("a finished job's waiters wake and its listeners hear it once", async () => {
  const jobs = createJobs();
  const heard = [];
  jobs.service.onJobDone((snapshot) => heard.push([snapshot.id, snapshot.status]));
  const id = jobs.service.start({ kind: "k", run: () => ({ done: Promise.resolve({ status: "completed", output: "out" }) }) });
  const snapshot = await jobs.service.wait(id, 1000);
  assert.equal(snapshot.status, "completed");
  assert.deepEqual(heard, [["k-1", "completed"]]);
  assert.equal(jobs.service.read(id).output, "out");
  assert.equal(jobs.service.kill(id), "already-finished");
  await assert.rejects(jobs.service.wait(id, 0), /positive finite timeout/);
});
