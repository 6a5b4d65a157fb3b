// The `ctx` pi handlers and tools receive, as pi's print mode has it: no
// dialogs, notifications go to the plugin's log, widgets do nothing (set
// while the extension loads, they are reported).

import { uuidv7 } from "@earendil-works/pi-ai";
import { SYSTEM_PROMPT } from "pi:shape/hooks";
import { noHistory, noProviders, unavailable } from "pi:shape/refusals";

const identity = (_style, text) => (text === undefined ? _style : text);
const plain = (t) => t;
const theme = Object.freeze({ fg: identity, bg: identity, bold: plain, italic: plain, underline: plain, strikethrough: plain, inverse: plain, dim: plain });

function makeUi(log, state, warnApp) {
  const quiet = () => {};
  const widget = (what) => () => {
    if (!state.loaded) warnApp(`sets ${what}`);
  };
  return Object.freeze({
    select: async () => undefined,
    confirm: async () => false,
    input: async () => undefined,
    editor: async () => undefined,
    custom: async () => undefined,
    notify(message, type) {
      const at = type === "error" ? log.error : type === "warning" ? log.warn : log.info;
      at(String(message));
    },
    onTerminalInput: () => quiet,
    setStatus: widget("a status line"),
    setWorkingMessage: widget("a working message"),
    setWorkingVisible: quiet,
    setWorkingIndicator: widget("a working indicator"),
    setHiddenThinkingLabel: quiet,
    setWidget: widget("a UI widget"),
    setFooter: widget("a footer"),
    setHeader: widget("a header"),
    setTitle: widget("the terminal title"),
    pasteToEditor: quiet,
    setEditorText: quiet,
    getEditorText: () => "",
    addAutocompleteProvider: quiet,
    setEditorComponent: widget("an editor component"),
    getEditorComponent: () => undefined,
    theme,
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "UI not available" }),
    getToolsExpanded: () => false,
    setToolsExpanded: quiet,
  });
}

// pi's session as print mode without a session file has it (`--no-session`,
// pi's in-memory session): an id and a header, no session folder, and of
// its entries the ones the extension appended (`pi.appendEntry`), since the
// host never shows its history.
function makeSessionManager(cwd, entries) {
  const id = uuidv7();
  const header = Object.freeze({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd });
  return Object.freeze({
    getCwd: () => cwd,
    getSessionDir: () => "",
    getSessionId: () => id,
    getSessionFile: () => undefined,
    getSessionName: () => undefined,
    getHeader: () => header,
    // The entries the extension appended (`pi.appendEntry`): the session
    // has one branch, theirs.
    getEntries: () => entries.all(),
    getBranch: () => entries.all(),
    getTree: () => entries.all().map((entry) => ({ entry, children: [] })),
    getLeafId: () => entries.last()?.id ?? null,
    getLeafEntry: () => entries.last(),
    getEntry: (entryId) => entries.get(entryId),
    getLabel: () => undefined,
    buildContextEntries: () => [],
    buildSessionProjection: () => ({ entries: entries.all(), messages: [], thinkingLevel: "off", model: null }),
  });
}

// pi's model registry: the host's agent talks to the model, so no model is
// registered here, and what would reach a provider fails by name.
const registryUnsupported = [
  "applyProviderConfig", "authStorage", "classify", "complete", "findOfType", "generateImages", "getApiKeyAndHeaders",
  "getApiKeyForProvider", "getAvailableOfType", "getModelOfType", "getModelRequestKey", "getModelsOfType", "getProvider",
  "getProviderAuth", "getProviderAuthStatus", "getRegisteredNativeProvider", "getRegisteredProviderConfig", "loadBuiltInModels",
  "loadCustomModels", "loadModels", "mergeCustomModels", "modelRequestHeaders", "parseModels", "refresh", "registerProvider",
  "registerVirtualModel", "runtime", "storeModelHeaders", "storeProviderRequestConfig", "stream", "streamSimple",
  "unregisterProvider", "unregisterVirtualModel", "upsertRegisteredProvider", "validateConfig", "validateProviderConfig",
];
const modelRegistry = Object.freeze({
  find: () => undefined,
  getAll: () => [],
  getAvailable: () => [],
  getError: () => undefined,
  loadError: undefined,
  models: Object.freeze([]),
  modelsJsonPath: undefined,
  providerRequestConfigs: Object.freeze({}),
  registeredProviders: Object.freeze({}),
  getRegisteredProviderIds: () => [],
  getProviderDisplayName: (provider) => String(provider),
  hasConfiguredAuth: () => false,
  isUsingOAuth: () => false,
  ...Object.fromEntries(registryUnsupported.map((name) => [name, unavailable(`ctx.modelRegistry.${name}`, noProviders)])),
});

/**
 * `makeCtx(call)`: pi's `ctx` over the engine's per-call `ctx` (`null` while
 * the extension loads or unloads). `ctx.signal` is the call's signal, which
 * aborts when the host gives up on the call.
 * @param {Partial<YohostHost>} host
 */
export function contexts(host, state, warnApp) {
  const sessionManager = makeSessionManager(host.cwd ?? "/", state.entries);
  return function makeCtx(call) {
    const log = call?.log ?? console;
    return Object.freeze({
      hasUI: false,
      mode: "print",
      ui: makeUi(log, state, warnApp),
      cwd: host.cwd ?? "/",
      signal: call?.signal,
      sessionManager,
      model: undefined,
      scopedModels: Object.freeze([]),
      thinkingLevel: undefined,
      isProjectTrusted: () => false,
      modelRegistry,
      isIdle: () => !call,
      hasPendingMessages: () => false,
      getContextUsage: () => undefined,
      abort: unavailable("ctx.abort", "a plugin cannot cancel the host's run"),
      shutdown: unavailable("ctx.shutdown", "a plugin cannot stop the host"),
      compact: unavailable("ctx.compact", noHistory),
      getSystemPrompt: () => SYSTEM_PROMPT,
    });
  };
}
