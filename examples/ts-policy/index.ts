// A TypeScript policy: denies destructive shell commands, keeps file writes
// inside the working directory, and trims overlong echo arguments.
import { definePlugin, type BeforeToolArgs, type BeforeToolReply, type Ctx } from "yohost";

const DESTRUCTIVE: readonly string[] = ["rm -rf", "mkfs", "dd if=", ":(){"];
const MAX_ECHO = 200;

function judgeBash(command: string, ctx: Ctx): BeforeToolReply {
  const bad = DESTRUCTIVE.find((d) => command.includes(d));
  if (bad !== undefined) {
    ctx.log.warn(`denied a bash command containing ${JSON.stringify(bad)}`);
    return { deny: `ts-policy: \`${bad}\` is not allowed in bash commands` };
  }
  return null;
}

export default definePlugin({
  name: "ts-policy",
  before_tool(call: BeforeToolArgs, ctx: Ctx): BeforeToolReply {
    if (call.tool === "bash") {
      return judgeBash(String(call.args.command ?? ""), ctx);
    }
    if (call.tool === "write_file") {
      const path = String(call.args.path ?? "");
      if (path.startsWith("/") || path.includes("..")) {
        return { deny: `ts-policy: writes must stay inside the working directory, not ${path}` };
      }
    }
    if (call.tool === "echo") {
      const text = String(call.args.text ?? "");
      if (text.length > MAX_ECHO) {
        ctx.log.info(`trimmed an echo of ${text.length} characters`);
        return { args: { ...call.args, text: text.slice(0, MAX_ECHO) } };
      }
    }
    return null;
  },
});
