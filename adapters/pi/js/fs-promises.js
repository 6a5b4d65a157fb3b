// `node:fs/promises` (and `fs/promises`).

import { constants, promises } from "pi:fs-core";

export const { readFile, writeFile, appendFile, mkdir, mkdtemp, readdir, stat, access } = promises;
export { constants };
export default promises;
