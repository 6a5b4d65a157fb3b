// The `pi` object an extension's factory receives, and what it records:
// handlers by event, tools, refusals, warnings and unknown event names.

import { createEntries } from "pi:shape/entries";
import { HOOKED, OBSERVED, REFUSED, SILENT } from "pi:shape/events";
import refused from "pi:shape/refused";
import { noHistory, noSession, refusal, unavailable } from "pi:shape/refusals";

/**
 * A fresh extension record and its `pi` object. `host` is the host's
 * services (`exec` when the manifest grants it). Set `state.loaded` once the
 * extension has loaded: later registrations are refused or reported.
 * @param {Partial<YohostHost>} host
 */
export function createExtension(host) {
  const state = {
    handlers: new Map(),
    tools: new Map(),
    refusals: [],
    warnings: [],
    // Event names pi does not have (`{what, name, known, strict, outcome}`).
    unknown: [],
    // What it appends to its session (`pi.appendEntry`).
    entries: createEntries(),
    loaded: false,
  };
  const flags = new Map();
  // pi's settings, as a host with none of its own shows them.
  const settingsView = Object.freeze({});

  const warnApp = (what) => {
    const warning = `${what}, which belongs to an app: the host ignores it`;
    if (!state.warnings.includes(warning)) state.warnings.push(warning);
  };

  function on(event, handler) {
    if (typeof handler !== "function") throw new TypeError(`pi.on("${event}") needs a handler function`);
    if (REFUSED[event]) {
      const why = `listens for \`${event}\`: ${REFUSED[event]}, which the host never lets a plugin do`;
      if (state.loaded) throw refusal(`the pi extension ${why}`);
      state.refusals.push(why);
      return;
    }
    const known = HOOKED.includes(event) || Object.values(OBSERVED).includes(event);
    if (!known && SILENT.includes(event)) {
      state.warnings.push(`listens for \`${event}\`, which the host never emits: the handler never runs`);
    } else if (!known) {
      // Not one of pi's events: the host says which it meant, and refuses
      // a required extension for it.
      state.unknown.push({
        what: `listens for \`${event}\``,
        name: String(event),
        known: [...HOOKED, ...Object.values(OBSERVED), ...SILENT, ...Object.keys(REFUSED)],
        strict: true,
        outcome: "the handler never runs",
      });
    } else if (state.loaded && !state.handlers.has(event)) {
      throw new Error(`pi.on("${event}") after loading is not available in yohost: listen while the extension loads`);
    }
    if (!state.handlers.has(event)) state.handlers.set(event, []);
    state.handlers.get(event).push(handler);
  }

  function registerTool(tool) {
    if (tool === null || typeof tool !== "object" || typeof tool.name !== "string" || tool.name === "") {
      throw new TypeError("pi.registerTool needs a tool with a `name`");
    }
    if (typeof tool.execute !== "function") throw new TypeError(`tool \`${tool.name}\` needs an \`execute\` function`);
    if (state.loaded && state.tools.size === 0) {
      throw new Error("pi.registerTool after loading is not available in yohost: register tools while the extension loads");
    }
    if (tool.renderCall || tool.renderResult) warnApp(`tool \`${tool.name}\` has a custom renderer`);
    state.tools.set(tool.name, tool);
  }

  // A call refused by design: refuses the extension while it loads.
  function refuseCall(method, id) {
    const why = `calls \`pi.${method}(${JSON.stringify(id)})\`, which ${refused.calls[method]}`;
    if (state.loaded) throw refusal(`the pi extension ${why}`);
    state.refusals.push(why);
  }

  const bus = new Map();
  const events = Object.freeze({
    on(name, listener) {
      if (!bus.has(name)) bus.set(name, new Set());
      bus.get(name).add(listener);
      return () => bus.get(name)?.delete(listener);
    },
    emit(name, data) {
      for (const listener of bus.get(name) ?? []) listener(data);
    },
  });

  function exec(command, args = [], options = {}) {
    if (typeof host.exec !== "function") {
      throw new Error(`pi.exec("${command}") is not available: the plugin's plugin.toml does not grant \`capabilities.exec = true\``);
    }
    return host.exec(String(command), args.map(String), { cwd: options.cwd, timeout: options.timeout });
  }

  // A custom message: shown, in pi, in the session. Headless, one meant
  // only to be shown is a log line; one meant for the model (a turn, a
  // steer, a follow-up, the next turn's context) fails by name.
  function sendMessage(message, options) {
    if (options?.triggerTurn || options?.deliverAs !== undefined) {
      const how = options.triggerTurn ? "`triggerTurn`" : `\`deliverAs: "${options.deliverAs}"\``;
      unavailable(`pi.sendMessage with ${how}`, noHistory)();
    }
    const content = message?.content;
    const text = typeof content === "string" ? content : (Array.isArray(content) ? content : []).filter((b) => b?.type === "text").map((b) => b.text).join("\n");
    console.info(`[${message?.customType ?? "message"}] ${text}`);
  }

  const pi = Object.freeze({
    on,
    registerTool,
    registerCommand: (name) => warnApp(`registers the command \`/${name}\``),
    registerShortcut: (key) => warnApp(`registers the shortcut \`${key}\``),
    registerFlag(name, options) {
      warnApp(`registers the flag \`--${name}\``);
      flags.set(name, options?.default);
    },
    getFlag: (name) => flags.get(name),
    registerMessageRenderer: (type) => warnApp(`registers a renderer for \`${type}\` messages`),
    registerEntryRenderer: (type) => warnApp(`registers a renderer for \`${type}\` entries`),
    registerToolRenderer: () => warnApp("registers a tool renderer"),
    registerMarkdownTransformer: () => warnApp("registers a Markdown transformer"),
    registerProvider(name) {
      const id = typeof name === "string" ? name : String(name?.name ?? name?.id ?? "");
      refuseCall("registerProvider", id);
    },
    registerVirtualModel: (model) => refuseCall("registerVirtualModel", String(model?.id ?? "")),
    unregisterVirtualModel: unavailable("pi.unregisterVirtualModel", "the host's provider is not the plugin's to change"),
    registerMcpServer: unavailable("pi.registerMcpServer", "the host runs no MCP servers for plugins"),
    unregisterMcpServer: unavailable("pi.unregisterMcpServer", "the host runs no MCP servers for plugins"),
    getMcpServers: () => [],
    getSettings: () => settingsView,
    unregisterProvider: unavailable("pi.unregisterProvider", "the host's provider is not the plugin's to change"),
    exec,
    events,
    sendMessage,
    sendUserMessage: unavailable("pi.sendUserMessage", noHistory),
    appendEntry: (customType, data) => {
      state.entries.append(customType, data);
    },
    setSessionName: unavailable("pi.setSessionName", noSession),
    getSessionName: () => undefined,
    setLabel: unavailable("pi.setLabel", noSession),
    getCommands: () => [],
    // The host does not show its tool set: a plugin sees only its own
    // tools, which the host offers on every run (active).
    getActiveTools: () => [...state.tools.keys()],
    getAllTools: () => [],
    setActiveTools: unavailable("pi.setActiveTools", "the host decides which tools a run has"),
    setModel: unavailable("pi.setModel", "the host decides the model"),
    getThinkingLevel: unavailable("pi.getThinkingLevel", "the host decides the model's settings"),
    setThinkingLevel: unavailable("pi.setThinkingLevel", "the host decides the model's settings"),
  });

  return { pi, state, warnApp };
}
