// Resolves the flavors' own specifiers (`pi:host`, `dsh:schema`, ...) to
// their files, as the host's module table does, so that `node --test` can
// import a flavor's modules. Preloaded with `node --import`.

import { register } from "node:module";

register(new URL("./flavor_resolve.mjs", import.meta.url));
