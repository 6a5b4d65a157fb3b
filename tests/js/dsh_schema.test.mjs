// DSH's parameter specs become JSON Schema, and arguments are checked
// against them (adapters/dsh/js/schema.js).

import assert from "node:assert/strict";
import { test } from "node:test";
import { JsonSchemaError, parameterSchemaSpecToJsonSchema, validateArgs } from "dsh:schema";

test("a parameter spec is an object schema with its required names", () => {
  const schema = parameterSchemaSpecToJsonSchema({ path: { type: "string", required: true }, depth: { type: "integer" } });
  assert.equal(schema.type, "object");
  assert.deepEqual(Object.keys(schema.properties), ["path", "depth"]);
  assert.deepEqual(schema.required, ["path"]);
});

test("arguments that do not match are named by path", () => {
  const spec = { path: { type: "string", required: true }, depth: { type: "integer" } };
  assert.deepEqual(validateArgs(spec, { path: "a", depth: 2 }), []);
  const wrong = validateArgs(spec, { depth: 1.5 });
  assert.ok(wrong.length >= 2, JSON.stringify(wrong));
  assert.ok(wrong.some((line) => line.includes("path")), JSON.stringify(wrong));
});

test("a spec with an unknown type is refused", () => {
  assert.throws(() => parameterSchemaSpecToJsonSchema({ x: { type: "date" } }), JsonSchemaError);
});
