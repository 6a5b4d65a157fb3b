// DSH's tool schemas: the author DSL (`ParameterSchemaSpec`,
// `ValueSchemaSpec`) compiled to plain JSON Schema, and values checked
// against the JSON Schema subset DSH enforces (`type`, `properties`,
// `required`, `additionalProperties`, `items`, `enum`, `const`, `oneOf`;
// `anyOf` and `allOf` too, for raw schemas).

const ANNOTATIONS = ["description", "title", "default", "examples"];
const SCALARS = ["string", "number", "integer", "boolean", "null"];
/** How deep a schema or a checked value may nest. */
const MAX_DEPTH = 64;

/** An author schema the DSL does not accept. */
export class JsonSchemaError extends Error {
  constructor(violations) {
    super(`unsupported JSON schema: ${violations.join("; ")}`);
    this.name = "JsonSchemaError";
    this.code = "UNSUPPORTED_SCHEMA";
    this.violations = violations;
  }
}

/** Arguments that do not match a tool's parameters. */
export class ToolArgsError extends Error {
  constructor(violations) {
    super(`invalid arguments: ${violations.join("; ")}`);
    this.name = "ToolArgsError";
    this.code = "INVALID_ARGS";
    this.violations = violations;
  }
}

const isRecord = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const fail = (message) => {
  throw new JsonSchemaError([message]);
};

function annotate(source, target) {
  for (const key of ANNOTATIONS) if (Object.hasOwn(source, key)) target[key] = source[key];
  return target;
}

function allowOnly(source, path, allowed) {
  for (const key of Object.keys(source)) {
    if (!allowed.includes(key)) fail(`${path}.${key} is not supported by the value schema DSL`);
  }
}

