// The conformance fixture of the `mcp` row: a stdio MCP server (one JSON-RPC
// message a line, no dependencies) with the protocol's tools only, as
// `suite/tests/conformance/main.rs` describes. `node fixture_mcp.mjs mute`
// never answers `initialize`.
//
// `fx_echo {text}` answers the text, except for the hostile inputs:
// - `hang`: never answers;
// - `spin`: busy-loops (for 2 s, in a worker: the server's own loop goes on
//   answering its other calls) and never answers;
// - `shape`: a result whose `content` is not an array;
// - `oversize`: a result over 16 MiB;
// - `throw`, `error`: a JSON-RPC error (internal, and the server's own),
//   whose message holds fx-secret-7f3a;
// - `flood`: 100,000 `notifications/message`, then the text;
// - `crash`: exits at once, with a word on stderr;
// - `garbage`: lines on its output that are not JSON-RPC, then the text;
// - `progress`: 3 `notifications/progress` for the call's
//   `_meta.progressToken` (none without one), then the text.
// A `notifications/cancelled` it gets is written on its stderr.
import { createInterface } from "node:readline";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";

const SECRET = "fx-secret-7f3a";
// A 1×1 PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
const mute = process.argv.includes("mute");
// Started with `proc`: the process fixture's tools (`fx_sh`, `fx_read`,
// `fx_signal`), acting from the server's own process.
const proc = process.argv.includes("proc");
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
const answer = (id, content, more = {}) => send({ id, result: { content, ...more } });
const text = (t) => ({ type: "text", text: t });
const withText = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
const none = { type: "object", properties: {} };
const tools = [
  { name: "fx_echo", description: "Echo the text", inputSchema: withText },
  { name: "fx_image", description: "A text and a 1x1 PNG", inputSchema: none },
  { name: "fx_bad_image", description: "An SVG image", inputSchema: none },
  { name: "fx_end", description: "Echo the text, asking to end the run", inputSchema: withText },
];
const procArgs = { type: "object", properties: { script: { type: "string" }, path: { type: "string" }, pid: { type: "number" } } };
if (proc) {
  tools.push(
    { name: "fx_sh", description: "Run a shell script; its exit code and output", inputSchema: procArgs },
    { name: "fx_read", description: "Read a file from the server's own process", inputSchema: procArgs },
    { name: "fx_signal", description: "Signal a process from the server's own process", inputSchema: procArgs },
  );
}

function processTool(name, args) {
  if (name === "fx_sh") {
    const r = spawnSync("sh", ["-c", args.script], { encoding: "utf8" });
    return `code=${r.status ?? r.signal}\n${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}`;
  }
  try {
    if (name === "fx_read") return "read:" + readFileSync(args.path, "utf8");
    process.kill(args.pid, "SIGCONT");
    return "signalled";
  } catch (e) {
    return "denied:" + String(e?.code ?? e);
  }
}

function echo(id, t, progressToken) {
  switch (t) {
    case "hang":
      return;
    case "spin":
      new Worker("const end = Date.now() + 2000; while (Date.now() < end) {}", { eval: true });
      return;
    case "shape":
      return send({ id, result: { content: "not a list" } });
    case "oversize":
      return answer(id, [text("x".repeat(17 * 1024 * 1024))]);
    case "throw":
      return send({ id, error: { code: -32603, message: `fx throws: ${SECRET}` } });
    case "error":
      return send({ id, error: { code: -32000, message: `fx error: ${SECRET}` } });
    case "flood":
      for (let i = 0; i < 100_000; i++) {
        send({ method: "notifications/message", params: { level: "info", data: `flood ${i}` } });
      }
      return answer(id, [text(t)]);
    case "crash":
      process.stderr.write("fx: crashing on purpose\n");
      process.exit(3);
    case "progress":
      for (let step = 1; progressToken !== undefined && step <= 3; step++) {
        send({ method: "notifications/progress", params: { progressToken, progress: step, total: 3, message: `step ${step}` } });
      }
      return answer(id, [text(t)]);
    case "garbage":
      process.stdout.write('this is not JSON\n{"jsonrpc": "2.0", "id": "nobody"}\n[1, 2\n');
      return answer(id, [text(t)]);
    default:
      return answer(id, [text(t)]);
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const { id, method, params } = JSON.parse(line);
  if (method === "initialize") {
    if (!mute) {
      send({
        id,
        result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "fx-mcp", version: "1" } },
      });
    }
  } else if (method === "tools/list") {
    send({ id, result: { tools } });
  } else if (method === "ping") {
    send({ id, result: {} });
  } else if (method === "tools/call") {
    const args = params.arguments ?? {};
    if (params.name === "fx_echo") echo(id, args.text, params._meta?.progressToken);
    else if (proc && ["fx_sh", "fx_read", "fx_signal"].includes(params.name))
      answer(id, [text(processTool(params.name, args))]);
    else if (params.name === "fx_image") answer(id, [text("fx image"), { type: "image", data: PNG, mimeType: "image/png" }]);
    else if (params.name === "fx_bad_image") answer(id, [{ type: "image", data: "PHN2Zy8+", mimeType: "image/svg+xml" }]);
    // MCP has no way to end the run: `terminate` here is a field the client ignores.
    else if (params.name === "fx_end") answer(id, [text(args.text)], { terminate: true });
    else send({ id, error: { code: -32602, message: `no tool ${params.name}` } });
  } else if (method === "notifications/cancelled") {
    // What a test of cancellation passed on to the server looks for.
    process.stderr.write(`fx: cancelled request ${params.requestId}\n`);
  } else if (id !== undefined) {
    send({ id, error: { code: -32601, message: `no method ${method}` } });
  }
});
