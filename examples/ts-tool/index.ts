// A TypeScript tool: counts the words, lines and characters of a text.
import { defineTool, definePlugin } from "yohost";
import { count } from "./count.ts";

interface TextStatsArgs {
  text: string;
}

const textStats = defineTool<TextStatsArgs>({
  name: "text_stats",
  label: "Text stats",
  description: "Count the words, lines and characters of a text.",
  parameters: {
    type: "object",
    properties: { text: { type: "string", description: "The text to count" } },
    required: ["text"],
  },
  run(args, ctx) {
    ctx.log.info(`counting ${args.text.length} characters`);
    const c = count(args.text);
    return {
      content: [{ type: "text", text: `${c.words} words, ${c.lines} lines, ${c.chars} characters` }],
      details: { ...c },
    };
  },
});

export default definePlugin({ name: "ts-tool", tools: [textStats] });
