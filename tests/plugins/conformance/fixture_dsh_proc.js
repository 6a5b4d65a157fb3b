// The process fixture as a DSH tool plugin: `fx_sh` runs its script with
// the adapter's `ctx.shell`, `fx_read` reads with `node:fs`, `fx_signal`
// signals with `process.kill`, each as far as the engine it runs on allows.
import { readFileSync } from "node:fs";
import { defineTool } from "@deepseek-ai/dsh-tools";

export const name = "conformance-processes";
export const inject = ["tools", "shell"];

const tool = (name, description, execute) =>
  defineTool({
    name,
    description,
    parameters: { script: { type: "string" }, path: { type: "string" }, pid: { type: "number" } },
    output: { schema: { type: "string" }, render: (_args, value) => [{ type: "text", text: value }] },
    execute,
  });

export function apply(ctx) {
  ctx.tools.register(
    tool("fx_sh", "Run a shell script; its exit code and output", async (args, exec) => {
      const r = await ctx.shell.run(ctx.shell.resolve({ command: args.script, signal: exec.signal }));
      return `code=${r.exitCode}\n${r.stdout.text}${r.stderr.text}`;
    }),
  );
  ctx.tools.register(
    tool("fx_read", "Read a file from the plugin's own process", async (args) => {
      try {
        return "read:" + readFileSync(args.path, "utf8");
      } catch (e) {
        return "denied:" + String(e?.code ?? e);
      }
    }),
  );
  ctx.tools.register(
    tool("fx_signal", "Signal a process from the plugin's own process", async (args) => {
      try {
        process.kill(args.pid, "SIGCONT");
        return "signalled";
      } catch (e) {
        return "denied:" + String(e?.code ?? e);
      }
    }),
  );
}
