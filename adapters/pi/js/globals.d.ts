// The Node globals pi's prelude (globals.js) installs before an extension's
// code runs on the embedded engine, typed by their implementations there,
// for the checked JavaScript of the pi flavor. On Node they are Node's own.
// A global script, as the host's host.d.ts is.

declare var Buffer: typeof import("./globals.js").Buffer;
type Buffer = import("./globals.js").Buffer;
declare var TextEncoder: typeof import("./globals.js").TextEncoder;
declare var TextDecoder: typeof import("./globals.js").TextDecoder;
declare var URL: typeof import("./globals.js").URL;
type URL = import("./globals.js").URL;
declare var URLSearchParams: typeof import("./globals.js").URLSearchParams;
declare function queueMicrotask(fn: () => void): void;
