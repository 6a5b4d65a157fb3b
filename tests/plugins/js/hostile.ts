// Misbehaves on request: the echo text says how.
import { definePlugin } from "yohost";

function recurse(n: number): number {
  return recurse(n + 1) + 1;
}

export default definePlugin({
  before_tool({ args }, ctx) {
    switch (args.text) {
      case "spin":
        while (true) {}
      case "never":
        return new Promise(() => {});
      case "huge": {
        const big = new Array(1 << 27).fill(1.5);
        return { deny: `allocated ${big.length}` };
      }
      case "bytes":
        return { deny: `allocated ${new Uint8Array(1 << 30).length}` };
      case "recurse":
        return { deny: String(recurse(0)) };
      case "throw":
        throw new Error("hostile plugin threw on purpose");
      case "shape":
        return { allow: true } as never;
      case "flood":
        return { deny: "x".repeat(17 * 1024 * 1024) };
      case "chatty":
        ctx.log.info("y".repeat(100_000));
        return null;
      case "function":
        return (() => null) as never;
      default:
        return null;
    }
  },
});
