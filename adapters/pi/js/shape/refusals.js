// How the adapter says no: refusals at load, and calls the host cannot honour.

/** A refusal: its message is the reason, without a stack location. */
export const refusal = (message) => Object.assign(new Error(message), { stack: "" });

/**
 * Marks a member of pi's surface the host cannot serve: the function's
 * reason, and the error it throws (an `input` handler that fails only on
 * such a call does not reject the input).
 */
export const UNSUPPORTED = Symbol.for("yohost.unsupported");

/**
 * A function, callable and constructible (a class a plugin may extend),
 * that throws "`what` is not supported by yohost: `why`" when called.
 */
export function unavailable(what, why) {
  const stub = function () {
    throw Object.assign(new Error(`${what} is not supported by yohost: ${why}`), { [UNSUPPORTED]: true });
  };
  Object.defineProperty(stub, "name", { value: what.split(".").pop() });
  Object.defineProperty(stub, UNSUPPORTED, { value: why });
  return stub;
}

export const noHistory = "the host never adds to or rewrites a run's history";
export const noSession = "the host has no session to change";
/** Why pi's terminal UI is not served. */
export const noTerminal = "it needs pi's terminal UI, and yohost runs headless";
/** Why pi's model providers are not served. */
export const noProviders = "it needs pi's model providers, and the host's agent talks to the model";
/** Why pi's own agent, session and app are not served. */
export const noApp = "it is part of pi's app (its agent, sessions and settings), which yohost does not run";
