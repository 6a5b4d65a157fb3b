// The conformance fixture in TypeScript (yohost's own API). What each hook
// does is the protocol in host/tests/conformance/main.rs.
import { definePlugin, fs, image, text } from "yohost";

// A 1×1 transparent PNG.
const PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

// Put in every error the plugin raises itself: the model must never see it.
const SECRET = "fx-secret-7f3a";

const PARAMETERS = { type: "object", properties: { text: { type: "string" } } } as const;

export default definePlugin({
  name: "conformance-fixture",
  tools: [
    { name: "fx_echo", description: "Echo the text", parameters: PARAMETERS, run: (args: { text: string }) => args.text },
    {
      name: "fx_image",
      description: "A text and a 1x1 PNG",
      parameters: PARAMETERS,
      run: () => ({ content: [text("fx image"), image(PIXEL_PNG, "image/png")] }),
    },
    {
      name: "fx_end",
      description: "End the run with the text",
      parameters: PARAMETERS,
      run: (args: { text: string }) => ({ content: [text(args.text)], terminate: true }),
    },
    {
      name: "fx_bad_image",
      description: "An image of a type the host refuses",
      parameters: PARAMETERS,
      run: () => ({ content: [{ type: "image", data: PIXEL_PNG, mimeType: "image/svg+xml" as "image/png" }] }),
    },
  ],
  before_tool({ tool, args, run }, ctx) {
    if (tool !== "run") return null;
    const cmd = String(args.cmd ?? "");
    ctx.log.info(`before_tool ${cmd}`);
    if (cmd.startsWith("deny") || cmd.includes("rm -rf")) return { deny: `fx denied: ${cmd}` };
    if (cmd.startsWith("rewrite:")) return { args: { cmd: cmd.slice("rewrite:".length) } };
    if (cmd === "whoami" || cmd.startsWith("whoami ")) {
      return { args: { cmd: `whoami:${run.run_id}${cmd.slice("whoami".length)}` } };
    }
    switch (cmd) {
      case "throw":
      case "error":
        throw new Error(`${SECRET}: thrown on purpose`);
      case "hang":
        return new Promise<null>(() => {});
      case "spin":
        while (true) {}
      case "shape":
        return { allow: true } as never;
      case "oversize":
        return { deny: "x".repeat(17 * 1024 * 1024) };
      case "flood":
        for (let i = 0; i < 100_000; i++) ctx.log.info(`flood ${i}`);
        return null;
      case "deluge": {
        const pad = "x".repeat(8000);
        for (let i = 0; i < 8192; i++) ctx.log.info(`deluge ${i} ${pad}`);
        return null;
      }
      case "memory": {
        const hoard: number[][] = [];
        while (true) hoard.push(new Array(1 << 20).fill(1.5));
      }
      case "file":
        return { args: { cmd: `leaked:${fs.readText("/etc/passwd").split("\n")[0]}` } };
      default:
        return null;
    }
  },
  after_tool({ output }) {
    const secret = output.content.some((b) => b.type === "text" && b.text.includes("redact-me"));
    return secret ? { content: [text("[redacted by fx]")] } : null;
  },
  before_model() {
    return { note: "fx note" };
  },
  on_input({ text }) {
    return text.includes("forbidden-input") ? { reject: "fx rejects forbidden-input" } : null;
  },
  on_stop({ answer, continues }) {
    return answer.includes("lazy") && continues === 0 ? { continue: "fx: try again" } : null;
  },
  on_event({ event }, ctx) {
    ctx.log.info(`event ${event.type}`);
  },
  finish({ end }, ctx) {
    ctx.log.info(`finish ${end}`);
  },
});
