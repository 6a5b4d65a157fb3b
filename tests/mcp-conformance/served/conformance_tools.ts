// The tools the MCP conformance suite's server scenarios call, as a yohost
// TypeScript plugin: `yohost serve` serves this folder to the suite
// (tests/mcp-conformance/server.sh). Each tool answers what its scenario
// expects; a scenario whose content has no shape in a yoagent tool result
// (audio, embedded resources) is in baseline.yml with its reason.
import { definePlugin, defineTool, image, text } from "yohost";

/** A 1×1 red PNG. */
const RED_PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

const NO_ARGUMENTS = { type: "object", properties: {} } as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export default definePlugin({
  name: "conformance_tools",
  tools: [
    defineTool({
      name: "test_simple_text",
      description: "Returns a simple text response",
      parameters: NO_ARGUMENTS,
      run: () => ({ content: [text("This is a simple text response for testing.")] }),
    }),
    defineTool({
      name: "test_image_content",
      description: "Returns a 1x1 red PNG",
      parameters: NO_ARGUMENTS,
      run: () => ({ content: [image(RED_PIXEL, "image/png")] }),
    }),
    defineTool({
      name: "test_multiple_content_types",
      description: "Returns text and an image",
      parameters: NO_ARGUMENTS,
      run: () => ({
        content: [text("Multiple content types test:"), image(RED_PIXEL, "image/png")],
      }),
    }),
    defineTool({
      name: "test_error_handling",
      description: "Always fails",
      parameters: NO_ARGUMENTS,
      run: () => {
        throw new Error("This tool intentionally returns an error for testing");
      },
    }),
    defineTool({
      name: "test_tool_with_logging",
      description: "Logs three lines while it runs",
      parameters: NO_ARGUMENTS,
      run: async (_args, ctx) => {
        ctx.log.info("Tool execution started");
        await sleep(50);
        ctx.log.info("Tool processing data");
        await sleep(50);
        ctx.log.info("Tool execution completed");
        return { content: [text("Logging test completed")] };
      },
    }),
    defineTool({
      name: "test_tool_with_progress",
      description: "Takes a moment",
      parameters: NO_ARGUMENTS,
      run: async () => {
        await sleep(100);
        return { content: [text("Progress test completed")] };
      },
    }),
    defineTool({
      name: "json_schema_2020_12_tool",
      description: "Tool with JSON Schema 2020-12 features",
      parameters: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        $defs: {
          address: {
            type: "object",
            properties: { street: { type: "string" }, city: { type: "string" } },
          },
        },
        properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
        additionalProperties: false,
      },
      run: (args) => ({ content: [text(JSON.stringify(args))] }),
    }),
  ],
});
