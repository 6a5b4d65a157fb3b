// The plugin's own event bus, with cordis's dispatch modes: `emit`
// (listeners run, results ignored), `serial` and `bail` (the first bailed
// value wins) and `waterfall` (each listener gets a `next` that runs the
// rest of the chain, ending at the host's default).

/** Events whose listeners the host calls. Others are reported at load. */
export const HOST_EVENTS = ["tools/pre-execute", "tools/post-execute", "dispose"];

const bailed = (value) => value !== null && value !== false && value !== undefined;

/** A fresh bus: `on(name, listener)` returns a disposer. */
export function createBus() {
  const listeners = new Map();
  const of = (name) => [...(listeners.get(name) ?? [])];
  return {
    on(name, listener, options) {
      if (typeof listener !== "function") throw new TypeError(`ctx.on("${name}") needs a listener function`);
      if (!listeners.has(name)) listeners.set(name, []);
      const list = listeners.get(name);
      if (options?.prepend) list.unshift(listener);
      else list.push(listener);
      return () => {
        const at = list.indexOf(listener);
        if (at >= 0) list.splice(at, 1);
      };
    },
    has: (name) => of(name).length > 0,
    names: () => [...listeners.keys()].filter((name) => of(name).length > 0),
    emit(name, ...args) {
      for (const listener of of(name)) listener(...args);
    },
    async parallel(name, ...args) {
      await Promise.all(of(name).map(async (listener) => listener(...args)));
    },
    async serial(name, ...args) {
      for (const listener of of(name)) {
        const result = await listener(...args);
        if (bailed(result)) return result;
      }
    },
    bail(name, ...args) {
      for (const listener of of(name)) {
        const result = listener(...args);
        if (bailed(result)) return result;
      }
    },
    // `args` ends with the innermost `next`, the host's default.
    waterfall(name, ...args) {
      const chain = of(name);
      const inner = args.pop();
      const next = () => (chain.shift() ?? inner)(...args);
      args.push(next);
      return next();
    },
  };
}
