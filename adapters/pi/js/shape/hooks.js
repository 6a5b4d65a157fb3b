// What a loaded pi extension registered, as yohost hooks.

import { host } from "pi:host";
import { OBSERVED } from "pi:shape/events";
import { UNSUPPORTED } from "pi:shape/refusals";
import { hostArgs, piInput, piName } from "pi:shape/tools";

// What `event.systemPrompt` holds in `before_agent_start`: the host never
// shows or replaces its system prompt, so text added around this stand-in
// becomes a note.
export const SYSTEM_PROMPT = "<system prompt>";

/** Run every handler of `name`, in order. */
export async function emit(state, name, event, ctx) {
  for (const handler of state.handlers.get(name) ?? []) await handler(event, ctx);
}

const parametersOf = (tool) => tool.parameters ?? { type: "object", properties: {} };

// As in pi, `prepareArguments` runs before the arguments are checked
// against the schema: such a tool asks the host for its arguments unchecked
// and checks the prepared ones with the host's validator. Without that
// service (another engine) the host checks them first.
function preparesArguments(tool) {
  return typeof tool.prepareArguments === "function" && typeof host()?.validate === "function";
}

function toolHooks(state, makeCtx, hooks) {
  hooks.tools = () =>
    [...state.tools.values()].filter((tool) => !state.inactive.has(tool.name)).map((tool) => ({
      name: tool.name,
      description: tool.description ?? "",
      parameters: parametersOf(tool),
      ...(tool.label !== undefined && { label: String(tool.label) }),
      ...(preparesArguments(tool) && { prepares_arguments: true }),
    }));
  hooks.call_tool = async (args, call) => {
    const tool = state.tools.get(args.tool);
    if (tool === undefined) throw new Error(`no tool named \`${args.tool}\``);
    let params = args.args;
    if (typeof tool.prepareArguments === "function") {
      try {
        params = tool.prepareArguments(args.args);
      } catch (e) {
        return { content: [{ type: "text", text: e instanceof Error ? e.message : String(e) }], is_error: true };
      }
    }
    if (preparesArguments(tool)) {
      const why = host().validate(tool.name, JSON.stringify(parametersOf(tool)), JSON.stringify(params ?? null));
      if (why !== null && why !== undefined) return { content: [{ type: "text", text: why }], is_error: true };
    }
    let result;
    try {
      result = await tool.execute(args.call_id, params, call.signal, progressOf(call), makeCtx(call));
    } catch (e) {
      // pi: a tool signals failure by throwing.
      return { content: [{ type: "text", text: e instanceof Error ? e.message : String(e) }], is_error: true };
    }
    return {
      content: result?.content ?? [],
      details: result?.details ?? null,
      is_error: result?.isError === true,
      ...(result?.terminate === true && { terminate: true }),
    };
  };
}

/**
 * A tool's `onUpdate`: the text of each partial result is the call's
 * progress (`ctx.progress`); a partial result without text passes nothing.
 * @param {HookContext} call
 * @returns {(partial: unknown) => void}
 */
function progressOf(call) {
  return (partial) => {
    const content = /** @type {{content?: unknown}} */ (partial ?? {}).content;
    const text = (Array.isArray(content) ? content : [])
      .filter((block) => block?.type === "text" && typeof block.text === "string")
      .map((block) => block.text)
      .join("\n");
    if (text !== "") call.progress(text);
  };
}

function toolCallHook(state, makeCtx) {
  return async (args, call) => {
    const input = piInput(args.tool, args.args);
    const before = JSON.stringify(input);
    const event = { type: "tool_call", toolName: piName(args.tool), toolCallId: args.call_id, input };
    const ctx = makeCtx(call);
    for (const handler of state.handlers.get("tool_call")) {
      const result = await handler(event, ctx);
      if (result?.block) return { deny: String(result.reason ?? "blocked by a pi extension") };
    }
    if (JSON.stringify(event.input) === before) return null;
    return { args: hostArgs(args.tool, event.input) };
  };
}

function toolResultHook(state, makeCtx) {
  return async (args, call) => {
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
    for (const handler of state.handlers.get("tool_result")) {
      const patch = await handler(event, ctx);
      if (!patch) continue;
      if (patch.content !== undefined) event.content = edit.content = patch.content;
      if (patch.details !== undefined) event.details = edit.details = patch.details;
      if (patch.isError !== undefined) event.isError = edit.is_error = patch.isError;
    }
    return Object.keys(edit).length > 0 ? edit : null;
  };
}

