// How a logged value, or a thrown one, reads: shared by the embedded
// engine's driver (driver.js) and Node's bootstrap (bootstrap.mjs), which
// both include this file. Plain function declarations, no globals.

// A logged value as text: strings as they are, errors described, anything
// else as JSON where it can be.
function show(value) {
  if (typeof value === "string") return value;
  if (value instanceof Error) return describe(value);
  try {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json;
  } catch (_) {
    return String(value);
  }
}

// A thrown value as text: an error's name, message and the first frame of
// its stack; anything else as `threw <value>`. Never throws.
function describe(error) {
  try {
    if (error instanceof Error) {
      const stack = typeof error.stack === "string" ? error.stack : "";
      const at = stack
        .split("\n")
        .map((s) => s.trim())
        .find((s) => s.startsWith("at "));
      return `${error.name}: ${error.message}` + (at ? ` (${at})` : "");
    }
    return "threw " + show(error);
  } catch (_) {
    return "threw a value that cannot be shown";
  }
}
