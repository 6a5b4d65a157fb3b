// The `ctx` pi handlers, tools and commands receive. Headless, as pi's
// print mode has it: no dialogs, notifications go to the plugin's log. When
// the host gives the call the app's user interface (`call.ui`), dialogs and
// notifications go to it, as in pi's interactive mode. Widgets do nothing
// (set while the extension loads, they are reported).

import { uuidv7 } from "@earendil-works/pi-ai";
import { SYSTEM_PROMPT } from "pi:shape/hooks";
import { noHistory, noProviders, noSession, unavailable } from "pi:shape/refusals";

const identity = (_style, text) => (text === undefined ? _style : text);
const plain = (t) => t;
const theme = Object.freeze({ fg: identity, bg: identity, bold: plain, italic: plain, underline: plain, strikethrough: plain, inverse: plain, dim: plain });

// pi's dialogs over the app's user interface `ask` (`null`: headless).
// A dialog's `signal` or `timeout` ends it unanswered, as in pi.
function dialogs(ask, log) {
  const dialog = (request, unanswered, options) => {
    if (ask === null || options?.signal?.aborted) return Promise.resolve(unanswered);
    const ends = [ask(request)];
    if (options?.signal) ends.push(new Promise((resolve) => options.signal.addEventListener("abort", () => resolve(unanswered), { once: true })));
    if (options?.timeout > 0) ends.push(new Promise((resolve) => setTimeout(() => resolve(unanswered), options.timeout)));
    return Promise.race(ends).then((answer) => answer ?? unanswered);
  };
  const text = (value) => (value === undefined || value === null ? undefined : String(value));
  return {
    select: (title, options, opts) => dialog({ kind: "select", title: String(title ?? ""), options: (Array.isArray(options) ? options : []).map(String) }, undefined, opts),
    confirm: (title, message, opts) => dialog({ kind: "confirm", title: String(title ?? ""), message: String(message ?? "") }, false, opts).then(Boolean),
    input: (title, placeholder, opts) => dialog({ kind: "input", title: String(title ?? ""), placeholder: text(placeholder) }, undefined, opts),
    editor: (title, prefill) => dialog({ kind: "editor", title: String(title ?? ""), prefill: text(prefill) }, undefined),
    notify(message, type) {
      const level = type === "error" ? "error" : type === "warning" ? "warning" : "info";
      if (ask !== null) {
        ask({ kind: "notify", message: String(message), level }).catch(() => {});
        return;
      }
      const at = level === "error" ? log.error : level === "warning" ? log.warn : log.info;
      at(String(message));
    },
  };
}

function makeUi(log, state, warnApp, ask) {
  const quiet = () => {};
  const widget = (what) => () => {
    if (!state.loaded) warnApp(`sets ${what}`);
  };
  return Object.freeze({
    ...dialogs(ask, log),
    custom: async () => undefined,
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
  "getAvailableOfType", "getModelOfType", "getModelRequestKey", "getModelsOfType", "getProvider",
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
  // The host keeps no provider keys.
  getApiKeyForProvider: async () => undefined,
  isUsingOAuth: () => false,
  ...Object.fromEntries(registryUnsupported.map((name) => [name, unavailable(`ctx.modelRegistry.${name}`, noProviders)])),
});

// What pi's command `ctx` adds: the host runs no session a command could
// replace, fork or reload.
const commandActions = Object.freeze({
  waitForIdle: async () => {},
  getSystemPromptOptions: () => ({ cwd: "", selectedTools: [], sections: {}, promptGuidelines: [] }),
  newSession: unavailable("ctx.newSession", noSession),
  fork: unavailable("ctx.fork", noSession),
  navigateTree: unavailable("ctx.navigateTree", noSession),
  switchSession: unavailable("ctx.switchSession", noSession),
  reload: unavailable("ctx.reload", "the host reloads a plugin when its files change"),
});

/**
 * `makeCtx(call, {command})`: pi's `ctx` over the engine's per-call `ctx`
 * (`null` while the extension loads or unloads); a command's has pi's
 * command actions. `ctx.signal` is the call's signal, which aborts when the
 * host gives up on the call. `hasUI` is true when the host gave the call
 * the app's user interface.
 * @param {Partial<YohostHost>} host
 */
export function contexts(host, state, warnApp) {
  const sessionManager = makeSessionManager(host.cwd ?? "/", state.entries);
  return function makeCtx(call, kind) {
    const log = call?.log ?? console;
    if (call) state.latestCall = call;
    const ask = typeof call?.ui === "function" ? call.ui : null;
    return Object.freeze({
      hasUI: ask !== null,
      mode: ask !== null ? "interactive" : "print",
      ui: makeUi(log, state, warnApp, ask),
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
      ...(kind?.command && commandActions),
    });
  };
}
