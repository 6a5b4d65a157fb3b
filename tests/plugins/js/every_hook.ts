// Implements every hook, so one run exercises them all from TypeScript.
import { definePlugin, text } from "yohost";

let events = 0;

export default definePlugin({
  name: "every-hook",
  tools: [
    {
      name: "shout",
      description: "Upper-case a text",
      parameters: { type: "object", properties: { text: { type: "string" } } },
      async execute(args: { text: string }, ctx) {
        ctx.log.info("shouting");
        return { content: [text(args.text.toUpperCase() + "!")], details: { length: args.text.length } };
      },
    },
  ],
  on_input({ text }) {
    return text.includes("forbidden") ? { reject: "every-hook: forbidden word" } : null;
  },
  before_model({ tools }) {
    return { note: `every-hook sees ${tools.length} tools` };
  },
  before_tool({ tool, args }) {
    if (tool === "echo" && args.text === "rewrite-me") return { args: { text: "rewritten" } };
    if (tool === "echo" && args.text === "deny-me") return { deny: "every-hook: denied" };
    return null;
  },
  after_tool({ tool, output }) {
    if (tool !== "echo") return null;
    return { content: [...output.content, text("(filtered)")] };
  },
  on_stop({ answer, continues }) {
    if (answer.includes("lazy") && continues === 0) return { continue: "every-hook: try harder" };
    return null;
  },
  on_event({ event }, ctx) {
    events += 1;
    ctx.log.debug(`event ${event.type}`);
  },
  finish({ end }, ctx) {
    ctx.log.info(`finished: ${end} after ${events} events`);
  },
});
