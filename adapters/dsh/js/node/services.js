// The services DSH's host injects, on the Node engine: `shell`, `shellEnv`,
// `jobs`, `fs`, `approval` and `sandboxPolicy`, with the shapes of DSH's
// published service definitions (`@deepseek-ai/dsh-shell`, `dsh-shell-env`,
// `dsh-jobs`, `dsh-fs`, `dsh-user-approval`, `dsh-sandbox-policy`, at
// 0.1.0-rc.8), mapped onto the plugin's grants.
//
// Every process `shell` starts is a child of the plugin's `node` process, so
// it runs in that process's kernel sandbox (its Landlock ruleset, its
// process group, killed with it). Files go through Node's permission model
// and the same kernel sandbox; the service checks the grants first, so a
// denial is reported as DSH reports one.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** The longest a foreground command may run, and its default, in ms. */
const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;
/** What each captured stream keeps in memory (its tail), in bytes. */
const OUTPUT_MAX_BYTES = 1024 * 1024;
/** How long a run's end waits for its background jobs to exit, in ms. */
const JOB_END_GRACE_MS = 1000;
/** What a Landlock denial says on a failed command's stderr (EACCES, EPERM). */
const DENIAL_SIGNATURES = ["permission denied", "operation not permitted"];

const inside = (dir, file) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** A stream's bounded tail: `text` and whether bytes were dropped. */
function collector(maxBytes) {
  let chunks = [];
  let bytes = 0;
  let truncated = false;
  let unread = [];
  return {
    push(chunk) {
      chunks.push(chunk);
      unread.push(chunk);
      bytes += chunk.length;
      while (bytes > maxBytes && chunks.length > 0) {
        const extra = bytes - maxBytes;
        if (chunks[0].length <= extra) bytes -= chunks.shift().length;
        else {
          chunks[0] = chunks[0].subarray(extra);
          bytes -= extra;
        }
        truncated = true;
      }
    },
    output: () => ({ text: Buffer.concat(chunks).toString("utf8"), truncated }),
    // What arrived since the last take; `lossy` when more than the cap came.
    take() {
      const data = Buffer.concat(unread);
      unread = [];
      const lossy = data.length > maxBytes;
      return { text: (lossy ? data.subarray(data.length - maxBytes) : data).toString("utf8"), lossy };
    },
  };
}

/** The services, for a plugin whose `settings.host` describes its grants. */
export async function provide(settings, needed) {
  const host = settings.host;
  const entry = settings.entry;
  const mode = host.write.length > 0 ? "workspace-write" : "read-only";
  const workspaceRoot = host.workspace;

  const sandboxPolicy = Object.freeze({
    defaultMode: mode,
    workspaceRoot,
    resolve(request = {}) {
      const sessionId = request.session?.header?.id;
      return { mode: request.mode ?? mode, workspaceRoot, ...(sessionId !== undefined ? { sessionId } : {}) };
    },
    overrideOf: () => undefined,
  });

  const approval = createApproval();
  const shellEnv = createShellEnv();
  const shell = createShell(host, mode, sandboxPolicy);
  const jobs = createJobs();
  const services = { sandboxPolicy, approval, shellEnv, shell, jobs: jobs.service };
  if (needed.includes("fs")) services.fs = await createFs(host, mode, entry);
  return {
    services,
    // A run ended: its jobs end with it.
    finishRun: (runId) => jobs.endOwned((owner) => owner?.id === runId),
    dispose: () => jobs.endOwned(() => true),
  };
}

/**
 * `ctx.approval`: DSH's approval service with no answerer composed, under
 * its `never` policy by default: nobody is asked and every ask is
 * `rejected`. A session switched to `ask` gets DSH's fail-closed
 * `unavailable`. Each ask and its outcome go to the session's log.
 */
function createApproval() {
  const POLICIES = ["ask", "never"];
  let asked = 0;
  const overrideOf = (session) =>
    (session?.events ?? []).filter((e) => e.type === "approval/policy").at(-1)?.data?.policy;
  return Object.freeze({
    config: Object.freeze({ policy: "never" }),
    setPolicy(agent, policy) {
      if (!POLICIES.includes(policy)) throw new Error(`invalid approval policy ${JSON.stringify(policy)}`);
      agent.session.append("approval/policy", { policy });
    },
    overrideOf,
    async request(req) {
      const id = `approval-${++asked}`;
      const session = req?.agent?.session;
      session?.append("approval/asked", {
        id,
        toolName: String(req?.toolName ?? ""),
        ...(req?.callId ? { callId: req.callId } : {}),
        ...(req?.reason ? { reason: String(req.reason) } : {}),
      });
      const outcome = req?.signal?.aborted ? "cancelled" : (overrideOf(session) ?? "never") === "never" ? "rejected" : "unavailable";
      session?.append("approval/decided", { id, outcome });
      return outcome;
    },
  });
}

