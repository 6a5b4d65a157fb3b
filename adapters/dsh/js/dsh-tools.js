// `@deepseek-ai/dsh-tools` for DSH tool plugins: `defineTool` and the schema
// helpers. A definition's `parameters` and `output.schema` are compiled to
// JSON Schema here; the adapter's registry validates arguments against them
// before `execute`, and values before `render`.

import {
  JsonSchemaError,
  ToolArgsError,
  parameterSchemaSpecToJsonSchema,
  validateArgs,
  validateJsonSchemaValue,
  valueSchemaSpecToJsonSchema,
} from "dsh:schema";

export { JsonSchemaError, ToolArgsError, parameterSchemaSpecToJsonSchema, validateArgs, validateJsonSchemaValue, valueSchemaSpecToJsonSchema };

/** The error code of a call cancelled after its body started. */
export const TOOL_ABORTED = "ABORTED";
/** The error code of a call cancelled before its body started. */
export const TOOL_ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH";

/** A registry-ready tool definition from DSH's typed authoring form. */
export function defineTool(options) {
  if (options === null || typeof options !== "object") throw new TypeError("defineTool needs a definition object");
  if (options.timeoutMs !== undefined && (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0)) {
    throw new Error(`defineTool(${options.name}): timeoutMs must be a positive finite number`);
  }
  if (options.output === null || typeof options.output !== "object" || typeof options.output.render !== "function") {
    throw new TypeError(`defineTool(${options.name}): \`output\` needs a \`schema\` and a \`render\` function`);
  }
  const tool = {
    ...options,
    parameters: parameterSchemaSpecToJsonSchema(options.parameters),
    output: { ...options.output, schema: valueSchemaSpecToJsonSchema(options.output.schema) },
  };
  return Object.freeze(tool);
}
