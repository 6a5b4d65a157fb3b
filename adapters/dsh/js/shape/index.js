// The DSH flavor's shape: a DSH tool plugin module exports `name`, `inject`
// (the services it needs), `Config` (a schemastery schema) and
// `apply(ctx, config)`. The shape checks `inject`, resolves the config
// (defaults from `Config`, overridden by plugin.toml's `[config]`), runs
// `apply` against the adapter's `ctx`, and maps what it registered to hooks:
// tools to `tools`/`call_tool`, prompt sections to a `before_model` note,
// `tools/pre-execute` and guards to `before_tool`, `tools/post-execute` to
// `after_tool`; effect disposers run on unload.

import { PROVIDED, createContext, injected } from "dsh:shape/context";
import { HOST_EVENTS } from "dsh:shape/events";
import { provide } from "dsh:services";

/** A refusal: its message is the reason, without a stack location. */
const refusal = (message) => Object.assign(new Error(message), { stack: "" });
const listed = (names) => names.map((n) => `\`${n}\``).join(", ");

function resolveConfig(Config, given) {
  if (Config === undefined) return given ?? {};
  if (typeof Config !== "function") throw refusal("the DSH plugin's `Config` export is not a schemastery schema");
  try {
    return Config(given ?? {});
  } catch (e) {
    throw refusal(`the DSH plugin's \`[config]\` (plugin.toml) does not fit its \`Config\` schema: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export default async function dshShape(namespace, settings) {
  const plugin = typeof namespace.apply === "function" ? namespace : namespace.default;
  if (plugin === null || typeof plugin !== "object" && typeof plugin !== "function" || typeof plugin.apply !== "function") {
    throw refusal("a DSH plugin module must export `apply(ctx, config)` (and `name`, `inject`, `Config`)");
  }
  const { required } = injected(plugin.inject);
  const engine = await provide(settings, required);
  const provided = [...PROVIDED, ...Object.keys(engine.services)];
  const missing = required.filter((name) => !provided.includes(name));
  const elsewhere = missing.filter((name) => (settings?.onNode ?? []).includes(name));
  if (elsewhere.length > 0) {
    throw refusal(
      `the DSH plugin needs ${listed(elsewhere)}, which the adapter provides only on Node; its \`inject\` is not a list of names the host reads before loading, so \`engine = "node"\` in its plugin.toml is what runs it there`,
    );
  }
  if (missing.length > 0) {
    throw refusal(`the DSH plugin needs ${listed(missing)}, which the host does not provide (it provides ${listed(provided)})`);
  }
  const config = resolveConfig(plugin.Config, settings?.config);

  const warnings = [];
  let loaded = false;
  const warn = (message) => (loaded ? console.warn(message) : warnings.includes(message) || warnings.push(message));
  const { ctx, bus, prompt, registry, dispose } = createContext(warn, engine.services);
  try {
    await plugin.apply(ctx, config);
  } catch (e) {
    await engine.dispose();
    throw e;
  }
  loaded = true;
  // An event the host never emits may be the plugin's own; one a letter or
  // two from the host's is reported as unknown, with the one it meant.
  const unknown = bus
    .names()
    .filter((name) => !HOST_EVENTS.includes(name))
    .map((name) => ({
      what: `listens for \`${name}\``,
      name,
      known: HOST_EVENTS,
      strict: false,
      outcome: "the listener never runs",
    }));

  // Per run: the agent session the tools see (`exec.agent.session`).
  const sessions = new Map();
  const agentOf = (run) => {
    if (!sessions.has(run.run_id)) {
      const events = [];
      const cwd = settings?.host?.workspace;
      const session = Object.freeze({
        id: run.run_id,
        header: Object.freeze({ id: run.run_id, ...(cwd !== undefined ? { cwd } : {}) }),
        events,
        append(type, data) {
          events.push(Object.freeze({ type: String(type), data, time: Date.now() }));
        },
      });
      sessions.set(run.run_id, Object.freeze({ id: run.run_id, session }));
    }
    return sessions.get(run.run_id);
  };

  const hooks = Object.create(null);
  if (registry.tools.size > 0) {
    hooks.tools = () =>
      [...registry.tools.values()].map((tool) => ({
        name: tool.name,
        description: String(tool.description ?? ""),
        parameters: tool.parameters ?? { type: "object", properties: {} },
      }));
    hooks.call_tool = (args, call) => registry.callTool(args, call, agentOf(args.run));
  }
  if (bus.has("tools/pre-execute") || registry.guards.length > 0) {
    hooks.before_tool = (args, call) => registry.beforeTool(args, call, agentOf(args.run));
  }
  if (bus.has("tools/post-execute")) {
    hooks.after_tool = (args, call) => registry.afterTool(args, call, agentOf(args.run));
  }
  if (prompt.has()) {
    hooks.before_model = () => {
      const note = prompt.note();
      return note === null ? null : { note };
    };
  }
  hooks.finish = async (args) => {
    sessions.delete(args.run.run_id);
    await engine.finishRun(args.run.run_id);
    return null;
  };
  const name = typeof plugin.name === "string" && plugin.name !== "" ? plugin.name : undefined;
  const unload = async () => {
    try {
      await dispose();
    } finally {
      await engine.dispose();
    }
  };
  return { name, hooks, warnings, unknown, unload };
}
