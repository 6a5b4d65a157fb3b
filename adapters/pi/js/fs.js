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
  promises,
};
