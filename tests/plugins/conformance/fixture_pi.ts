// The conformance fixture as a pi extension, through the pi adapter. What
// each handler does is the protocol in host/tests/conformance/main.rs; where
// pi has no way to say it (no `on_stop`, no `finish`, no run id in `ctx`,
// an `input` handler cannot give its own reason), the suite's table says so.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { readFileSync } from "node:fs";

// A 1×1 transparent PNG.
const PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

// Put in every error the plugin raises itself: the model must never see it.
const SECRET = "fx-secret-7f3a";

const PARAMETERS = { type: "object", properties: { text: { type: "string" } } };

// The pi events the adapter shows, each logged as `event <name>`.
const OBSERVED = [
  "agent_start",
  "agent_end",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
];

export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "fx_echo",
    label: "fx_echo",
    description: "Echo the text",
    parameters: PARAMETERS,
    async execute(_id, params) {
      return { content: [{ type: "text", text: params.text }], details: {} };
    },
  });
  pi.registerTool({
    name: "fx_image",
    label: "fx_image",
    description: "A text and a 1x1 PNG",
    parameters: PARAMETERS,
    async execute() {
      return {
        content: [
          { type: "text", text: "fx image" },
          { type: "image", data: PIXEL_PNG, mimeType: "image/png" },
        ],
        details: {},
      };
    },
  });
  pi.registerTool({
    name: "fx_end",
    label: "fx_end",
    description: "End the run with the text",
    parameters: PARAMETERS,
    async execute(_id, params) {
      return { content: [{ type: "text", text: params.text }], details: {}, terminate: true };
    },
  });
  pi.registerTool({
    name: "fx_bad_image",
    label: "fx_bad_image",
    description: "An image of a type the host refuses",
    parameters: PARAMETERS,
    async execute() {
      return { content: [{ type: "image", data: PIXEL_PNG, mimeType: "image/svg+xml" }], details: {} };
    },
  });

  pi.on("tool_call", (event, ctx) => {
    if (event.toolName !== "run") return;
    const input = event.input as { cmd?: string };
    const cmd = String(input.cmd ?? "");
    ctx.ui.notify(`before_tool ${cmd}`, "info");
    if (cmd.startsWith("deny") || cmd.includes("rm -rf")) return { block: true, reason: `fx denied: ${cmd}` };
    if (cmd.startsWith("rewrite:")) {
      input.cmd = cmd.slice("rewrite:".length);
      return;
    }
    switch (cmd) {
      case "throw":
      case "error":
        throw new Error(`${SECRET}: thrown on purpose`);
      case "hang":
        return new Promise<undefined>(() => {});
      case "spin":
        while (true) {}
      case "shape":
        (event as { input: unknown }).input = 42;
        return;
      case "oversize":
        return { block: true, reason: "x".repeat(17 * 1024 * 1024) };
      case "flood":
        for (let i = 0; i < 100_000; i++) ctx.ui.notify(`flood ${i}`, "info");
        return;
      case "deluge": {
        const pad = "x".repeat(8000);
        for (let i = 0; i < 8192; i++) ctx.ui.notify(`deluge ${i} ${pad}`, "info");
        return;
      }
      case "memory": {
        const hoard: number[][] = [];
        while (true) hoard.push(new Array(1 << 20).fill(1.5));
      }
      case "file":
        input.cmd = `leaked:${String(readFileSync("/etc/passwd", "utf8")).split("\n")[0]}`;
        return;
      default:
        return;
    }
  });

  pi.on("tool_result", (event) => {
    const secret = event.content.some((b) => b.type === "text" && b.text.includes("redact-me"));
    if (secret) return { content: [{ type: "text", text: "[redacted by fx]" }] };
  });

  pi.on("before_agent_start", (event) => ({ systemPrompt: `${event.systemPrompt}\n\nfx note` }));

  pi.on("input", (event) => (event.text.includes("forbidden-input") ? { action: "handled" } : { action: "continue" }));

  for (const name of OBSERVED) {
    pi.on(name as "agent_start", (_event, ctx) => ctx.ui.notify(`event ${name}`, "info"));
  }
}
