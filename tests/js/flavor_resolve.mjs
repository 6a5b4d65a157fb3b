// The resolve hook flavor_specifiers.mjs registers: `pi:NAME` and
// `dsh:NAME` name `adapters/<flavor>/js/NAME.js` (a folder's `index.js`,
// `dsh:services` the embedded engine's).

import { existsSync } from "node:fs";

const ROOT = new URL("../../", import.meta.url);

export async function resolve(specifier, context, next) {
  const flavor = /^(pi|dsh):(.+)$/.exec(specifier);
  if (flavor === null) return next(specifier, context);
  const [, name, path] = flavor;
  const folder = new URL(`adapters/${name}/js/${path}/index.js`, ROOT);
  const url = existsSync(folder) ? folder : new URL(`adapters/${name}/js/${path}.js`, ROOT);
  return { url: url.href, shortCircuit: true };
}
