// The `typebox` (and `@sinclair/typebox`) module pi extensions import: a
// `Type` builder whose schemas are plain JSON Schema objects, so a tool's
// `parameters` cross to the host as they are. `Type.Optional` marks a
// property with a symbol, which JSON leaves out; `Type.Object` turns the
// marks into `required`.

const OPTIONAL = Symbol("typebox.optional");

function schema(base, options) {
  return { ...base, ...(options ?? {}) };
}

function literalType(value) {
  if (value === null) return "null";
  return typeof value === "number" && Number.isInteger(value) ? "integer" : typeof value;
}

export const Type = Object.freeze({
  String: (options) => schema({ type: "string" }, options),
  Number: (options) => schema({ type: "number" }, options),
  Integer: (options) => schema({ type: "integer" }, options),
  Boolean: (options) => schema({ type: "boolean" }, options),
  Null: (options) => schema({ type: "null" }, options),
  Any: (options) => schema({}, options),
  Unknown: (options) => schema({}, options),
  Literal: (value, options) => schema({ type: literalType(value), const: value }, options),
  Array: (items, options) => schema({ type: "array", items }, options),
  Tuple: (items, options) =>
    schema({ type: "array", prefixItems: items, minItems: items.length, maxItems: items.length }, options),
  Object(properties, options) {
    const required = Object.keys(properties).filter((key) => !properties[key][OPTIONAL]);
    const base = { type: "object", properties };
    if (required.length > 0) base.required = required;
    return schema(base, options);
  },
  Record: (_key, value, options) => schema({ type: "object", additionalProperties: value }, options),
  Union: (anyOf, options) => schema({ anyOf }, options),
  Intersect: (allOf, options) => schema({ allOf }, options),
  Enum: (values, options) => schema({ enum: Object.values(values) }, options),
  Optional: (inner) => ({ ...inner, [OPTIONAL]: true }),
  Readonly: (inner) => inner,
  Partial(object) {
    const properties = {};
    for (const [key, value] of Object.entries(object.properties ?? {})) {
      properties[key] = { ...value, [OPTIONAL]: true };
    }
    const { required: _required, ...rest } = object;
    return { ...rest, properties };
  },
  Unsafe: (raw) => ({ ...raw }),
});

export default Type;
