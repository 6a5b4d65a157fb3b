// The `typebox/value` module pi extensions import: `Check` and `Errors`
// over the JSON Schema the `typebox` module builds (and the schemas MCP
// servers advertise). The keywords checked: `type` (one or a list;
// `integer`), `const`, `enum`, `properties`, `required`,
// `additionalProperties`, `items`, `prefixItems`, `minItems`, `maxItems`,
// `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`,
// `exclusiveMinimum`, `exclusiveMaximum`, `anyOf`, `oneOf`, `allOf`, `not`.
// A schema that uses any other keyword (`$ref`, `uniqueItems`, …) fails
// every check, naming the keyword: a value is never taken as valid against
// a rule this module did not check. Annotations (`description`, `title`,
// `default`, `examples`, `format`, `$schema`, `$id`, `$defs`, and
// typebox's own `~` keys) are not rules.

const ANNOTATIONS = new Set([
  "description", "title", "default", "examples", "format", "$schema", "$id", "$comment", "$defs", "definitions",
  "readOnly", "writeOnly", "deprecated",
]);
const CHECKED = new Set([
  "type", "const", "enum", "properties", "required", "additionalProperties", "items", "prefixItems",
  "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
  "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf", "not",
]);

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isType(value, type) {
  switch (type) {
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    default:
      return typeOf(value) === type;
  }
}

function equal(a, b) {
  if (a === b) return true;
  if (typeOf(a) !== typeOf(b) || typeof a !== "object" || a === null) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((item, i) => equal(item, b[i]));
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && equal(a[key], b[key]));
}

function pointer(path, key) {
  return `${path}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

// Every error of `value` against `schema`, at `path`, into `out`.
function visit(schema, value, path, out) {
  const fail = (keyword, message) => out.push({ keyword, instancePath: path, message });
  if (schema === true || schema === undefined) return;
  if (schema === false) return fail("false", "no value is allowed here");
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return fail("schema", "the schema is not an object");
  }
  for (const key of Object.keys(schema)) {
    if (!CHECKED.has(key) && !ANNOTATIONS.has(key) && !key.startsWith("~")) {
      fail(key, `the keyword \`${key}\` is not checked here`);
    }
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => isType(value, type))) return fail("type", `must be ${types.join(" or ")}`);
  }
  if ("const" in schema && !equal(value, schema.const)) fail("const", `must be ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.some((item) => equal(value, item))) {
    fail("enum", `must be one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) fail("minLength", `must have at least ${schema.minLength} characters`);
    if (typeof schema.maxLength === "number" && length > schema.maxLength) fail("maxLength", `must have at most ${schema.maxLength} characters`);
    if (typeof schema.pattern === "string") {
      let matches = false;
      try {
        matches = new RegExp(schema.pattern, "u").test(value);
      } catch (_) {
        // A pattern that does not compile matches nothing.
      }
      if (!matches) fail("pattern", `must match ${schema.pattern}`);
    }
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) fail("minimum", `must be >= ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) fail("maximum", `must be <= ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) fail("exclusiveMinimum", `must be > ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) fail("exclusiveMaximum", `must be < ${schema.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) fail("minItems", `must have at least ${schema.minItems} items`);
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) fail("maxItems", `must have at most ${schema.maxItems} items`);
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    value.forEach((item, i) => {
      if (i < prefix.length) visit(prefix[i], item, pointer(path, i), out);
      else if (schema.items !== undefined) visit(schema.items, item, pointer(path, i), out);
    });
  }
  if (typeOf(value) === "object") {
    const properties = schema.properties ?? {};
    for (const key of Array.isArray(schema.required) ? schema.required : []) {
      if (!Object.hasOwn(value, key)) fail("required", `must have property '${key}'`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (Object.hasOwn(properties, key)) visit(properties[key], item, pointer(path, key), out);
      else if (schema.additionalProperties !== undefined) visit(schema.additionalProperties, item, pointer(path, key), out);
    }
  }
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) visit(part, value, path, out);
  const passing = (parts) => parts.filter((part) => errors(part, value, path).length === 0).length;
  if (Array.isArray(schema.anyOf) && passing(schema.anyOf) === 0) fail("anyOf", "must match a schema in anyOf");
  if (Array.isArray(schema.oneOf) && passing(schema.oneOf) !== 1) fail("oneOf", "must match exactly one schema in oneOf");
  if (schema.not !== undefined && errors(schema.not, value, path).length === 0) fail("not", "must not be valid");
}

function errors(schema, value, path = "") {
  const out = [];
  visit(schema, value, path, out);
  return out;
}

// typebox's forms: `(schema, value)` and `(context, schema, value)`.
function operands(args) {
  return args.length >= 3 ? [args[1], args[2]] : [args[0], args[1]];
}

/** Whether `value` matches `schema`. */
export function Check(...args) {
  const [schema, value] = operands(args);
  return errors(schema, value).length === 0;
}

/** The ways `value` does not match `schema`: `{keyword, instancePath, message}`. */
export function Errors(...args) {
  const [schema, value] = operands(args);
  return errors(schema, value);
}

export const Value = Object.freeze({ Check, Errors });
export default Value;
