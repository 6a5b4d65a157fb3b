// Types of the `yohost` module: what a TypeScript plugin imports.
//
// A plugin file's default export is `definePlugin({...})`. Every hook may be
// sync or async. Replies follow the hook contract exactly; any other shape
// is a failure, and failures fail closed (a failing `before_tool` denies the
// call, a failing `on_input` rejects the input, a failing `after_tool`
// withholds the output).

declare module "yohost" {
  /** The version of the plugin API this SDK speaks. */
  export const API_VERSION: string;

  // ---- Values ----------------------------------------------------------

  /** Any JSON value. */
  export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

  /** A text block. */
  export interface TextBlock {
    type: "text";
    text: string;
  }

  /** An image block: base64 `data`, png, jpeg, gif or webp, at most 10 MiB decoded. */
  export interface ImageBlock {
    type: "image";
    data: string;
    mimeType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
  }

  /** A content block, in yoagent's JSON form. */
  export type ContentBlock = TextBlock | ImageBlock;

  /** The run a hook call belongs to. */
  export interface RunInfo {
    /** Unique per run; every log line of the call carries it. */
    run_id: string;
    /** The host's label for the run. */
    label?: string;
    /** 0 for a top-level run, 1 for a sub-agent's run, and so on. */
    depth: number;
    /** For a delegated run: the calling run's id. */
    parent_run_id?: string;
    /** For a delegated run: the tool call that started it. */
    delegated_by?: string;
  }

  /** A tool's output. */
  export interface ToolOutput {
    content: ContentBlock[];
    details: Json;
    is_error: boolean;
  }

  // ---- Hook arguments ---------------------------------------------------

  /** `before_tool`'s argument. */
  export interface BeforeToolArgs {
    run: RunInfo;
    /** The tool the model wants to run. */
    tool: string;
    call_id: string;
    /** The arguments (as rewritten by plugins earlier in the chain). */
    args: { [key: string]: Json };
    user_request?: string;
    latest_user_text?: string;
  }

  /** `after_tool`'s argument: the call and its output. */
  export interface AfterToolArgs {
    run: RunInfo;
    tool: string;
    call_id: string;
    args: { [key: string]: Json };
    /** The output, as edited by plugins earlier in the chain. */
    output: ToolOutput;
  }

  /** `before_model`'s argument. */
  export interface BeforeModelArgs {
    run: RunInfo;
    model: string;
    /** The names of the tools offered this turn. */
    tools: string[];
    user_request?: string;
  }

  /** `on_input`'s argument. */
  export interface OnInputArgs {
    run: RunInfo;
    /** Every user text block of the prompt, joined by newlines. */
    text: string;
  }

  /** `on_stop`'s argument. */
  export interface OnStopArgs {
    run: RunInfo;
    /** The model's final answer. */
    answer: string;
    /** How many times this run was continued already. */
    continues: number;
  }

  /** `on_event`'s argument: yoagent's `AgentEvent` JSON. */
  export interface OnEventArgs {
    run: RunInfo;
    event: { type: string; [key: string]: Json };
  }

  /** `finish`'s argument. */
  export interface FinishArgs {
    run: RunInfo;
    end: "completed" | "stopped" | "rejected" | "cancelled" | "failed";
    reason?: string;
    error?: string;
  }

  // ---- Hook replies -----------------------------------------------------

  /** Allow (`null`/nothing), deny with a reason the model sees, or rewrite the arguments. */
  export type BeforeToolReply = null | undefined | void | { deny: string } | { args: { [key: string]: Json } };

  /** Keep the output (`null`), or replace the fields given. */
  export type AfterToolReply =
    | null
    | undefined
    | void
    | { content?: ContentBlock[]; details?: Json; is_error?: boolean };

  /** Nothing to add, a note (string or `{note}`), or stop the run. */
  export type BeforeModelReply = null | undefined | void | string | { note: string } | { stop: string };

  /** Accept the input, or reject it (the run does not start). */
  export type OnInputReply = null | undefined | void | { reject: string };

  /** Accept the answer, send the model a message and go on, or fail. */
  export type OnStopReply = null | undefined | void | { continue: string } | { fail: string };

