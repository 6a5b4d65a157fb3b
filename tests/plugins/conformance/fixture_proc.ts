// The process fixture in yohost's own API, on the Node engine: its tools
// act from the plugin's own process, so the conformance suite can check
// that the kernel holds that process and what it starts to the grants.
import { definePlugin } from "yohost";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const PARAMETERS = {
  type: "object",
  properties: { script: { type: "string" }, path: { type: "string" }, pid: { type: "number" } },
} as const;

export default definePlugin({
  name: "conformance-process-fixture",
  tools: [
    {
      name: "fx_sh",
      description: "Run a shell script; its exit code and output",
      parameters: PARAMETERS,
      run: (args: { script: string }) => {
        const r = spawnSync("sh", ["-c", args.script], { encoding: "utf8" });
        return `code=${r.status ?? r.signal}\n${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}`;
      },
    },
    {
      name: "fx_read",
      description: "Read a file from the plugin's own process",
      parameters: PARAMETERS,
      run: (args: { path: string }) => {
        try {
          return "read:" + readFileSync(args.path, "utf8");
        } catch (e) {
          return "denied:" + String((e as { code?: string }).code ?? e);
        }
      },
    },
    {
      name: "fx_signal",
      description: "Signal a process from the plugin's own process",
      parameters: PARAMETERS,
      run: (args: { pid: number }) => {
        try {
          process.kill(args.pid, "SIGCONT");
          return "signalled";
        } catch (e) {
          return "denied:" + String((e as { code?: string }).code ?? e);
        }
      },
    },
  ],
});
