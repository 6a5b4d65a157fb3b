// How the adapter says no: refusals at load, and calls the host cannot honour.

/** A refusal: its message is the reason, without a stack location. */
export const refusal = (message) => Object.assign(new Error(message), { stack: "" });

/** A function that throws "`what` is not available in yohost: `why`". */
export const unavailable = (what, why) => () => {
  throw new Error(`${what} is not available in yohost: ${why}`);
};

export const noHistory = "the host never adds to or rewrites a run's history";
export const noSession = "the host has no session to change";