  /**
   * A tool's result: text, or content with optional details. `terminate: true`
   * ends the run once this turn's tools are done, before the next model
   * request, when every result of the turn asks it.
   */
  export type ToolResult = string | { content: ContentBlock[]; details?: Json; is_error?: boolean; terminate?: boolean };

  // ---- The context ------------------------------------------------------

  /** Log lines go to the host's log, tagged with the plugin and this call's run. */
  export interface Logger {
    info(...args: unknown[]): void;
    warn(...args: unknown[]): void;
    error(...args: unknown[]): void;
    debug(...args: unknown[]): void;
  }

  /** What every hook receives beside its argument. */
  export interface Ctx {
    /** The run this call belongs to. */
    readonly run_id: string;
    /** A logger whose lines carry `run_id`, also after `await`. */
    readonly log: Logger;
    /** The environment variables `plugin.toml` grants (`[capabilities] env`), and `YOHOST_DATA_DIR` (`dataDir`); no others. */
    readonly env: Readonly<Record<string, string>>;
    /** The plugin's folder (symlinks resolved): where relative `fs` paths start. */
    readonly pluginDir: string;
    /**
     * The plugin's data folder (an absolute path, outside the plugin
     * directory), granted for reading and writing by default: what it writes
     * there survives runs and reloads, and never reloads it. Empty when the
     * host gave it none (a plugin loaded outside a plugin directory).
     */
    readonly dataDir: string;
    /** Aborts when the host gives up on the call: its run was cancelled, or its deadline passed. */
    readonly signal: CallSignal;
    /**
     * Tells the user how a tool call goes (`"copied 3 of 10"`): the agent
     * shows it while the call runs, and `yohost serve` sends it to the MCP
     * client as progress. At most 256 messages per call, each cut at 1,024
     * characters; dropped outside a tool's call, when no one listens, and
     * while a plugin filters tool output (`after_tool`).
     */
    progress(message: string): void;
    /**
     * Asks the embedding app's user, when the host gives the call the app's
     * user interface; absent when it is headless. Its time counts towards
     * the hook's deadline.
     */
    readonly ui?: (request: UiRequest) => Promise<unknown>;
  }

  /** A question or notice for the app's user: `confirm` answers a boolean, `select`, `input` and `editor` a string or `null`, `send_user_message` whether the app sends it. */
  export type UiRequest =
    | { kind: "confirm"; title: string; message: string }
    | { kind: "select"; title: string; options: string[] }
    | { kind: "input"; title: string; placeholder?: string }
    | { kind: "editor"; title: string; prefill?: string }
    | { kind: "notify"; message: string; level: "info" | "warning" | "error" }
    | { kind: "send_user_message"; text: string };

  /** The host's `AbortSignal` (also the global `AbortSignal`). */
  export interface CallSignal {
    readonly aborted: boolean;
    /** An `Error` named `AbortError` (cancelled) or `TimeoutError` (deadline), once aborted. */
    readonly reason: unknown;
    onabort: ((event: { type: "abort" }) => void) | null;
    addEventListener(type: "abort", listener: (event: { type: "abort" }) => void, options?: { once?: boolean }): void;
    removeEventListener(type: "abort", listener: (event: { type: "abort" }) => void): void;
    throwIfAborted(): void;
  }

  type Awaitable<T> = T | Promise<T>;

  /** A tool the plugin offers. */
  export interface Tool<A = any> {
    /** The name the model calls it by. */
    name: string;
    /** What the model reads about it. */
    description?: string;
    /** JSON Schema of its arguments (an object schema). */
    parameters?: { type: "object"; [key: string]: Json };
    /** A human-readable label. */
    label?: string;
    /** Run it. */
    run?: (args: A, ctx: Ctx) => Awaitable<ToolResult>;
    /** The same as `run` (for authors used to that name). */
    execute?: (args: A, ctx: Ctx) => Awaitable<ToolResult>;
  }

