// `@earendil-works/pi-ai` (and `@mariozechner/pi-ai`): what pi extensions
// use of it at run time and the host can honour: typebox's `Type`,
// `StringEnum`, `uuidv7` and `clampThinkingLevel`.

import { randomBytes } from "node:crypto";

export { Type } from "typebox";

/** A string enum schema (`{type: "string", enum}`), as pi's helper makes it. */
export function StringEnum(values, options) {
  return { type: "string", enum: [...values], ...(options ?? {}) };
}

/** A time-ordered (version 7) UUID, as pi's helper makes it. */
export function uuidv7() {
  const bytes = randomBytes(16);
  let now = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = now % 256;
    now = Math.floor(now / 256);
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The thinking levels pi knows, from none to the most. */
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** The levels `model` supports: "off" alone for a model without reasoning;
 * "xhigh" and "max" only where its `thinkingLevelMap` names them, and no
 * level it maps to `null`. */
function supportedThinkingLevels(model) {
  if (!model?.reasoning) return ["off"];
  return THINKING_LEVELS.filter((level) => {
    const mapped = model.thinkingLevelMap?.[level];
    if (mapped === null) return false;
    return level === "xhigh" || level === "max" ? mapped !== undefined : true;
  });
}

/** `level` if `model` supports it, else the nearest supported level above
 * it, else the nearest below, as pi chooses. */
export function clampThinkingLevel(model, level) {
  const available = supportedThinkingLevels(model);
  if (available.includes(level)) return level;
  const asked = THINKING_LEVELS.indexOf(level);
  if (asked === -1) return available[0] ?? "off";
  const above = THINKING_LEVELS.slice(asked).find((l) => available.includes(l));
  const below = THINKING_LEVELS.slice(0, asked).reverse().find((l) => available.includes(l));
  return above ?? below ?? available[0] ?? "off";
}
