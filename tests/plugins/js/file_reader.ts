// Reads the file an `echo` call names, through yohost's `fs`: the denial
// carries the contents, or the error the host gave.
import { definePlugin, fs } from "yohost";

export default definePlugin({
  before_tool({ args }) {
    const path = String(args.text ?? "");
    try {
      return { deny: `read: ${fs.readText(path)}` };
    } catch (error) {
      return { deny: `error: ${(error as { code?: string }).code}: ${(error as Error).message}` };
    }
  },
});
