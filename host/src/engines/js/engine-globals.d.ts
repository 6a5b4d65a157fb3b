// The globals the embedded engine's driver (driver.js) installs for every
// plugin, besides the language's own: `console`, `setTimeout`,
// `clearTimeout`, `AbortController` and `AbortSignal`. On Node these are
// Node's own, so only the embedded engine's JavaScript is checked against
// this file. A global script, as host.d.ts is.

interface Console {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
  debug(...args: unknown[]): void;
}
declare var console: Console;

declare function setTimeout<A extends unknown[]>(fn: (...args: A) => void, ms?: number, ...args: A): number;
declare function clearTimeout(id: number | undefined): void;

/** The event an abort listener gets. */
interface AbortEvent {
  readonly type: "abort";
  readonly target: AbortSignal;
}

interface AbortSignal {
  readonly aborted: boolean;
  readonly reason: any;
  onabort: ((this: AbortSignal, event: AbortEvent) => void) | null;
  addEventListener(type: string, listener: (event: AbortEvent) => void, options?: boolean | { once?: boolean }): void;
  removeEventListener(type: string, listener: (event: AbortEvent) => void): void;
  throwIfAborted(): void;
}
declare var AbortSignal: {
  prototype: AbortSignal;
  new (): AbortSignal;
  abort(reason?: unknown): AbortSignal;
  any(signals: Iterable<AbortSignal>): AbortSignal;
};

interface AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}
declare var AbortController: {
  prototype: AbortController;
  new (): AbortController;
};
