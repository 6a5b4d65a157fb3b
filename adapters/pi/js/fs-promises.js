// `node:fs/promises` (and `fs/promises`): embedded after fs-core.js.

export const { readFile, writeFile, appendFile, mkdir, readdir, stat, access } = promises;
export { constants };
export default promises;