/** `ctx.shellEnv`: the `DSH_*` variables of each shell call. */
function createShellEnv() {
  const contributors = new Map();
  const owners = new Map();
  const RESERVED = ["DSH_SHELL", "DSH_SESSION_ID", "DSH_HOME"];
  return Object.freeze({
    register(contributor) {
      const name = String(contributor?.name ?? "");
      if (name.trim().length === 0) throw new Error("bash env contributor name must be non-empty");
      if (contributors.has(name)) throw new Error(`bash env contributor "${name}" is already registered`);
      const keys = Object.keys(contributor.variables ?? {});
      for (const key of keys) {
        if (!/^DSH_[A-Z][A-Z0-9_]*$/.test(key)) throw new Error(`bash env contributor "${name}" declared invalid key "${key}"`);
        if (RESERVED.includes(key)) throw new Error(`bash env contributor "${name}" cannot own reserved key "${key}"`);
        if (owners.has(key)) throw new Error(`bash env key "${key}" is already owned by contributor "${owners.get(key)}"; contributor "${name}" cannot also own it`);
      }
      contributors.set(name, contributor);
      for (const key of keys) owners.set(key, name);
      return () => {
        if (contributors.get(name) !== contributor) return;
        contributors.delete(name);
        for (const key of keys) owners.delete(key);
      };
    },
    collect(execution) {
      const values = { DSH_SHELL: "1" };
      const id = execution?.agent?.session?.header?.id;
      if (id !== undefined) values.DSH_SESSION_ID = id;
      for (const [name, contributor] of [...contributors].sort(([a], [b]) => a.localeCompare(b))) {
        for (const [key, value] of Object.entries(contributor.resolve(execution) ?? {})) {
          if (!Object.hasOwn(contributor.variables, key)) throw new Error(`bash env contributor "${name}" returned undeclared key "${key}"`);
          if (typeof value !== "string") throw new Error(`bash env contributor "${name}" returned a non-string value for "${key}"`);
          values[key] = value;
        }
      }
      return Object.freeze(Object.fromEntries(Object.entries(values).sort(([a], [b]) => a.localeCompare(b))));
    },
    list() {
      return [...contributors.values()]
        .flatMap((c) => Object.entries(c.variables).map(([key, v]) => ({ contributor: c.name, description: v.description, key })))
        .sort((a, b) => a.key.localeCompare(b.key));
    },
  });
}

