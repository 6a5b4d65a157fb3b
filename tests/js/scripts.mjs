// Loads the host's JavaScript that is a script of function declarations
// (describe.js, hook_calls.js, node/files.js) the way the host uses it:
// concatenated, in strict mode, inside one function. Returns the named
// declarations.

import { readFileSync } from "node:fs";

const ROOT = new URL("../../", import.meta.url);

/**
 * The declarations `names` of the concatenated `files` (paths from the
 * repository's root), with `scope`'s values in scope by their names.
 * @param {string[]} files
 * @param {string[]} names
 * @param {Record<string, unknown>} [scope]
 * @returns {Record<string, any>}
 */
export function declarations(files, names, scope = {}) {
  const source = files.map((file) => readFileSync(new URL(file, ROOT), "utf8")).join("\n");
  const body = `"use strict";\n${source}\nreturn { ${names.join(", ")} };`;
  return new Function(...Object.keys(scope), body)(...Object.values(scope));
}

/** The text of `file` (a path from the repository's root). */
export function text(file) {
  return readFileSync(new URL(file, ROOT), "utf8");
}
