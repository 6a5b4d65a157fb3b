// yohost's own prelude (`yohost:globals`): the web's `fetch`, with
// `Headers`, `Request` and `Response` (fetch.js), for plugins on the
// embedded engine, which has none. A request reaches only the hosts
// `capabilities.network` grants; without the grant, `fetch` rejects naming
// it. On Node the engine's own are kept. Nothing else is added to the
// global object.

import { fetch, Headers, Request, Response } from "yohost:fetch";

/** Install the globals the engine lacks. */
export default function installGlobals() {
  const globals = { fetch, Headers, Request, Response };
  for (const [name, value] of Object.entries(globals)) {
    if (globalThis[name] === undefined) globalThis[name] = value;
  }
}