/** `ctx.shell`: `bash -c` in the plugin's sandbox, when `exec` is granted. */
function createShell(host, mode, sandboxPolicy) {
  // The environment: the sandbox's (granted variables and the base ones),
  // without ambient `DSH_*`, then the request's, then the managed snapshot.
  const environment = (spec) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("DSH_")));
    return { ...env, ...(spec.env ?? {}), ...(spec.dshEnv ?? {}) };
  };
  const notGranted = "yohost: the plugin's manifest does not grant `exec` ([capabilities] exec = true), so no command runs\n";

  // Start `bash -c` in its own process group; `settle` hears how it ended.
  function launch(spec, stdoutMax) {
    const stdout = collector(stdoutMax);
    const stderr = collector(OUTPUT_MAX_BYTES);
    if (!host.exec) {
      stderr.push(Buffer.from(notGranted));
      return { child: null, stdout, stderr, closed: Promise.resolve({ code: 126, signal: null, notGranted: true }) };
    }
    let child;
    try {
      child = spawn("bash", ["-c", spec.command], {
        cwd: spec.workdir,
        env: environment(spec),
        stdio: [spec.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        detached: true,
      });
    } catch (e) {
      stderr.push(Buffer.from(`${e?.message ?? e}\n`));
      return { child: null, stdout, stderr, closed: Promise.resolve({ code: 127, signal: null }) };
    }
    child.stdout.on("data", (c) => stdout.push(c));
    child.stderr.on("data", (c) => stderr.push(c));
    if (spec.stdin !== undefined) child.stdin.end(spec.stdin);
    const closed = new Promise((resolve) => {
      child.on("error", (e) => {
        stderr.push(Buffer.from(`${e?.message ?? e}\n`));
        resolve({ code: 127, signal: null });
      });
      child.on("close", (code, signal) => resolve({ code, signal }));
    });
    return { child, stdout, stderr, closed };
  }

  // End the command and everything it started (its process group).
  const killGroup = (child) => {
    if (child === null || child.exitCode !== null || child.signalCode !== null) return false;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch (_) {
      child.kill("SIGKILL");
    }
    return true;
  };

  // The sandbox facts of a finished command: denied when it failed with a
  // denial on its stderr, or could not run at all without `exec`.
  const facts = (ended, stderrText) => ({
    mode,
    denied: ended.notGranted === true || (ended.code !== 0 && DENIAL_SIGNATURES.some((s) => stderrText.toLowerCase().includes(s))),
    enforcement: "full",
  });

  return Object.freeze({
    get sandboxMode() {
      return mode;
    },
    resolve(request) {
      if (request === null || typeof request !== "object" || typeof request.command !== "string") {
        throw new TypeError("shell.resolve needs a request with a `command`");
      }
      const timeoutMs = Math.min(request.timeoutMs ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
      const workdir = request.workdir === undefined ? host.workspace : path.resolve(host.workspace, request.workdir);
      return {
        command: request.command,
        workdir,
        timeoutMs,
        stdoutMaxBytes: Math.min(request.stdoutMaxBytes ?? OUTPUT_MAX_BYTES, OUTPUT_MAX_BYTES),
        ...(request.signal !== undefined ? { signal: request.signal } : {}),
        ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
        ...(request.env !== undefined ? { env: request.env } : {}),
        ...(request.dshEnv !== undefined ? { dshEnv: request.dshEnv } : {}),
        sandboxPolicy: request.sandboxPolicy ?? sandboxPolicy.resolve(),
      };
    },
    async run(spec) {
      const running = launch(spec, spec.stdoutMaxBytes ?? OUTPUT_MAX_BYTES);
      let cause = null;
      const stop = (why) => {
        if (cause === null && killGroup(running.child)) cause = why;
      };
      const timer = setTimeout(() => stop("timeout"), spec.timeoutMs);
      const onAbort = () => stop("abort");
      if (spec.signal?.aborted) onAbort();
      spec.signal?.addEventListener("abort", onAbort, { once: true });
      const ended = await running.closed;
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
      const stderr = running.stderr.output();
      return {
        exitCode: ended.signal === null ? ended.code : null,
        signal: ended.signal,
        timedOut: cause === "timeout",
        aborted: cause === "abort",
        timeoutMs: spec.timeoutMs,
        stdout: running.stdout.output(),
        stderr,
        sandbox: facts(ended, stderr.text),
      };
    },
    start(spec) {
      const running = launch(spec, OUTPUT_MAX_BYTES);
      const proc = {
        status: "running",
        exitCode: null,
        signal: null,
        done: null,
        readOutput() {
          const out = running.stdout.take();
          const err = running.stderr.take();
          let delta = out.text;
          if (err.text.length > 0) delta += `${delta.length > 0 && !delta.endsWith("\n") ? "\n" : ""}[stderr]\n${err.text}`;
          return { delta, lossy: out.lossy || err.lossy };
        },
        kill: () => killGroup(running.child),
      };
      proc.done = running.closed.then((ended) => {
        proc.status = ended.signal !== null ? "killed" : "completed";
        proc.exitCode = ended.signal === null ? ended.code : null;
        proc.signal = ended.signal;
        proc.sandbox = facts(ended, running.stderr.output().text);
      });
      return proc;
    },
  });
}

/** `ctx.jobs`: background work, owned by the run that started it. */
function createJobs() {
  const jobs = new Map();
  const counters = new Map();
  const doneListeners = new Set();
  const changedListeners = new Set();
  const contained = (listener, ...args) => {
    try {
      const r = listener(...args);
      if (r && typeof r.then === "function") r.then(undefined, (e) => console.error("a jobs listener failed:", e));
    } catch (e) {
      console.error("a jobs listener failed:", e);
    }
  };
  const changed = (owner) => {
    for (const l of [...changedListeners]) contained(l, owner);
  };
  const snapshot = (job) =>
    Object.freeze({
      id: job.id,
      kind: job.kind,
      label: job.label,
      ...(job.outputLimitBytes !== undefined ? { outputLimitBytes: job.outputLimitBytes } : {}),
      ...(job.owner !== undefined ? { ownerSession: job.owner.session?.header?.id } : {}),
      status: job.status,
      ...(job.detail !== undefined ? { detail: job.detail } : {}),
      startedAt: job.startedAt,
      ...(job.finishedAt !== undefined ? { finishedAt: job.finishedAt } : {}),
      reported: job.reported,
    });
  const visible = (job, caller) => job.owner === undefined || job.owner.session?.header?.id === caller?.session?.header?.id;
  const find = (id, caller) => {
    const job = jobs.get(String(id));
    if (job === undefined || !visible(job, caller)) throw new Error(`no job ${String(id)}`);
    return job;
  };
  const settle = (job, outcome) => {
    if (job.finishedAt !== undefined) return;
    job.status = outcome.status;
    job.detail = outcome.detail;
    job.finalOutput = outcome.output;
    job.finishedAt = Date.now();
    for (const w of job.waiters.splice(0)) w();
    changed(job.owner);
    for (const l of [...doneListeners]) contained(l, snapshot(job), job.owner);
  };

  const registry = {
    start(spec) {
      if (spec === null || typeof spec !== "object" || typeof spec.run !== "function") throw new TypeError("jobs.start needs `{kind, label, run}`");
      const kind = String(spec.kind);
      const n = (counters.get(kind) ?? 0) + 1;
      const hooks = spec.run();
      counters.set(kind, n);
      const job = {
        id: `${kind}-${n}`,
        kind,
        label: String(spec.label ?? ""),
        outputLimitBytes: spec.outputLimitBytes,
        owner: spec.owner,
        status: "running",
        startedAt: Date.now(),
        reported: false,
        hooks,
        waiters: [],
      };
      jobs.set(job.id, job);
      job.settled = Promise.resolve(hooks.done).then(
        (outcome) => settle(job, outcome ?? { status: "completed" }),
        (e) => settle(job, { status: "failed", detail: String(e?.message ?? e) }),
      );
      changed(job.owner);
      return job.id;
    },
    list: (caller) => [...jobs.values()].filter((j) => visible(j, caller)).map(snapshot),
    get: (id, caller) => snapshot(find(id, caller)),
    read(id, caller) {
      const job = find(id, caller);
      let output = typeof job.hooks.readOutput === "function" ? job.hooks.readOutput() : "";
      if (job.finishedAt !== undefined) {
        if (job.finalOutput !== undefined && typeof job.hooks.readOutput !== "function") output = job.finalOutput;
        job.reported = true;
      }
      return { output, snapshot: snapshot(job) };
    },
    kill(id, caller, reason) {
      const job = find(id, caller);
      if (job.finishedAt !== undefined) return "already-finished";
      job.hooks.cancel(reason);
      job.status = "stopping";
      job.reported = true;
      changed(job.owner);
      return "requested";
    },
    async wait(id, timeoutMs, caller, signal) {
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new Error("jobs.wait needs a positive finite timeout");
      const job = find(id, caller);
      if (job.finishedAt === undefined) {
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, timeoutMs);
          job.waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
          signal?.addEventListener("abort", () => job.finishedAt === undefined && reject(signal.reason), { once: true });
        });
      }
      return snapshot(job);
    },
    onJobDone(listener) {
      doneListeners.add(listener);
      return () => void doneListeners.delete(listener);
    },
    onJobsChanged(listener) {
      changedListeners.add(listener);
      return () => void changedListeners.delete(listener);
    },
    // The host is the controller of every job (it ends them with their run),
    // so a controller attached by the plugin changes nothing.
    attachController: () => () => {},
  };

  // Cancel the live jobs `owned` selects, and wait (bounded) for them.
  async function endOwned(owned) {
    const ending = [...jobs.values()].filter((job) => owned(job.owner));
    for (const job of ending) {
      job.reported = true;
      if (job.finishedAt === undefined) {
        try {
          job.hooks.cancel("the run ended");
        } catch (e) {
          settle(job, { status: "failed", detail: `cancel failed: ${e?.message ?? e}` });
        }
      }
    }
    const all = Promise.all(ending.map((job) => job.settled));
    await Promise.race([all, new Promise((r) => setTimeout(r, JOB_END_GRACE_MS))]);
    for (const job of ending) jobs.delete(job.id);
    if (ending.length > 0) changed(undefined);
  }

  return { service: Object.freeze(registry), endOwned };
}

/** `ctx.fs`: files in the plugin's grants, with DSH's `FsError` codes. */
async function createFs(host, mode, entry) {
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
