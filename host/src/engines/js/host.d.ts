// The Rust↔JavaScript boundary of yohost's JavaScript engines, declared
// once: what the Rust side of each engine gives the JavaScript it runs, and
// what it expects back. `tsc --checkJs` checks every use in the embedded
// JavaScript against it (the `jsconfig.json` next to each folder of it).
//
// Two engines implement it:
// - the embedded engine (QuickJS, `runtime/engine.rs` and `runtime/host.rs`):
//   the driver's `DriverHost`, and the services object `YohostHost`;
// - Node (`../node/bootstrap.mjs`): the same services object, made by the
//   bootstrap from the `init` message (`NodeInit`), and the frames of
//   `../node/protocol.rs`.
//
// A global script (no imports, no exports): its names are visible to every
// checked file without an import, as the values are at run time.

/**
 * A file operation of the host's file service: the serde names of Rust's
 * `FileOp` (`services/files.rs`, whose test reads this line).
 */
type FileOp =
  | "read"
  | "read_bytes"
  | "write"
  | "append"
  | "write_bytes"
  | "append_bytes"
  | "mkdir"
  | "rm"
  | "rename"
  | "exists"
  | "stat"
  | "readdir"
  | "entries"
  | "access"
  | "watch";

/**
 * The file operations Node's bootstrap serves: every `FileOp` but those
 * `FileOp::node_lacks` names, with its reason (`services/files.rs`, whose
 * test reads this line).
 */
type NodeFileOp = Exclude<FileOp, "watch">;

/** A file operation's reply, before `JSON.parse`. */
type FileReply =
  | { ok: unknown }
  | { error: string; code: string; granted?: false };

/** A process's options, as Node's `execFile` takes them. */
interface ExecOptions {
  /** Where it starts, relative to the host's working directory. */
  cwd?: string;
  /** Its own limit in ms (0, absent or Infinity: the call's deadline only). */
  timeout?: number;
  /** Changes to the environment it inherits: a value sets, `null` removes. */
  env?: Record<string, string | null>;
}

/** How a process ended. */
interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
  /** It was killed at a deadline or a cancellation. */
  killed: boolean;
}

/** A response of the host's HTTP client (`fetch.rs`). */
interface FetchReply {
  status: number;
  statusText: string;
  url: string;
  /** The response is of another URL than the request's. */
  redirected: boolean;
  headers: [string, string][];
  /** base64. */
  body: string;
}

/** A file-watch event (`watch.rs`), delivered in batches. */
interface WatchEvent {
  /** The watch it belongs to. */
  watch: number;
  change: "rename" | "change";
  /** Relative to the watched folder (a watched file's own name). */
  filename: string;
}

/**
 * The host's services, at `globalThis[Symbol.for("yohost.host")]` when the
 * flavor offers them. Read it as
 * `/** @type {YohostHost | undefined} *\/ (globalThis[Symbol.for("yohost.host")])`.
 */
