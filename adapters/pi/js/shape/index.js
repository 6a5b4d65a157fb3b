// The pi flavor's shape: runs a pi extension's factory `(pi) => void` (its
// module's default export), given the adapter's settings (`required`: its
// manifest says so), against a `pi` object of the adapter's and turns
// what it registered into yohost hooks. Returns `{hooks, warnings, unknown,
// unload?, app}` (`app`: its commands and flags);
// throws to refuse the extension, naming what the host cannot honour.
//
// The host's services (the working directory, and `exec` when the manifest
// grants it) are read from `pi:host`.

import { host } from "pi:host";
import { createExtension } from "pi:shape/api";
import { contexts } from "pi:shape/context";
import { HOOKED, OBSERVED } from "pi:shape/events";
import { buildHooks, emit } from "pi:shape/hooks";
import { refusal } from "pi:shape/refusals";

// Whether an extension has something the host honours besides what it
// refuses: a tool, a command, or a handler of an event the host emits.
function standsAlone(state) {
  const honoured = [...HOOKED, ...Object.values(OBSERVED)].filter((event) => event !== "session_start" && event !== "session_shutdown");
  return state.tools.size > 0 || state.commands.size > 0 || honoured.some((event) => (state.handlers.get(event) ?? []).length > 0);
}

export default async function piShape(namespace, settings) {
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
  // What would rewrite history refuses the extension when nothing else of
  // it stands alone (no tool, command or hook the host honours) or when it
  // is required; otherwise it is left out, each part said in a warning.
  const refuse = () => {
    if (state.refusals.length === 0) return;
    const whys = state.refusals.map((r) => r.why).join("; ");
    if (settings?.required || !standsAlone(state)) throw refusal(`the pi extension ${whys}`);
    for (const { leftOut } of state.refusals.splice(0)) state.warnings.push(leftOut);
  };
  for (const factory of factories) await factory(pi);
  // An extension may register its tools and commands at `session_start`:
  // whether the rest stands alone is judged after it, when it has one.
  if (!state.handlers.has("session_start")) refuse();
  await emit(state, "session_start", { type: "session_start", reason: "startup" }, makeCtx(null));
  refuse();
  state.loaded = true;
  const hooks = buildHooks(state, makeCtx);
  // Only an extension that handles `session_shutdown` has an `unload`: the
  // host calls it then, even when it has no hooks and no tools.
  const unload = state.handlers.has("session_shutdown")
    ? () => emit(state, "session_shutdown", { type: "session_shutdown", reason: "quit" }, makeCtx(null))
    : undefined;
  const app = {
    commands: [...state.commands.values()].map(({ name, description }) => ({ name, description })),
    flags: [...state.flags.values()],
  };
  return { hooks, warnings: state.warnings, unknown: state.unknown, unload, app };
}
