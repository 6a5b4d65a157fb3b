// `node:fs/promises` (and `fs/promises`).

import { promises } from "pi:fs-core";

export const { constants, readFile, writeFile, appendFile, mkdir, mkdtemp, readdir, stat, lstat, access, unlink, rename, rmdir, rm, watch } = promises;
export default promises;
