// yohost's plugin shape: the plugin module's default export is
// `definePlugin({...})` (or the same plain object). Returns `{name, hooks,
// unknown}`, where each hook is a function `(args, ctx) => reply` (or a
// promise of it). Unknown fields are reported with the field meant, so a
// misspelt hook refuses a required plugin and warns of an advisory one
// instead of being silently ignored.
export default function shape(namespace) {
  const plugin = namespace.default;
  const HOOKS = ["before_tool", "after_tool", "before_model", "on_input", "on_stop", "on_event", "finish"];
  const FIELDS = ["name", "tools", ...HOOKS];
  if (plugin === null || typeof plugin !== "object") {
    throw new TypeError("the plugin file must `export default definePlugin({...})` (from \"yohost\")");
  }
  const unknown = Object.keys(plugin)
    .filter((k) => !FIELDS.includes(k))
    .map((k) => ({ what: `has the field \`${k}\``, name: k, known: FIELDS, strict: true, outcome: "the host never calls it" }));
  const hooks = Object.create(null);
  for (const hook of HOOKS) {
    const handler = plugin[hook];
    if (handler === undefined) continue;
    if (typeof handler !== "function") throw new TypeError(`\`${hook}\` must be a function`);
    hooks[hook] = (args, ctx) => handler.call(plugin, args, ctx);
  }
  if (plugin.tools !== undefined) {
    if (!Array.isArray(plugin.tools)) throw new TypeError("`tools` must be a list of tools");
    const byName = new Map();
    const specs = plugin.tools.map((tool, i) => {
      if (tool === null || typeof tool !== "object" || typeof tool.name !== "string" || tool.name === "") {
        throw new TypeError(`tools[${i}] needs a \`name\``);
      }
      const run = tool.run ?? tool.execute;
      if (typeof run !== "function") throw new TypeError(`tool \`${tool.name}\` needs a \`run\` (or \`execute\`) function`);
      if (byName.has(tool.name)) throw new TypeError(`two tools are named \`${tool.name}\``);
      byName.set(tool.name, (args, ctx) => run.call(tool, args, ctx));
      const spec = {
        name: tool.name,
        description: tool.description ?? "",
        parameters: tool.parameters ?? { type: "object", properties: {} },
      };
      if (tool.label !== undefined) spec.label = tool.label;
      return spec;
    });
    hooks.tools = () => specs;
    hooks.call_tool = (args, ctx) => {
      const run = byName.get(args.tool);
      if (run === undefined) throw new Error(`no tool named \`${args.tool}\``);
      return run(args.args, ctx);
    };
  }
  return { name: plugin.name, hooks, unknown };
}
