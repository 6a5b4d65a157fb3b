// The pi flavor's shape: runs a pi extension's factory `(pi) => void` (its
// module's default export) against a `pi` object of the adapter's and turns
// what it registered into yohost hooks. Returns `{hooks, warnings, unknown,
// unload?}`;
// throws to refuse the extension, naming what the host cannot honour.
//
// The host's services (the working directory, and `exec` when the manifest
// grants it) are read from `pi:host`.

import { host } from "pi:host";
import { createExtension } from "pi:shape/api";
import { contexts } from "pi:shape/context";
import { buildHooks, emit } from "pi:shape/hooks";
import { refusal } from "pi:shape/refusals";

export default async function piShape(namespace) {
  // A pi package's extensions (all of them, as pi loads them) arrive as
  // one module holding their namespaces; each factory runs, in order.
  const namespaces = namespace.default?.[Symbol.for("yohost.entries")] ?? [namespace];
  const factories = namespaces.map((ns) => ns.default);
  const services = host() ?? {};
  if (factories.some((factory) => typeof factory !== "function")) {
    throw refusal("a pi extension's default export must be a function `(pi) => void`");
  }
  const { pi, state, warnApp } = createExtension(services);
  const makeCtx = contexts(services, state, warnApp);
  const refuse = () => {
    if (state.refusals.length > 0) throw refusal(`the pi extension ${state.refusals.join("; ")}`);
  };
  for (const factory of factories) await factory(pi);
  refuse();
  await emit(state, "session_start", { type: "session_start", reason: "startup" }, makeCtx(null));
  refuse();
  state.loaded = true;
  const hooks = buildHooks(state, makeCtx);
  // Only an extension that handles `session_shutdown` has an `unload`: the
  // host calls it then, even when it has no hooks and no tools.
  const unload = state.handlers.has("session_shutdown")
    ? () => emit(state, "session_shutdown", { type: "session_shutdown", reason: "quit" }, makeCtx(null))
    : undefined;
  return { hooks, warnings: state.warnings, unknown: state.unknown, unload };
}
