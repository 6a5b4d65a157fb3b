// A local MCP server over stdio for the tests, in plain JSON-RPC (one JSON
// message per line, as MCP's stdio transport frames them). It offers one
// tool, `echo`, which answers `echo: <text>`. It never touches the network.
import { createInterface } from "node:readline";

const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");

const tool = {
  name: "echo",
  description: "Echo a text back",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
  },
};

createInterface({ input: process.stdin }).on("line", (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params } = request;
  if (id === undefined) return; // a notification
  switch (method) {
    case "initialize":
      return send({
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "echo-fixture", version: "1.0.0" },
        },
      });
    case "tools/list":
      return send({ id, result: { tools: [tool] } });
    case "tools/call":
      if (params?.name !== "echo") {
        return send({ id, error: { code: -32602, message: `unknown tool ${params?.name}` } });
      }
      return send({
        id,
        result: { content: [{ type: "text", text: `echo: ${params.arguments?.text ?? ""}` }] },
      });
    case "ping":
      return send({ id, result: {} });
    default:
      return send({ id, result: {} });
  }
});
