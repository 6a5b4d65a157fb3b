// The resolve hook flavor_specifiers.mjs registers: `pi:NAME` and
// `dsh:NAME` name `adapters/<flavor>/js/NAME.js` (a folder's `index.js`,
// `dsh:services` the embedded engine's), and `dsh:services/NAME` the Node
// services' `adapters/dsh/js/node/NAME.js`, as the DSH adapter serves them;
// `yohost:NAME` the host's own `host/src/engines/js/NAME.js`.

import { existsSync } from "node:fs";

const ROOT = new URL("../../", import.meta.url);

export async function resolve(specifier, context, next) {
  const own = /^yohost:(.+)$/.exec(specifier);
  if (own !== null) return { url: new URL(`host/src/engines/js/${own[1]}.js`, ROOT).href, shortCircuit: true };
  const flavor = /^(pi|dsh):(.+)$/.exec(specifier);
  if (flavor === null) return next(specifier, context);
  const [, name, path] = flavor;
  const service = /^services\/(.+)$/.exec(path);
  if (name === "dsh" && service !== null) {
    return { url: new URL(`adapters/dsh/js/node/${service[1]}.js`, ROOT).href, shortCircuit: true };
  }
  const folder = new URL(`adapters/${name}/js/${path}/index.js`, ROOT);
  const url = existsSync(folder) ? folder : new URL(`adapters/${name}/js/${path}.js`, ROOT);
  return { url: url.href, shortCircuit: true };
}
