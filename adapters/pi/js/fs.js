// `node:fs` (and `fs`): embedded after fs-core.js.

export {
  constants,
  existsSync,
  readFileSync,
  writeFileSync,
  appendFileSync,
  mkdirSync,
  readdirSync,
  statSync,
  accessSync,
  watch,
  promises,
};
export default {
  constants,
  existsSync,
  readFileSync,
  writeFileSync,
  appendFileSync,
  mkdirSync,
  readdirSync,
  statSync,
  accessSync,
  watch,
  promises,
};
