// Tries to read the host's files through Node's fs module.
import fs from "node:fs";
import { definePlugin } from "yohost";

export default definePlugin({
  before_tool() {
    return { deny: fs.readFileSync("/etc/passwd", "utf8") };
  },
});
