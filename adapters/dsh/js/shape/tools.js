// `ctx.tools`: DSH's tool registry, as yohost hooks. A call runs DSH's
// pipeline: arguments checked against the tool's JSON Schema, `execute`,
// the value checked against `output.schema`, `output.render` to content
// blocks; a failure at any step is an error result (`Error: message`).
// The policy side (`tools/pre-execute`, `tools.guard`) is `before_tool`;
// `tools/post-execute` is `after_tool`.

import { ToolArgsError, validateJsonSchemaValue } from "dsh:schema";

/** The text of an error result, as DSH writes it. */
const errorText = (error) => `Error: ${error instanceof Error ? error.message : String(error)}`;
const errorResult = (error) => ({ content: [{ type: "text", text: errorText(error) }], is_error: true });

/** DSH content parts as yoagent content blocks. */
function toBlocks(parts, toolName) {
  if (!Array.isArray(parts)) throw new TypeError(`tool \`${toolName}\`'s render must return a list of content parts`);
  return parts.map((part) => {
    if (part?.type === "text" && typeof part.text === "string") return { type: "text", text: part.text };
    return { type: "text", text: `[${String(part?.type)} content is not available in yohost]` };
  });
}

/** A tool's output value, checked against its declared schema. */
function checkedValue(tool, value) {
  const json = value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  const violations = validateJsonSchemaValue(tool.output.schema, json, "value");
  if (violations.length > 0) throw new Error(`tool \`${tool.name}\` returned an invalid value: ${violations.join("; ")}`);
  return json;
}

/** The `tools` service and the hooks of what was registered with it. */
export function createTools(bus) {
  const tools = new Map();
  const guards = [];

  const service = Object.freeze({
    register(tool) {
      if (tool === null || typeof tool !== "object" || typeof tool.name !== "string" || tool.name === "") {
        throw new TypeError("tools.register needs a tool definition with a `name`");
      }
      if (typeof tool.execute !== "function") throw new TypeError(`tool \`${tool.name}\` needs an \`execute\` function`);
      if (tool.output === null || typeof tool.output !== "object" || typeof tool.output.render !== "function") {
        throw new TypeError(`tool \`${tool.name}\` needs an \`output\` with a \`schema\` and a \`render\` function`);
      }
      if (tools.has(tool.name)) throw new Error(`a tool named \`${tool.name}\` is already registered`);
      tools.set(tool.name, tool);
      return () => {
        if (tools.get(tool.name) === tool) tools.delete(tool.name);
      };
    },
    guard(guard) {
      if (typeof guard !== "function") throw new TypeError("tools.guard needs a function");
      guards.push(guard);
      return () => {
        const at = guards.indexOf(guard);
        if (at >= 0) guards.splice(at, 1);
      };
    },
    get: (name) => tools.get(name),
    schemas: () => [...tools.values()].map(({ name, description, parameters }) => ({ name, description, parameters })),
  });

  // What a DSH listener sees of a call.
  const execution = (args, call, agent) =>
    Object.freeze({
      callId: args.call_id,
      name: args.tool,
      arguments: args.args,
      signal: call.signal,
      agent,
    });

  async function callTool(args, call, agent) {
    const tool = tools.get(args.tool);
    if (tool === undefined) throw new Error(`no tool named \`${args.tool}\``);
    const exec = Object.freeze({ ...execution(args, call, agent), deferContext() {} });
    try {
      const violations = validateJsonSchemaValue(tool.parameters ?? {}, args.args, "");
      if (violations.length > 0) throw new ToolArgsError(violations);
      const value = checkedValue(tool, await tool.execute(args.args, exec));
      return { content: toBlocks(tool.output.render(args.args, value), tool.name), details: value ?? null, is_error: false };
    } catch (e) {
      return errorResult(e);
    }
  }

  async function beforeTool(args, call, agent) {
    const exec = execution(args, call, agent);
    const decision = await bus.waterfall("tools/pre-execute", exec, () => Promise.resolve({ kind: "allow" }));
    switch (decision?.kind) {
      case "allow":
        break;
      case "deny":
        return { deny: String(decision.reason ?? "denied by a DSH plugin") };
      case "ask":
        return { deny: `${decision.reason ? String(decision.reason) + ": " : ""}the call needs the user's approval, and the host has no one to ask` };
      default:
        throw new Error(`a tools/pre-execute listener returned ${JSON.stringify(decision)}, not {kind: "allow" | "deny" | "ask"}`);
    }
    for (const guard of [...guards]) {
      const reason = guard(exec);
      if (reason !== undefined) return { deny: String(reason) };
    }
    return null;
  }

  async function afterTool(args, call, agent) {
    const exec = execution(args, call, agent);
    const output = args.output;
    const result = Object.freeze({
      isError: output.is_error === true,
      content: output.content,
      ...(output.is_error ? { error: { message: output.content.filter((b) => b.type === "text").map((b) => b.text).join("\n") } } : { value: output.details }),
    });
    const decision = await bus.waterfall("tools/post-execute", exec, result, () => Promise.resolve({ kind: "accept" }));
    if (decision?.kind === "block") {
      return { content: toBlocks(decision.feedback, args.tool), is_error: true };
    }
    if (decision?.kind !== "accept") {
      throw new Error(`a tools/post-execute listener returned ${JSON.stringify(decision)}, not {kind: "accept" | "block"}`);
    }
    if (Object.hasOwn(decision, "value")) {
      const tool = tools.get(args.tool);
      if (tool === undefined || result.isError) throw new Error(`a tools/post-execute listener replaced the value of \`${args.tool}\`, which only a successful call of the plugin's own tool may have`);
      const value = checkedValue(tool, decision.value);
      return { content: toBlocks(tool.output.render(args.args, value), tool.name), details: value ?? null };
    }
    return decision.content === undefined ? null : { content: toBlocks(decision.content, args.tool) };
  }

  return { service, tools, guards, callTool, beforeTool, afterTool };
}