interface YohostHost {
  /** The host's working directory. */
  readonly cwd: string;
  /** Run file operation `op`; the reply is a `FileReply` as JSON text. */
  fs(op: FileOp, path: string, data: string | null): string;
  /** When `exec` is granted: a process, without a shell. */
  exec?(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
  /** Embedded engine: stop watch `id`. */
  unwatch?(id: number): void;
  /**
   * Set by the plugin side: the embedded engine hands it each batch of
   * watch events (`WatchEvent[]` as JSON text).
   */
  watched?: (batch: string) => void;
  /** Embedded engine: `null` when `args` match `schema`, else why not (JSON texts). */
  validate?(tool: string, schema: string, args: string): string | null;
  /** Embedded engine, when `capabilities.network` grants hosts: one request (a JSON text). */
  fetch?(request: string): Promise<FetchReply>;
  /** Embedded engine: `count` random bytes from the operating system. */
  randomBytes?(count: number): number[];
  /** Embedded engine: the sha2 digest `algorithm` of `data`. */
  hash?(algorithm: string, data: ArrayLike<number>): number[];
}

/**
 * The embedded engine's host function behind `exec` (`runtime/host.rs`,
 * made the plugin's `exec` by `exec.js`): the arguments and the environment
 * as JSON texts, absent options as `null`. It replies `{"ok": id}` or
 * `{"error": message}` as JSON text, as the driver's `later` takes it.
 */
type ExecStart = (command: string, argsJson: string, cwd: string | null, timeout: number | null, envJson: string | null) => string;

/** A log line's level. */
type LogLevel = "info" | "warn" | "error" | "debug";

/**
 * The embedded engine's callbacks (`runtime/engine.rs`), the argument of
 * the driver's function (`driver.js`). Call ids are numbers; `null` ids
 * are lines outside a call.
 */
interface DriverHost {
  /** A hook call's reply, as JSON text. */
  done(callId: number, replyJson: string): void;
  /** A hook call threw or rejected. */
  fail(callId: number, message: string): void;
  /** A hook call's reply cannot be turned into JSON. */
  badReply(callId: number, message: string): void;
  /** How a hook call goes, for its progress listener. */
  progress(callId: number, message: string): void;
  /** A log line (`callId` and `runId` null: outside a call). */
  log(callId: number | null, runId: string | null, level: LogLevel, message: string): void;
  /** Fire the driver's `fire(timerId)` in `ms`. */
  timer(timerId: number, ms: number): void;
  /**
   * Ask the app's user for call `callId` (`UiRequest` as JSON): starts the
   * work and replies `{"ok": id}` or `{"error": message}` (see `later`).
   */
  ask(callId: number, requestJson: string): string;
}

/** A plugin's logger: `ctx.log`. */
interface PluginLog {
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
  debug(...args: unknown[]): void;
}

/** What every hook receives besides its argument. */
interface HookContext {
  readonly run_id: string;
  readonly log: PluginLog;
  readonly env: Readonly<Record<string, string>>;
  readonly pluginDir: string;
  /** The plugin's data folder (`YOHOST_DATA_DIR` in `env`); empty when it has none. */
  readonly dataDir: string;
  readonly signal: AbortSignal;
  /**
   * Tell the call's listener how a tool call goes (`crate::call::progress`);
   * dropped outside a tool call, once the call has ended, and when no one
   * listens.
   */
  progress(message: string): void;
  /**
   * Ask the app's user, when the host gives the call a user interface
   * (`crate::call::ui`); absent when it is headless.
   */
  readonly ui?: (request: UiRequest) => Promise<unknown>;
}

/** A request to the app's user (`crate::call::ui`'s `Request`). */
type UiRequest =
  | { kind: "confirm"; title: string; message: string }
  | { kind: "select"; title: string; options: string[] }
  | { kind: "input"; title: string; placeholder?: string }
  | { kind: "editor"; title: string; prefill?: string }
  | { kind: "notify"; message: string; level: "info" | "warning" | "error" }
  | { kind: "send_user_message"; text: string };

/** A hook as a flavor's shape makes it. */
type Hook = (args: any, ctx: HookContext) => unknown;

/** An event or hook name a flavor does not know (`glue::UnknownName`). */
interface UnknownName {
  what: string;
  name: string;
  known: string[];
  strict: boolean;
  outcome: string;
}

/** What a flavor's shape gives for a plugin. */
interface Shaped {
  name?: unknown;
  hooks: Record<string, Hook>;
  warnings?: unknown;
  unknown?: unknown;
  unload?: unknown;
  /** Its commands and flags (`AppSurface`). */
  app?: unknown;
}

/** A flavor's shape: the plugin's module namespace and settings to hooks. */
type Shape = (namespace: any, settings: any) => Shaped | Promise<Shaped>;

/** What a loaded plugin reports (`glue::Shaped`, Node's `ready`). */
interface Ready {
  name: string | null;
  hooks: string[];
  warnings: string[];
  unknown: UnknownName[];
  unloads: boolean;
  app: AppSurface;
}

/** What a plugin offers an app's user (`loaded::AppSurface`). */
interface AppSurface {
  commands: { name: string; description: string }[];
  flags: { name: string; description: string; type: string; default: unknown }[];
}

/** The driver's functions, which the embedded engine calls (`driver.js`). */
interface Driver {
  install(shape: Shape, namespace: object, settingsJson: string, envJson: string, dir: string): Promise<string>;
  unload(): Promise<void>;
  call(callId: number, hook: string, argsJson: string, runId: string, asks: boolean): void;
  abort(callId: number, name: "AbortError" | "TimeoutError", message: string): void;
  fire(timerId: number): void;
  later<A extends unknown[]>(start: (...args: A) => string): (...args: A) => Promise<any>;
  resume(id: number, json: string): void;
  describe(error: unknown): string;
}

/** The host's services on Node, as `init` offers them (`protocol::ServiceSettings`). */
interface NodeServices {
  module: string;
  relative_to: string;
  cwd: string;
  exec: boolean;
  /** The file operations the bootstrap does not serve, with why (`FileOp::lacking_on_node`). */
  lacks: Partial<Record<FileOp, string>>;
}

/** A flavor's modules on Node (`protocol::FlavorSources`). */
interface NodeFlavor {
  builtins: Record<string, string>;
  owned: string[];
  internals: Record<string, string>;
  shape: string;
  prelude: string | null;
}

/** The host's first message to Node's bootstrap (`protocol::ToNode::Init`). */
interface NodeInit {
  t: "init";
  entry: string;
  also: string[];
  plugin_dir: string;
  own: string[];
  settings: unknown;
  env: Record<string, string>;
  flavor: NodeFlavor;
  services: NodeServices | null;
  dry_run: boolean;
  log_limit: number;
  reply_limit: number;
}

/** The host's other messages to Node's bootstrap (`protocol::ToNode`). */
type ToNode =
  | NodeInit
  | { t: "call"; id: number; hook: string; args: unknown; run_id: string; asks: boolean }
  | { t: "abort"; id: number; name: "AbortError" | "TimeoutError"; message: string }
  | { t: "answer"; id: number; reply: { ok: unknown } | { error: string } }
  | { t: "source"; id: number; code?: string; error?: string };

/** The bootstrap's messages to the host (`protocol::FromNode`); `done` is written as text. */
type FromNode =
  | { t: "source"; id: number; path: string }
  | { t: "ask"; id: number; call: number; request: string }
  | ({ t: "ready" } & Ready)
  | { t: "refused"; message: string }
  | { t: "unloaded" }
  | { t: "fail"; id: number; message: string }
  | { t: "bad_reply"; id: number; message: string }
  | { t: "progress"; id: number; message: string }
  | { t: "too_large"; id: number; bytes: number }
  | { t: "log"; id: number | null; run_id: string | null; level: LogLevel; message: string };
