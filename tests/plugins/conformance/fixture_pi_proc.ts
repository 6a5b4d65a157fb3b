// The process fixture as a pi extension: `fx_sh` starts its process with
// `pi.exec`, `fx_read` reads with `node:fs`, `fx_signal` signals with
// `process.kill`, each as far as the engine it runs on allows.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { readFileSync } from "node:fs";

const PARAMETERS = {
  type: "object",
  properties: { script: { type: "string" }, path: { type: "string" }, pid: { type: "number" } },
};

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }], details: {} });

export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "fx_sh",
    label: "fx_sh",
    description: "Run a shell script; its exit code and output",
    parameters: PARAMETERS,
    async execute(_id, params) {
      const r = await pi.exec("sh", ["-c", params.script]);
      return text(`code=${r.code}\n${r.stdout}${r.stderr}`);
    },
  });
  pi.registerTool({
    name: "fx_read",
    label: "fx_read",
    description: "Read a file from the plugin's own process",
    parameters: PARAMETERS,
    async execute(_id, params) {
      try {
        return text("read:" + readFileSync(params.path, "utf8"));
      } catch (e) {
        return text("denied:" + String((e as { code?: string }).code ?? e));
      }
    },
  });
  pi.registerTool({
    name: "fx_signal",
    label: "fx_signal",
    description: "Signal a process from the plugin's own process",
    parameters: PARAMETERS,
    async execute(_id, params) {
      try {
        process.kill(params.pid, "SIGCONT");
        return text("signalled");
      } catch (e) {
        return text("denied:" + String((e as { code?: string }).code ?? e));
      }
    },
  });
}
