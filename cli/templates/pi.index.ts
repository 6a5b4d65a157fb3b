// {{name}}: a pi extension, loaded by yohost's pi adapter as it is.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.on("tool_call", (event) => {
    const command = String((event.input as { command?: unknown }).command ?? "");
    if (event.toolName === "bash" && command.includes("rm -rf")) {
      return { block: true, reason: "{{name}}: `rm -rf` is not allowed" };
    }
    return undefined;
  });
}