  /** A plugin: every field is optional; an unknown field refuses a required plugin and warns of an advisory one, naming the field meant. */
  export interface PluginDefinition {
    /** The plugin's name (a `plugin.toml` name wins). */
    name?: string;
    /** Tools to offer the model. */
    tools?: Tool[];
    /** Judge a tool call: allow, deny or rewrite. */
    before_tool?: (args: BeforeToolArgs, ctx: Ctx) => Awaitable<BeforeToolReply>;
    /** Filter a tool call's output. */
    after_tool?: (args: AfterToolArgs, ctx: Ctx) => Awaitable<AfterToolReply>;
    /** Add a note before a model request, or stop the run. */
    before_model?: (args: BeforeModelArgs, ctx: Ctx) => Awaitable<BeforeModelReply>;
    /** Judge a run's input. */
    on_input?: (args: OnInputArgs, ctx: Ctx) => Awaitable<OnInputReply>;
    /** Verify the model's final answer. */
    on_stop?: (args: OnStopArgs, ctx: Ctx) => Awaitable<OnStopReply>;
    /** Observe an event (the reply is ignored). */
    on_event?: (args: OnEventArgs, ctx: Ctx) => Awaitable<unknown>;
    /** The run ended (the reply is ignored). */
    finish?: (args: FinishArgs, ctx: Ctx) => Awaitable<unknown>;
  }

  /** Declare a plugin: `export default definePlugin({...})`. */
  export function definePlugin<P extends PluginDefinition>(plugin: P): P;

  /** Declare a tool, typing its arguments. */
  export function defineTool<A = any>(tool: Tool<A>): Tool<A>;

  /** A text block. */
  export function text(text: string): TextBlock;

  /** An image block. */
  export function image(data: string, mimeType: ImageBlock["mimeType"]): ImageBlock;

  /**
   * Text files within the directories `plugin.toml` grants
   * (`capabilities.read`, `capabilities.write`) and the plugin's data
   * folder (`ctx.dataDir`), which it may read and write. Relative paths start at
   * the plugin's folder (`ctx.pluginDir`). Anything outside the grants
   * throws an error whose `code` is "EACCES" and whose message starts with
   * "yohost:"; a symlink that leads out of a grant counts as outside.
   */
  export const fs: {
    /** The text of a file (at most 16 MiB of UTF-8; a FIFO, socket or device is refused). */
    readText(path: string): string;
    /** Replace a file's text, creating the file (needs `capabilities.write`). */
    writeText(path: string, text: string): void;
    /** The names in a directory, sorted. */
    list(path: string): string[];
    /** Whether the path exists inside a grant: false for anything missing or not granted. */
    exists(path: string): boolean;
  };
}

// The globals the host provides to every plugin.
declare var console: {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
  debug(...args: unknown[]): void;
};
declare function setTimeout<A extends unknown[]>(fn: (...args: A) => void, ms?: number, ...args: A): number;
declare function clearTimeout(id: number | undefined): void;

// `fetch`, with `Headers`, `Request` and `Response`: on the embedded engine
// the host's (`fetch.js`), which reaches only the hosts
// `capabilities.network` lists in `plugin.toml` and rejects, naming the key,
// without it; on Node, Node's own. A response body arrives whole (at most
// 16 MiB); a request ends at the deadline of the hook that made it.
type HeadersInit = Headers | [string, string][] | Record<string, string>;
/** A request body: text (UTF-8) or bytes. */
type BodyInit = string | ArrayBuffer | ArrayBufferView;
interface RequestInit {
  method?: string;
  headers?: HeadersInit;
  body?: BodyInit | null;
  signal?: { readonly aborted: boolean; readonly reason: unknown; addEventListener(type: "abort", listener: () => void): void } | null;
}
interface Headers {
  append(name: string, value: string): void;
  set(name: string, value: string): void;
  get(name: string): string | null;
  has(name: string): boolean;
  delete(name: string): void;
  forEach(fn: (value: string, name: string, headers: Headers) => void): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}
declare var Headers: { prototype: Headers; new (init?: HeadersInit): Headers };
interface Request {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  clone(): Request;
}
declare var Request: { prototype: Request; new (input: string | { href: string } | Request, init?: RequestInit): Request };
interface Response {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: Headers;
  readonly bodyUsed: boolean;
  text(): Promise<string>;
  json(): Promise<any>;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  clone(): Response;
}
declare var Response: {
  prototype: Response;
  new (body?: BodyInit | null, init?: { status?: number; statusText?: string; headers?: HeadersInit }): Response;
};
declare function fetch(input: string | { href: string } | Request, init?: RequestInit): Promise<Response>;
