// Reports which environment variables it can see.
import { definePlugin } from "yohost";

export default definePlugin({
  before_tool(_call, ctx) {
    return { deny: `env: ${JSON.stringify(ctx.env)}; process: ${typeof (globalThis as any).process}; require: ${typeof (globalThis as any).require}` };
  },
});