function compileProperties(spec, path, depth) {
  if (!isRecord(spec)) fail(`${path} must be an object of value schemas`);
  const properties = {};
  const required = [];
  for (const [key, property] of Object.entries(spec)) {
    if (!isRecord(property)) fail(`${path}.${key} must be a value schema object`);
    if (Object.hasOwn(property, "required")) {
      if (property.required !== true) fail(`${path}.${key}.required must be true when present`);
      required.push(key);
    }
    Object.defineProperty(properties, key, {
      value: compileValue(property, `${path}.${key}`, depth + 1, true),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { properties, required };
}

function compileValue(spec, path, depth, inProperties = false) {
  if (depth > MAX_DEPTH) fail(`${path} nests deeper than ${MAX_DEPTH} levels`);
  if (!isRecord(spec)) fail(`${path} must be a value schema object`);
  const own = [...ANNOTATIONS, ...(inProperties ? ["required"] : [])];
  if (Object.hasOwn(spec, "oneOf")) {
    allowOnly(spec, path, [...own, "oneOf"]);
    if (!Array.isArray(spec.oneOf) || spec.oneOf.length < 2) fail(`${path}.oneOf must be an array of at least two value schemas`);
    return annotate(spec, { oneOf: spec.oneOf.map((branch, i) => compileValue(branch, `${path}.oneOf[${i}]`, depth + 1)) });
  }
  switch (spec.type) {
    case "json":
      allowOnly(spec, path, [...own, "type"]);
      return annotate(spec, {});
    case "object": {
      allowOnly(spec, path, [...own, "type", "properties", "additionalProperties"]);
      if (typeof spec.additionalProperties !== "boolean") fail(`${path}.additionalProperties must be explicitly true or false`);
      const node = annotate(spec, { type: "object" });
      node.additionalProperties = spec.additionalProperties;
      if (Object.hasOwn(spec, "properties")) {
        const { properties, required } = compileProperties(spec.properties, `${path}.properties`, depth);
        node.properties = properties;
        if (required.length > 0) node.required = required;
      }
      return node;
    }
    case "array": {
      allowOnly(spec, path, [...own, "type", "items"]);
      const node = annotate(spec, { type: "array" });
      if (Object.hasOwn(spec, "items")) node.items = compileValue(spec.items, `${path}.items`, depth + 1);
      return node;
    }
    default: {
      if (!SCALARS.includes(spec.type)) fail(`${path}.type must be string/number/integer/boolean/null/array/object/json, or use oneOf`);
      allowOnly(spec, path, [...own, "type", "enum", "const"]);
      const node = annotate(spec, { type: spec.type });
      if (Object.hasOwn(spec, "enum")) {
        if (!Array.isArray(spec.enum) || spec.enum.length === 0) fail(`${path}.enum must be a non-empty array of scalar values`);
        node.enum = [...spec.enum];
      }
      if (Object.hasOwn(spec, "const")) node.const = spec.const;
      return node;
    }
  }
}

/** The JSON Schema of a DSH parameter spec: an open object. */
export function parameterSchemaSpecToJsonSchema(spec) {
  const { properties, required } = compileProperties(spec ?? {}, "parameters", 0);
  return { type: "object", properties, ...(required.length > 0 && { required }) };
}

/** The JSON Schema of a DSH value spec. */
export function valueSchemaSpecToJsonSchema(spec) {
  return compileValue(spec, "schema", 0);
}

function typeMatches(type, value) {
  switch (type) {
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    default:
      return true;
  }
}

const show = (value) => JSON.stringify(value) ?? String(value);
const at = (path) => (path === "" ? "the value" : path);

function check(schema, value, path, out, depth) {
  if (schema === true || schema === undefined || schema === null) return;
  if (schema === false) {
    out.push(`${at(path)} is not allowed`);
    return;
  }
  if (depth > MAX_DEPTH) {
    out.push(`${at(path)} nests deeper than ${MAX_DEPTH} levels`);
    return;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value))) {
      out.push(`${at(path)} must be ${types.join(" or ")}, got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}`);
      return;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) {
    out.push(`${at(path)} must be one of ${schema.enum.map(show).join(", ")}`);
  }
  if (Object.hasOwn(schema, "const") && schema.const !== value && show(schema.const) !== show(value)) {
    out.push(`${at(path)} must be ${show(schema.const)}`);
  }
  if (isRecord(value)) {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    for (const name of Array.isArray(schema.required) ? schema.required : []) {
      if (!Object.hasOwn(value, name)) out.push(`${path === "" ? name : `${path}.${name}`} is required`);
    }
    for (const [name, item] of Object.entries(value)) {
      const where = path === "" ? name : `${path}.${name}`;
      if (Object.hasOwn(properties, name)) check(properties[name], item, where, out, depth + 1);
      else if (schema.additionalProperties === false) out.push(`${where} is not allowed`);
      else if (isRecord(schema.additionalProperties)) check(schema.additionalProperties, item, where, out, depth + 1);
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => check(schema.items, item, `${path}[${i}]`, out, depth + 1));
  }
  const matching = (branches) =>
    branches.filter((branch) => {
      const inner = [];
      check(branch, value, path, inner, depth + 1);
      return inner.length === 0;
    }).length;
  if (Array.isArray(schema.oneOf) && matching(schema.oneOf) !== 1) {
    out.push(`${at(path)} must match exactly one of ${schema.oneOf.length} schemas`);
  }
  if (Array.isArray(schema.anyOf) && matching(schema.anyOf) === 0) {
    out.push(`${at(path)} must match at least one of ${schema.anyOf.length} schemas`);
  }
  if (Array.isArray(schema.allOf)) for (const branch of schema.allOf) check(branch, value, path, out, depth + 1);
}

/** The violations of `value` against JSON Schema `schema`, with paths. */
export function validateJsonSchemaValue(schema, value, path = "value") {
  const out = [];
  check(schema, value, path, out, 0);
  return out;
}

/** The violations of tool arguments `args` against DSH parameter `spec`. */
export function validateArgs(spec, args) {
  return validateJsonSchemaValue(parameterSchemaSpecToJsonSchema(spec), args, "");
}
