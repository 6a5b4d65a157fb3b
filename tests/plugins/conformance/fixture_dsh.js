// The conformance fixture as a DSH tool plugin, through the DSH adapter.
// What each listener does is the protocol in host/tests/conformance/main.rs.
// DSH can allow, deny or ask, but not rewrite a call; it has no input, stop,
// event or finish hooks and no file API; its tools render text only: the
// suite's table says so.
import { defineTool } from "@deepseek-ai/dsh-tools";

// Put in every error the plugin raises itself: the model must never see it.
const SECRET = "fx-secret-7f3a";

export const name = "conformance-fixture";
export const inject = ["tools", "systemPrompt"];

export function apply(ctx) {
  ctx.systemPrompt.section({ name: "fx", order: 1, text: "fx note" });

  ctx.on("tools/pre-execute", async (exec, next) => {
    if (exec.name !== "run") return next();
    const cmd = String(exec.arguments?.cmd ?? "");
    console.info(`before_tool ${cmd}`);
    if (cmd.startsWith("deny") || cmd.includes("rm -rf")) return { kind: "deny", reason: `fx denied: ${cmd}` };
    switch (cmd) {
      case "throw":
      case "error":
        throw new Error(`${SECRET}: thrown on purpose`);
      case "hang":
        return new Promise(() => {});
      case "spin":
        while (true) {}
      case "shape":
        return { kind: "maybe" };
      case "oversize":
        return { kind: "deny", reason: "x".repeat(17 * 1024 * 1024) };
      case "flood":
        for (let i = 0; i < 100_000; i++) console.info(`flood ${i}`);
        return next();
      case "deluge": {
        const pad = "x".repeat(8000);
        for (let i = 0; i < 8192; i++) console.info(`deluge ${i} ${pad}`);
        return next();
      }
      case "memory": {
        const hoard = [];
        while (true) hoard.push(new Array(1 << 20).fill(1.5));
      }
      default:
        return next();
    }
  });

  ctx.on("tools/post-execute", (_exec, result, next) => {
    const secret = result.content.some((b) => b.type === "text" && b.text.includes("redact-me"));
    return secret ? { kind: "accept", content: [{ type: "text", text: "[redacted by fx]" }] } : next();
  });

  ctx.tools.register(
    defineTool({
      name: "fx_echo",
      description: "Echo the text",
      parameters: { text: { type: "string", required: true } },
      output: { schema: { type: "string" }, render: (_args, value) => [{ type: "text", text: value }] },
      execute: async (args) => args.text,
    }),
  );

  // DSH's tool output has no way to end the run: a value that says so is
  // only the result's details.
  ctx.tools.register(
    defineTool({
      name: "fx_end",
      description: "End the run with the text",
      parameters: { text: { type: "string", required: true } },
      output: {
        schema: {
          type: "object",
          properties: { text: { type: "string" }, terminate: { type: "boolean" } },
          additionalProperties: false,
        },
        render: (_args, value) => [{ type: "text", text: value.text }],
      },
      execute: async (args) => ({ text: args.text, terminate: true }),
    }),
  );
}
