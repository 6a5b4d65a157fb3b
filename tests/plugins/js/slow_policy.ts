// An async before_tool that awaits a timer, logging before and after.
import { definePlugin } from "yohost";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export default definePlugin({
  async before_tool({ args }, ctx) {
    ctx.log.info(`before await: ${args.text}`);
    console.log(`console before await: ${args.text}`);
    await sleep(Number(args.ms ?? 30));
    ctx.log.info(`after await: ${args.text}`);
    if (String(args.text).includes("slow-deny")) return { deny: "slow-policy: denied after thinking" };
    return null;
  },
});
