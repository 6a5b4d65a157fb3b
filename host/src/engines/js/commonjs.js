// The host's CommonJS runtime (see commonjs.rs). Definition modules register
// each CommonJS file here; a file runs on its first `require` (or when an ES
// module imports its facade), once, as Node runs it.
const defined = new Map();
const cache = new Map();

function notFound(message) {
  return Object.assign(new Error(message), { code: "MODULE_NOT_FOUND" });
}

// Register CommonJS file `name`: `requires` maps each `require` specifier to
// `{commonjs: name}`, `{module: index into namespaces}` or `{missing: message}`.
export function define(name, requires, namespaces, source) {
  if (!defined.has(name)) defined.set(name, { requires, namespaces, source });
}

// Register JSON file `name`.
export function defineJson(name, text) {
  if (!defined.has(name)) defined.set(name, { json: text });
}

function dirname(name) {
  const at = name.lastIndexOf("/");
  return at < 0 ? "/" : "/" + name.slice(0, at);
}

// `module.exports` of CommonJS file `name`, running it the first time.
export function load(name) {
  const cached = cache.get(name);
  if (cached !== undefined) return cached.exports;
  const definition = defined.get(name);
  if (definition === undefined) throw notFound(`Cannot find module '${name}'`);
  const module = { exports: {}, id: "/" + name, filename: "/" + name, loaded: false, children: [] };
  cache.set(name, module);
  if (definition.json !== undefined) {
    try {
      module.exports = JSON.parse(definition.json);
    } catch (e) {
      cache.delete(name);
      throw new SyntaxError(`/${name}: ${e.message}`);
    }
    module.loaded = true;
    return module.exports;
  }
  const require = function require(specifier) {
    const target = Object.hasOwn(definition.requires, specifier) ? definition.requires[specifier] : undefined;
    if (target === undefined) {
      throw notFound(`Cannot find module '${specifier}' from '/${name}': only require("...") calls with a literal specifier, found when the plugin loads, can be served`);
    }
    if (target.missing !== undefined) throw notFound(target.missing);
    if (target.module !== undefined) return definition.namespaces[target.module];
    return load(target.commonjs);
  };
  module.require = require;
  // Sloppy mode, as Node runs CommonJS: the function is built from source.
  const run = Function("exports", "require", "module", "__filename", "__dirname", definition.source);
  try {
    run.call(module.exports, module.exports, require, module, "/" + name, dirname(name));
  } catch (e) {
    cache.delete(name);
    throw e;
  }
  module.loaded = true;
  return module.exports;
}

// `require` in an ES module (host/src/engines/js/esm_require.rs): what
// `specifier` names among the namespaces the module imported for its
// literal `require` calls (`served`, specifier → namespace): the module's
// default where it has one (a CommonJS module's `module.exports`, a
// built-in's object), else the namespace.
export function requireIn(specifier, served) {
  const namespace = Object.hasOwn(served, specifier) ? served[specifier] : undefined;
  if (namespace === undefined) {
    throw notFound(`Cannot find module '${specifier}': only require("...") calls with a literal specifier, found when the plugin loads, can be served`);
  }
  return namespace.default !== undefined ? namespace.default : namespace;
}
