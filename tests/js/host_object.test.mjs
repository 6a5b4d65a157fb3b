// The host object is read only through its declared type: every read of
// `globalThis[Symbol.for("yohost.host")]` in the JavaScript the host embeds
// is cast to `YohostHost` (host.d.ts), so tsc checks each use of it.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const ROOT = new URL("../../", import.meta.url);
const FOLDERS = ["host/src/engines/js", "host/src/engines/node", "adapters/pi/js", "adapters/dsh/js"];
const READ = 'globalThis[Symbol.for("yohost.host")]';
const TYPED = `/** @type {YohostHost | undefined} */ (${READ})`;
// The one write: Node's bootstrap installs the (typed) object.
const WRITE = `${READ} = Object.freeze(host);`;

/** The embedded JavaScript files, as paths from the repository's root. */
function sources() {
  return FOLDERS.flatMap((folder) =>
    readdirSync(new URL(folder, ROOT), { recursive: true })
      .map(String)
      .filter((file) => /\.m?js$/.test(file))
      .map((file) => `${folder}/${file}`),
  );
}

test("every read of the host object is cast to its declared type", () => {
  const files = sources();
  assert.ok(files.length > 40, `${files.length} files`);
  const untyped = [];
  let typed = 0;
  for (const file of files) {
    readFileSync(new URL(file, ROOT), "utf8")
      .split("\n")
      .forEach((line, i) => {
        const code = line.trim();
        if (!code.includes(READ) || code.startsWith("//") || code.startsWith("*")) return;
        if (code.includes(TYPED)) typed++;
        else if (!code.startsWith(WRITE)) untyped.push(`${file}:${i + 1}: ${code}`);
      });
  }
  assert.deepEqual(untyped, []);
  assert.ok(typed >= 2, "the typed reads were found");
});
