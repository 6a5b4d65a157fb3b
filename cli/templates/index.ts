// {{name}}: a yohost plugin in TypeScript. The host runs this file as it is
// (no build step); type-check it with `npx tsc` (see package.json).
import { definePlugin, type BeforeToolArgs, type BeforeToolReply, type Ctx } from "yohost";

export default definePlugin({
  name: "{{name}}",
  before_tool({ tool, args }: BeforeToolArgs, ctx: Ctx): BeforeToolReply {
    if (tool === "bash" && String(args.command ?? "").includes("rm -rf")) {
      ctx.log.warn("denied a bash command containing `rm -rf`");
      return { deny: "{{name}}: `rm -rf` is not allowed" };
    }
    return null; // allow
  },
});
