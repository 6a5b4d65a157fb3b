// The `ctx` a DSH plugin's `apply(ctx, config)` receives: the services the
// adapter provides, the event bus, effects, and optional injection.

import { createBus } from "dsh:shape/events";
import { createPrompt } from "dsh:shape/prompt";
import { createTools } from "dsh:shape/tools";

/** The services the adapter provides on every engine, by the names `inject` uses. */
export const PROVIDED = ["tools", "systemPrompt"];

/** The names a cordis `inject` declaration requires and merely wants. */
export function injected(inject) {
  const required = [];
  const optional = [];
  if (Array.isArray(inject)) required.push(...inject.map(String));
  else if (inject !== null && typeof inject === "object") {
    if (Array.isArray(inject.required) || Array.isArray(inject.optional)) {
      required.push(...(inject.required ?? []).map(String));
      optional.push(...(inject.optional ?? []).map(String));
    } else {
      for (const [name, spec] of Object.entries(inject)) (spec?.required === false ? optional : required).push(name);
    }
  }
  return { required, optional };
}

/** A fresh plugin context. `warn(message)` reports what the host skips;
 * `provided` holds the engine's services besides `tools` and `systemPrompt`. */
export function createContext(warn, provided) {
  const bus = createBus();
  const prompt = createPrompt(warn);
  const registry = createTools(bus);
  const disposers = [];
  const services = { ...provided, tools: registry.service, systemPrompt: prompt.service };

  const logger = Object.assign((_name) => logger, {
    info: (...args) => console.info(...args),
    warn: (...args) => console.warn(...args),
    error: (...args) => console.error(...args),
    debug: (...args) => console.debug(...args),
    success: (...args) => console.info(...args),
  });

  const ctx = Object.freeze({
    ...services,
    logger,
    get: (name) => (Object.hasOwn(services, name) ? services[name] : undefined),
    on: (name, listener, options) => bus.on(name, listener, options),
    emit: (...args) => bus.emit(...args),
    parallel: (...args) => bus.parallel(...args),
    serial: (...args) => bus.serial(...args),
    bail: (...args) => bus.bail(...args),
    waterfall: (...args) => bus.waterfall(...args),
    effect(execute) {
      if (typeof execute !== "function") throw new TypeError("ctx.effect needs a function");
      const outcome = execute();
      const dispose = typeof outcome === "function" ? outcome : () => {};
      disposers.push(dispose);
      return dispose;
    },
    inject(names, callback) {
      const { required } = injected(names);
      const missing = required.filter((name) => !Object.hasOwn(services, name));
      if (missing.length > 0) {
        warn(`skipped a \`ctx.inject\` callback: the host does not provide ${missing.map((n) => `\`${n}\``).join(", ")}`);
        return () => {};
      }
      const outcome = callback(ctx);
      if (typeof outcome === "function") disposers.push(outcome);
      return () => {};
    },
    plugin() {
      throw new Error("ctx.plugin is not available in yohost: a DSH plugin is loaded on its own");
    },
  });

  // Run every disposer and `dispose` listener, newest first.
  async function dispose() {
    for (const run of disposers.splice(0).reverse()) await run();
    await bus.parallel("dispose");
  }

  return { ctx, bus, prompt, registry, dispose };
}
