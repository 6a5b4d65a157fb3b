// `node:fs` (and `fs`).

import {
  constants,
  existsSync,
  readFileSync,
  writeFileSync,
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  accessSync,
  watch,
  promises,
} from "pi:fs-core";

export {
  constants,
  existsSync,
  readFileSync,
  writeFileSync,
  appendFileSync,
  mkdirSync,
  mkdtempSync,
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
  mkdtempSync,
  readdirSync,
  statSync,
  accessSync,
  watch,
  promises,
};
