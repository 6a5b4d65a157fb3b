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
    // `/name` commands (`{name, description, handler}`) and flags
    // (`{name, description, type, default}`), offered to an app's user.
    commands: new Map(),
    flags: new Map(),
    // Its tools it made inactive (`pi.setActiveTools`): not offered.
    inactive: new Set(),
    // The per-call `ctx` of the engine's latest call, for what pi calls
    // outside a `ctx` (`pi.sendUserMessage`).
    latestCall: null,
    // What it did that the host never lets a plugin do (each `{why,
    // leftOut}`, the refusal's reason and the warning when it is left
    // out): the extension is refused for it, or, when the rest of it stands
    // alone and it is not required, loads without it.
    refusals: [],
    warnings: [],
    // Event names pi does not have (`{what, name, known, strict, outcome}`).
    unknown: [],
    // What it appends to its session (`pi.appendEntry`).
    entries: createEntries(),
    loaded: false,
  };
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
      state.refusals.push({ why, leftOut: `left out its \`${event}\` handler: ${REFUSED[event]}, which the host never lets a plugin do` });
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
    state.refusals.push({ why, leftOut: `left out its call \`pi.${method}(${JSON.stringify(id)})\`, which ${refused.calls[method]}` });
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

  // pi's `sendUserMessage`: the app's user interface is asked to send it
  // as the user's next message (the host never adds to a run's history
  // itself). Not sent (headless, or the app declines), it is a warning in
  // the plugin's log; the caller goes on, as in pi, where it is queued.
  function sendUserMessage(content) {
    const text = typeof content === "string" ? content : (Array.isArray(content) ? content : []).filter((b) => b?.type === "text").map((b) => b.text).join("\n");
    const call = state.latestCall;
    const log = call?.log ?? console;
    const notSent = (why) => log.warn(`pi.sendUserMessage: not sent, ${why}: ${JSON.stringify(text.slice(0, 200))}`);
    if (typeof call?.ui !== "function") return notSent("the host has no user interface (headless)");
    call.ui({ kind: "send_user_message", text }).then(
      (sent) => sent || notSent("the app declined it"),
      (e) => notSent(String(e?.message ?? e)),
    );
  }

  // pi's `setActiveTools(names)` over the extension's own tools: those it
  // leaves out are not offered from the next run on (as pi gates them). A
  // name that is not one of its tools fails by name: the host decides the
  // run's other tools.
  function setActiveTools(names) {
    const wanted = new Set((Array.isArray(names) ? names : []).map(String));
    const others = [...wanted].filter((name) => !state.tools.has(name));
    if (others.length > 0) {
      unavailable(`pi.setActiveTools(${JSON.stringify(others)})`, "the host decides which tools a run has besides the extension's own")();
    }
    state.inactive = new Set([...state.tools.keys()].filter((name) => !wanted.has(name)));
  }

  function registerCommand(name, options) {
    if (typeof name !== "string" || name === "") throw new TypeError("pi.registerCommand needs a name");
    if (typeof options?.handler !== "function") throw new TypeError(`command \`/${name}\` needs a \`handler\` function`);
    if (state.loaded) throw new Error("pi.registerCommand after loading is not available in yohost: register commands while the extension loads");
    state.commands.set(name, { name, description: String(options.description ?? ""), handler: options.handler });
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
    registerCommand,
    registerShortcut: (key) => warnApp(`registers the shortcut \`${key}\``),
    // A flag is offered to the app; the plugin reads its default (the host
    // takes no values for it).
    registerFlag(name, options) {
      const type = options?.type === "string" ? "string" : "boolean";
      state.flags.set(name, { name, description: String(options?.description ?? ""), type, default: options?.default });
    },
    getFlag: (name) => state.flags.get(name)?.default,
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
    sendUserMessage,
    appendEntry: (customType, data) => {
      state.entries.append(customType, data);
    },
    setSessionName: unavailable("pi.setSessionName", noSession),
    getSessionName: () => undefined,
    setLabel: unavailable("pi.setLabel", noSession),
    getCommands: () => [...state.commands.values()].map(({ name, description }) => ({ name, description, source: "extension" })),
    // The host does not show its tool set: a plugin sees only its own
    // tools, those it has not made inactive.
    getActiveTools: () => [...state.tools.keys()].filter((name) => !state.inactive.has(name)),
    getAllTools: () => [],
    setActiveTools,
    setModel: unavailable("pi.setModel", "the host decides the model"),
    getThinkingLevel: unavailable("pi.getThinkingLevel", "the host decides the model's settings"),
    setThinkingLevel: unavailable("pi.setThinkingLevel", "the host decides the model's settings"),
  });

  return { pi, state, warnApp };
}