function inputHook(state, makeCtx) {
  return async (args, call) => {
    const event = { type: "input", text: args.text, images: undefined, source: "interactive" };
    const ctx = makeCtx(call);
    for (const handler of state.handlers.get("input")) {
      let result;
      try {
        result = await handler(event, ctx);
      } catch (error) {
        // A handler that failed only on what a headless host cannot serve
        // does not reject the input: it is reported, and the input goes on.
        if (!error?.[UNSUPPORTED]) throw error;
        (call?.log ?? console).warn(`a pi extension's \`input\` handler failed: ${error.message}; the input goes on`);
        continue;
      }
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
async function agentStartNote(state, args, ctx) {
  const notes = [];
  for (const handler of state.handlers.get("before_agent_start")) {
    const options = { cwd: ctx.cwd, selectedTools: args.tools.map(piName), sections: {}, promptGuidelines: [] };
    const event = { type: "before_agent_start", prompt: args.user_request ?? "", images: undefined, systemPrompt: SYSTEM_PROMPT, systemPromptOptions: options };
    const result = await handler(event, ctx);
    // Sections and guidelines a handler adds to the prompt's options are
    // additions to the system prompt, as pi would build it.
    for (const [tag, text] of Object.entries(options.sections ?? {})) {
      if (typeof text === "string" && text.trim() !== "") notes.push(`<${tag}>\n${text.trim()}\n</${tag}>`);
    }
    const guidelines = (options.promptGuidelines ?? []).filter((g) => typeof g === "string" && g.trim() !== "");
    if (guidelines.length > 0) notes.push(guidelines.map((g) => `- ${g.trim()}`).join("\n"));
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

// yoagent's events as pi's, given the run's state.
const toPi = {
  agentStart: () => ({}),
  turnStart: (_e, run) => ({ turnIndex: run.turnIndex, timestamp: Date.now() }),
  turnEnd: (e, run) => ({ turnIndex: run.turnIndex++, message: e.message, toolResults: e.toolResults }),
  messageStart: (e) => ({ message: e.message }),
  messageUpdate: (e) => ({ message: e.message, assistantMessageEvent: e.delta }),
  toolExecutionStart: (e) => ({ toolCallId: e.toolCallId, toolName: piName(e.toolName), args: piInput(e.toolName, e.args) }),
  toolExecutionUpdate: (e) => ({ toolCallId: e.toolCallId, toolName: piName(e.toolName), partialResult: e.partialResult }),
  toolExecutionEnd: (e) => ({ toolCallId: e.toolCallId, toolName: piName(e.toolName), result: e.result, isError: e.isError }),
};

/** The hooks for what the loaded extension registered. */
export function buildHooks(state, makeCtx) {
  const hooks = Object.create(null);
  const has = (name) => (state.handlers.get(name) ?? []).length > 0;
  const runs = new Map(); // run_id -> {turnIndex, note}
  const runState = (run) => {
    if (!runs.has(run.run_id)) runs.set(run.run_id, { turnIndex: 0, note: undefined, messages: [] });
    return runs.get(run.run_id);
  };

  if (state.tools.size > 0) toolHooks(state, makeCtx, hooks);
  if (state.commands.size > 0) {
    // A `/name` command the app's user runs: its handler gets the rest of
    // the line and pi's command `ctx`.
    hooks.command = async (args, call) => {
      const command = state.commands.get(args.name);
      if (command === undefined) throw new Error(`no command named \`/${args.name}\``);
      await command.handler(args.args, makeCtx(call, { command: true }));
      return null;
    };
  }
  if (has("tool_call")) hooks.before_tool = toolCallHook(state, makeCtx);
  if (has("tool_result")) hooks.after_tool = toolResultHook(state, makeCtx);
  if (has("input")) hooks.on_input = inputHook(state, makeCtx);
  if (has("before_agent_start")) {
    hooks.before_model = async (args, call) => {
      const run = runState(args.run);
      if (run.note === undefined) run.note = await agentStartNote(state, args, makeCtx(call));
      return run.note === null ? null : { note: run.note };
    };
  }
  if (Object.values(OBSERVED).some(has) || has("agent_end")) {
    hooks.on_event = async (args, call) => {
      const run = runState(args.run);
      if (args.event?.type === "messageEnd" && has("agent_end")) run.messages.push(args.event.message);
      const name = OBSERVED[args.event?.type];
      if (name === undefined || !has(name)) return null;
      await emit(state, name, { type: name, ...toPi[args.event.type](args.event, run) }, makeCtx(call));
      return null;
    };
  }
  if (hooks.before_model || hooks.on_event) {
    hooks.finish = async (args, call) => {
      const run = runs.get(args.run.run_id);
      runs.delete(args.run.run_id);
      if (has("agent_end")) await emit(state, "agent_end", { type: "agent_end", messages: run?.messages ?? [] }, makeCtx(call));
      return null;
    };
  }
  return hooks;
}
