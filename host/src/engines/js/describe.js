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
      return `${error.name}: ${error.message}` + denied(error) + (at ? ` (${at})` : "");
    }
    return "threw " + show(error);
  } catch (_) {
    return "threw a value that cannot be shown";
  }
}

// What Node's permission model denied (`ERR_ACCESS_DENIED`, whose message
// names neither), and the grant of plugin.toml that would allow it; empty
// for any other error.
function denied(error) {
  if (error.code !== "ERR_ACCESS_DENIED") return "";
  const keys = { FileSystemRead: "read", FileSystemWrite: "write" };
  const key = keys[error.permission];
  const resource = typeof error.resource === "string" ? error.resource : "";
  if (key && resource) {
    return `: ${key === "read" ? "reading" : "writing"} ${resource}, which no grant covers (grant it under [capabilities] in plugin.toml: \`${key} = [${JSON.stringify(resource)}]\`, the folder made first)`;
  }
  if (error.permission === "ChildProcess") return ": starting a process (grant `exec = true` under [capabilities] in plugin.toml)";
  return error.permission ? `: ${error.permission}` : "";
}
