// The pi flavor's shape: runs a pi extension's factory `(pi) => void`
// against the `pi` object below and turns what it registered into yohost
// hooks. Returns (a promise of) `{hooks, warnings, unload}`; throws to
// refuse the extension, naming what the host cannot honour.
//
// The host's services (the working directory, and `exec` when the manifest
// grants it) are read from `globalThis[Symbol.for("yohost.host")]`.
(async function piShape(factory) {
  "use strict";
  const host = globalThis[Symbol.for("yohost.host")] ?? {};

  // Events whose handlers would rewrite history or the request, or decide
  // something the host never does: the extension is refused.
  const REFUSED = {
    context: "it rewrites the messages sent to the model",
    message_end: "it can replace a finished message",
    before_provider_request: "it can replace the provider request",
    before_provider_headers: "it can change the provider request's headers",
    session_before_compact: "it decides how the session is compacted",
    session_before_switch: "it decides whether the session may be switched",
    session_before_fork: "it decides whether the session may be forked",
    session_before_tree: "it decides session tree navigation",
    user_bash: "it runs the user's `!` commands",
  };
  // Events the host never emits: reported, not refused.
  const SILENT = [
    "resources_discover",
    "model_select",
    "thinking_level_select",
    "session_compact",
    "session_tree",
    "after_provider_response",
  ];
  // yoagent's AgentEvent types, with the pi event each one is shown as.
  const OBSERVED = {
    agentStart: "agent_start",
    agentEnd: "agent_end",
    turnStart: "turn_start",
    turnEnd: "turn_end",
    messageStart: "message_start",
    messageUpdate: "message_update",
    toolExecutionStart: "tool_execution_start",
    toolExecutionUpdate: "tool_execution_update",
    toolExecutionEnd: "tool_execution_end",
  };
  const HOOKED = ["tool_call", "tool_result", "input", "before_agent_start", "session_start", "session_shutdown"];

  // yoagent's built-in tools, shown to pi handlers under pi's names and
  // argument shapes: [pi name, yoagent args -> pi input, pi input -> yoagent args].
  const same = (args) => ({ ...args });
  const BUILTIN_TOOLS = {
    bash: ["bash", same, same],
    read_file: ["read", same, same],
    write_file: ["write", same, same],
    list_files: ["find", same, same],
    edit_file: [
      "edit",
      ({ old_text, new_text, ...rest }) => ({ ...rest, edits: [{ oldText: old_text, newText: new_text }] }),
      ({ edits, oldText, newText, ...rest }) => {
        const list = edits ?? [{ oldText, newText }];
        if (!Array.isArray(list) || list.length !== 1) {
          throw new Error("the handler asked for several replacements in one `edit`; the host's `edit_file` makes exactly one");
        }
        return { ...rest, old_text: list[0].oldText, new_text: list[0].newText };
      },
    ],
    search: [
      "grep",
      ({ include, case_sensitive, ...rest }) => ({
        ...rest,
        ...(include !== undefined && { glob: include }),
        ignoreCase: !case_sensitive,
      }),
      ({ glob, ignoreCase, ...rest }) => ({
        ...rest,
        ...(glob !== undefined && { include: glob }),
        case_sensitive: !ignoreCase,
      }),
    ],
  };
  const piName = (tool) => BUILTIN_TOOLS[tool]?.[0] ?? tool;
  const piInput = (tool, args) => (BUILTIN_TOOLS[tool] ? BUILTIN_TOOLS[tool][1](args ?? {}) : args);
  const hostArgs = (tool, input) => (BUILTIN_TOOLS[tool] ? BUILTIN_TOOLS[tool][2](input ?? {}) : input);

  // What `event.systemPrompt` holds in `before_agent_start`: the host never
  // shows or replaces its system prompt, so text added around this stand-in
  // becomes a note.
  const SYSTEM_PROMPT = "<system prompt>";

  const handlers = new Map();
  const tools = new Map();
  const refusals = [];
  const warnings = [];
  const flags = new Map();
  let loaded = false;

  // A refusal: its message is the reason, without a stack location.
  const refusal = (message) => Object.assign(new Error(message), { stack: "" });
  const unavailable = (what, why) => () => {
    throw new Error(`${what} is not available in yohost: ${why}`);
  };
  const warnApp = (what) => {
    const warning = `${what}, which belongs to an app: the host ignores it`;
    if (!warnings.includes(warning)) warnings.push(warning);
  };

  function on(event, handler) {
    if (typeof handler !== "function") throw new TypeError(`pi.on("${event}") needs a handler function`);
    if (REFUSED[event]) {
      const why = `listens for \`${event}\`: ${REFUSED[event]}, which the host never lets a plugin do`;
      if (loaded) throw refusal(`the pi extension ${why}`);
      refusals.push(why);
      return;
    }
    const known = HOOKED.includes(event) || Object.values(OBSERVED).includes(event);
    if (!known) {
      const note = SILENT.includes(event) ? "which the host never emits" : "which the host does not know";
      warnings.push(`listens for \`${event}\`, ${note}: the handler never runs`);
    } else if (loaded && !handlers.has(event)) {
      throw new Error(`pi.on("${event}") after loading is not available in yohost: listen while the extension loads`);
    }
    if (!handlers.has(event)) handlers.set(event, []);
    handlers.get(event).push(handler);
  }

  function registerTool(tool) {
    if (tool === null || typeof tool !== "object" || typeof tool.name !== "string" || tool.name === "") {
      throw new TypeError("pi.registerTool needs a tool with a `name`");
    }
    if (typeof tool.execute !== "function") throw new TypeError(`tool \`${tool.name}\` needs an \`execute\` function`);
    if (loaded && tools.size === 0) {
      throw new Error("pi.registerTool after loading is not available in yohost: register tools while the extension loads");
    }
    if (tool.renderCall || tool.renderResult) warnApp(`tool \`${tool.name}\` has a custom renderer`);
    tools.set(tool.name, tool);
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

  const noHistory = "the host never adds to or rewrites a run's history";
  const noSession = "the host has no session to change";
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
    registerProvider(name) {
      const why = `calls \`pi.registerProvider("${name}")\`, which would change the model provider`;
      if (loaded) throw refusal(`the pi extension ${why}`);
      refusals.push(why);
    },
    unregisterProvider: unavailable("pi.unregisterProvider", "the host's provider is not the plugin's to change"),
    exec,
    events,
    sendMessage: unavailable("pi.sendMessage", noHistory),
    sendUserMessage: unavailable("pi.sendUserMessage", noHistory),
    appendEntry: unavailable("pi.appendEntry", noSession),
    setSessionName: unavailable("pi.setSessionName", noSession),
    getSessionName: () => undefined,
    setLabel: unavailable("pi.setLabel", noSession),
    getCommands: () => [],
    getActiveTools: unavailable("pi.getActiveTools", "the host does not show its tool set"),
    getAllTools: unavailable("pi.getAllTools", "the host does not show its tool set"),
    setActiveTools: unavailable("pi.setActiveTools", "the host decides which tools a run has"),
    setModel: unavailable("pi.setModel", "the host decides the model"),
    getThinkingLevel: unavailable("pi.getThinkingLevel", "the host decides the model's settings"),
    setThinkingLevel: unavailable("pi.setThinkingLevel", "the host decides the model's settings"),
  });

  // pi's print mode: no dialogs, notifications go to the log. Widgets and
  // the like do nothing; set while the extension loads, they are reported.
  const identity = (_style, text) => (text === undefined ? _style : text);
  const theme = Object.freeze({ fg: identity, bg: identity, bold: (t) => t, italic: (t) => t, underline: (t) => t, strikethrough: (t) => t, inverse: (t) => t, dim: (t) => t });
  function makeUi(log) {
    const quiet = () => {};
    const widget = (what) => () => {
      if (!loaded) warnApp(`sets ${what}`);
    };
    return Object.freeze({
      select: async () => undefined,
      confirm: async () => false,
      input: async () => undefined,
      editor: async () => undefined,
      custom: async () => undefined,
      notify(message, type) {
        const at = type === "error" ? log.error : type === "warning" ? log.warn : log.info;
        at(String(message));
      },
      onTerminalInput: () => quiet,
      setStatus: widget("a status line"),
      setWorkingMessage: widget("a working message"),
      setWorkingVisible: quiet,
      setWorkingIndicator: widget("a working indicator"),
      setHiddenThinkingLabel: quiet,
      setWidget: widget("a UI widget"),
      setFooter: widget("a footer"),
      setHeader: widget("a header"),
      setTitle: widget("the terminal title"),
      pasteToEditor: quiet,
      setEditorText: quiet,
      getEditorText: () => "",
      addAutocompleteProvider: quiet,
      setEditorComponent: widget("an editor component"),
      getEditorComponent: () => undefined,
      theme,
      getAllThemes: () => [],
      getTheme: () => undefined,
      setTheme: () => ({ success: false, error: "UI not available" }),
      getToolsExpanded: () => false,
      setToolsExpanded: quiet,
    });
  }

  const signal = Object.freeze({
    aborted: false,
    reason: undefined,
    onabort: null,
    addEventListener() {},
    removeEventListener() {},
    throwIfAborted() {},
  });
  const sessionManager = Object.freeze({
    getEntries: () => [],
    getBranch: () => [],
    getLeafId: () => null,
    getSessionFile: () => undefined,
    getLabel: () => undefined,
  });

  // The `ctx` pi handlers receive, over the engine's per-call `ctx`.
  function makeCtx(call) {
    const log = call?.log ?? console;
    return Object.freeze({
      hasUI: false,
      ui: makeUi(log),
      cwd: host.cwd ?? "/",
      signal: call ? signal : undefined,
      sessionManager,
      model: undefined,
      modelRegistry: Object.freeze({ find: () => undefined, getAll: () => [], getAvailable: () => [] }),
      isIdle: () => !call,
      hasPendingMessages: () => false,
      getContextUsage: () => undefined,
      abort: unavailable("ctx.abort", "a plugin cannot cancel the host's run"),
      shutdown: unavailable("ctx.shutdown", "a plugin cannot stop the host"),
      compact: unavailable("ctx.compact", noHistory),
      getSystemPrompt: unavailable("ctx.getSystemPrompt", "the host does not show its system prompt"),
    });
  }

  async function emit(name, event, ctx) {
    for (const handler of handlers.get(name) ?? []) await handler(event, ctx);
  }

  // --- load -------------------------------------------------------------
  if (typeof factory !== "function") {
    throw refusal("a pi extension's default export must be a function `(pi) => void`");
  }
  const refuse = () => {
    if (refusals.length > 0) throw refusal(`the pi extension ${refusals.join("; ")}`);
  };
  await factory(pi);
  refuse();
  await emit("session_start", { type: "session_start", reason: "startup" }, makeCtx(null));
  refuse();
  loaded = true;

  // --- hooks ------------------------------------------------------------
  const hooks = Object.create(null);
  const has = (name) => (handlers.get(name) ?? []).length > 0;
  const runs = new Map(); // run_id -> {turnIndex, note}
  const runState = (run) => {
    if (!runs.has(run.run_id)) runs.set(run.run_id, { turnIndex: 0, note: undefined });
    return runs.get(run.run_id);
  };

  if (tools.size > 0) {
    hooks.tools = () =>
      [...tools.values()].map((tool) => ({
        name: tool.name,
        description: tool.description ?? "",
        parameters: tool.parameters ?? { type: "object", properties: {} },
        ...(tool.label !== undefined && { label: String(tool.label) }),
      }));
    hooks.call_tool = async (args, call) => {
      const tool = tools.get(args.tool);
      if (tool === undefined) throw new Error(`no tool named \`${args.tool}\``);
      const params = typeof tool.prepareArguments === "function" ? tool.prepareArguments(args.args) : args.args;
      let result;
      try {
        result = await tool.execute(args.call_id, params, signal, () => {}, makeCtx(call));
      } catch (e) {
        // pi: a tool signals failure by throwing.
        return { content: [{ type: "text", text: e instanceof Error ? e.message : String(e) }], is_error: true };
      }
      return {
        content: result?.content ?? [],
        details: result?.details ?? null,
        is_error: result?.isError === true,
      };
    };
  }

  if (has("tool_call")) {
    hooks.before_tool = async (args, call) => {
      const input = piInput(args.tool, args.args);
      const before = JSON.stringify(input);
      const event = { type: "tool_call", toolName: piName(args.tool), toolCallId: args.call_id, input };
      const ctx = makeCtx(call);
      for (const handler of handlers.get("tool_call")) {
        const result = await handler(event, ctx);
        if (result?.block) return { deny: String(result.reason ?? "blocked by a pi extension") };
      }
      if (JSON.stringify(event.input) === before) return null;
      return { args: hostArgs(args.tool, event.input) };
    };
  }

  if (has("tool_result")) {
    hooks.after_tool = async (args, call) => {
      const event = {
        type: "tool_result",
        toolName: piName(args.tool),
        toolCallId: args.call_id,
        input: piInput(args.tool, args.args),
        content: args.output.content,
        details: args.output.details,
        isError: args.output.is_error,
      };
      const ctx = makeCtx(call);
      const edit = {};
      for (const handler of handlers.get("tool_result")) {
        const patch = await handler(event, ctx);
        if (!patch) continue;
        if (patch.content !== undefined) event.content = edit.content = patch.content;
        if (patch.details !== undefined) event.details = edit.details = patch.details;
        if (patch.isError !== undefined) event.isError = edit.is_error = patch.isError;
      }
      return Object.keys(edit).length > 0 ? edit : null;
    };
  }

  if (has("input")) {
    hooks.on_input = async (args, call) => {
      const event = { type: "input", text: args.text, images: undefined, source: "interactive" };
      const ctx = makeCtx(call);
      for (const handler of handlers.get("input")) {
        const result = await handler(event, ctx);
        if (result?.action === "handled") {
          return { reject: "a pi extension handled this input itself (`handled`), so no run starts" };
        }
        if (result?.action === "transform") {
          return { reject: "a pi extension would rewrite this input (`transform`), and the host never rewrites a prompt" };
        }
      }
      return null;
    };
  }

  // What `before_agent_start` adds to the system prompt, or injects as a
  // message, as one note.
  async function agentStartNote(args, call) {
    const ctx = makeCtx(call);
    const notes = [];
    for (const handler of handlers.get("before_agent_start")) {
      const event = { type: "before_agent_start", prompt: args.user_request ?? "", images: undefined, systemPrompt: SYSTEM_PROMPT, systemPromptOptions: { cwd: ctx.cwd, selectedTools: args.tools.map(piName) } };
      const result = await handler(event, ctx);
      if (typeof result?.systemPrompt === "string" && result.systemPrompt !== SYSTEM_PROMPT) {
        const parts = result.systemPrompt.split(SYSTEM_PROMPT);
        if (parts.length !== 2) {
          throw new Error("a pi extension's `before_agent_start` replaces the system prompt, which the host never does (it may only add to it)");
        }
        notes.push(...parts.map((p) => p.trim()).filter(Boolean));
      }
      const content = result?.message?.content;
      if (typeof content === "string") notes.push(content);
      else if (Array.isArray(content)) notes.push(...content.filter((b) => b?.type === "text").map((b) => b.text));
    }
    return notes.length > 0 ? notes.join("\n\n") : null;
  }

  if (has("before_agent_start")) {
    hooks.before_model = async (args, call) => {
      const state = runState(args.run);
      if (state.note === undefined) state.note = await agentStartNote(args, call);
      return state.note === null ? null : { note: state.note };
    };
  }

  const observed = Object.entries(OBSERVED).filter(([, name]) => has(name));
  if (observed.length > 0) {
    const toPi = {
      agentStart: () => ({}),
      agentEnd: (e) => ({ messages: e.messages }),
      turnStart: (_e, state) => ({ turnIndex: state.turnIndex, timestamp: Date.now() }),
      turnEnd: (e, state) => ({ turnIndex: state.turnIndex++, message: e.message, toolResults: e.toolResults }),
      messageStart: (e) => ({ message: e.message }),
      messageUpdate: (e) => ({ message: e.message, assistantMessageEvent: e.delta }),
      toolExecutionStart: (e) => ({ toolCallId: e.toolCallId, toolName: piName(e.toolName), args: piInput(e.toolName, e.args) }),
      toolExecutionUpdate: (e) => ({ toolCallId: e.toolCallId, toolName: piName(e.toolName), partialResult: e.partialResult }),
      toolExecutionEnd: (e) => ({ toolCallId: e.toolCallId, toolName: piName(e.toolName), result: e.result, isError: e.isError }),
    };
    hooks.on_event = async (args, call) => {
      const name = OBSERVED[args.event?.type];
      if (name === undefined) return null;
      const state = runState(args.run);
      await emit(name, { type: name, ...toPi[args.event.type](args.event, state) }, makeCtx(call));
      return null;
    };
  }

  if (hooks.before_model || hooks.on_event) {
    hooks.finish = (args) => {
      runs.delete(args.run.run_id);
      return null;
    };
  }

  const unload = () => emit("session_shutdown", { type: "session_shutdown", reason: "quit" }, makeCtx(null));
  return { hooks, warnings, unload };
})
