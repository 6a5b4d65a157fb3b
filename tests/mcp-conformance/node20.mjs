// Lets the MCP conformance suite's CLI load on Node 20: it imports
// `globSync` from `fs` (Node 22) for a command yohost does not run. On a
// Node that has it, nothing is changed. Used as `node --import`.
import fs from "node:fs";
import { register } from "node:module";

if (!fs.globSync) register("./node20_hook.mjs", import.meta.url);
