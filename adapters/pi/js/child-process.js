// `node:child_process` (and `child_process`) for pi extensions: `spawn`,
// `exec` and `execFile`, only when the manifest grants
// `capabilities.exec = true`. A process runs off the plugin's thread
// through the host's exec service, bounded by the deadline of the hook
// that started it; its output arrives when it ends (one `data` event per
// stream, then `exit` and `close`). The sync forms (`execSync`,
// `execFileSync`, `spawnSync`) would block the plugin's thread, so they are
// not here: an extension that imports them runs on Node, which has them.

import { host } from "pi:host";
import { EventEmitter as Emitter } from "node:events";

const SHELL = "/bin/sh";

function run(command, args, options) {
  const exec = host()?.exec;
  if (typeof exec !== "function") {
    throw new Error(`node:child_process cannot run "${command}": the plugin's plugin.toml does not grant \`capabilities.exec = true\``);
  }
  return exec(String(command), (args ?? []).map(String), { cwd: options?.cwd, timeout: options?.timeout });
}

class Stream extends Emitter {
  setEncoding() {
    return this;
  }
  write() {
    return true;
  }
  end() {}
}

/** A started process: `stdout`/`stderr` emit their output when it ends. */
class ChildProcess extends Emitter {
  constructor(promise) {
    super();
    this.stdout = new Stream();
    this.stderr = new Stream();
    this.stdin = new Stream();
    this.pid = undefined;
    this.exitCode = null;
    this.killed = false;
    promise.then(
      (result) => {
        if (result.stdout) this.stdout.emit("data", Buffer.from(result.stdout));
        if (result.stderr) this.stderr.emit("data", Buffer.from(result.stderr));
        this.stdout.emit("end");
        this.stderr.emit("end");
        this.exitCode = result.code;
        this.killed = result.killed;
        const signal = result.killed ? "SIGKILL" : null;
        this.emit("exit", result.killed ? null : result.code, signal);
        this.emit("close", result.killed ? null : result.code, signal);
      },
      (error) => this.emit("error", error),
    );
  }
  kill() {
    return false;
  }
}

function splitArgs(args, options, callback) {
  if (typeof args === "function") return [[], {}, args];
  if (!Array.isArray(args)) return [[], args ?? {}, typeof options === "function" ? options : callback];
  if (typeof options === "function") return [args, {}, options];
  return [args, options ?? {}, callback];
}

// The outcome as node's callback sees it: an error for a non-zero exit.
function settle(promise, command, callback) {
  promise.then(
    (result) => {
      let error = null;
      if (result.code !== 0 || result.killed) {
        error = Object.assign(new Error(`Command failed: ${command}\n${result.stderr}`), {
          code: result.code,
          killed: result.killed,
          signal: result.killed ? "SIGKILL" : null,
          cmd: command,
        });
      }
      callback?.(error, result.stdout, result.stderr);
    },
    (error) => callback?.(error, "", ""),
  );
}

/** Run `file` with `args` (no shell); `callback(error, stdout, stderr)`. */
export function execFile(file, args, options, callback) {
  const [list, opts, done] = splitArgs(args, options, callback);
  const promise = run(file, list, opts);
  settle(promise, [file, ...list].join(" "), done);
  return new ChildProcess(promise);
}

/** Run `command` in a shell; `callback(error, stdout, stderr)`. */
export function exec(command, options, callback) {
  const [opts, done] = typeof options === "function" ? [{}, options] : [options ?? {}, callback];
  const promise = run(SHELL, ["-c", String(command)], opts);
  settle(promise, String(command), done);
  return new ChildProcess(promise);
}

// What `util.promisify(exec)` resolves to, as in node: `{stdout, stderr}`.
const custom = Symbol.for("nodejs.util.promisify.custom");
const promised = (fn) => (...args) =>
  new Promise((resolve, reject) =>
    fn(...args, (error, stdout, stderr) => (error ? reject(Object.assign(error, { stdout, stderr })) : resolve({ stdout, stderr }))),
  );
exec[custom] = promised(exec);
execFile[custom] = promised(execFile);

/** Start `command` with `args` (in a shell when `options.shell`). */
export function spawn(command, args, options) {
  const [list, opts] = Array.isArray(args) ? [args, options ?? {}] : [[], args ?? {}];
  const promise = opts.shell ? run(SHELL, ["-c", [command, ...list].join(" ")], opts) : run(command, list, opts);
  return new ChildProcess(promise);
}

export const fork = () => {
  throw new Error("node:child_process.fork is not available in yohost: there is no Node to fork");
};

export default { exec, execFile, spawn, fork };
