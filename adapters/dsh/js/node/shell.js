// DSH's `shell` and `shellEnv` services on the Node engine (see
// services.js): `bash -c` as a child of the plugin's `node` process, so in
// its kernel sandbox, with each stream's output kept to a bounded tail.

import { spawn } from "node:child_process";
import path from "node:path";

/** The longest a foreground command may run, and its default, in ms. */
const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;
/** What each captured stream keeps in memory (its tail), in bytes. */
const OUTPUT_MAX_BYTES = 1024 * 1024;
/** What a Landlock denial says on a failed command's stderr (EACCES, EPERM). */
const DENIAL_SIGNATURES = ["permission denied", "operation not permitted"];

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

/** `ctx.shellEnv`: the `DSH_*` variables of each shell call. */
export function createShellEnv() {
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
export function createShell(host, mode, sandboxPolicy) {
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
