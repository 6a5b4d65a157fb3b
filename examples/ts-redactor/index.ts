// A TypeScript output filter: redacts secrets from tool output before the
// model sees it.
import { definePlugin, type AfterToolArgs, type AfterToolReply, type ContentBlock } from "yohost";

const SECRET = /(sk-[A-Za-z0-9]{8,}|AKIA[0-9A-Z]{16}|password\s*[:=]\s*\S+)/g;

export default definePlugin({
  name: "ts-redactor",
  after_tool({ output }: AfterToolArgs, ctx): AfterToolReply {
    let redacted = 0;
    const content: ContentBlock[] = output.content.map((block) => {
      if (block.type !== "text") return block;
      const text = block.text.replace(SECRET, () => {
        redacted += 1;
        return "[REDACTED]";
      });
      return { type: "text", text };
    });
    if (redacted === 0) return null;
    ctx.log.info(`redacted ${redacted} secret(s) from ${output.content.length} block(s)`);
    return { content };
  },
});
