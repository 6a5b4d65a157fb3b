// pi's `SettingsManager`, as a host with no settings file of pi's has it:
// every setting at pi's default (`undefined` where pi has none), and what an
// extension sets kept in memory for it, never written (pi's `inMemory`).

/** pi's defaults for the settings extensions read. */
const DEFAULTS = {
  getSteeringMode: "one-at-a-time",
  getFollowUpMode: "one-at-a-time",
  getCompactionEnabled: true,
  getRetryEnabled: true,
  getHideThinkingBlock: false,
  getShowCacheMissNotices: false,
  getCollapseChangelog: false,
  getEnableInstallTelemetry: false,
  getEnableAnalytics: false,
  getBranchSummarySkipPrompt: false,
  isProjectTrusted: false,
};

/** Lists and tables: a fresh empty one each time. */
const EMPTY = {
  getPackages: () => [],
  getExtensionPaths: () => [],
  getAllModelThinkingLevels: () => ({}),
  getSettings: () => ({}),
  getGlobalSettings: () => ({}),
  getProjectSettings: () => ({}),
  drainErrors: () => [],
};

// A getter's setting: `getShellPath` and `setShellPath` share `ShellPath`,
// `isProjectTrusted` and `setProjectTrusted` share `ProjectTrusted`.
const setting = (name) => name.replace(/^(get|set|is)/, "");

export class SettingsManager {
  static create() {
    return new SettingsManager();
  }

  static inMemory(settings) {
    const manager = new SettingsManager();
    /** @type {any} */ (manager).applyOverrides(settings ?? {});
    return manager;
  }

  static fromStorage() {
    return new SettingsManager();
  }

  constructor() {
    const values = new Map();
    return new Proxy(this, {
      get(target, name) {
        if (typeof name !== "string" || name in target) return Reflect.get(target, name);
        if (name in EMPTY) return EMPTY[name];
        if (name === "reload" || name === "flush") return async () => {};
        if (name === "applyOverrides") {
          return (overrides) => {
            for (const [key, value] of Object.entries(overrides ?? {})) values.set(key[0].toUpperCase() + key.slice(1), value);
          };
        }
        if (name.startsWith("set")) return (value) => void values.set(setting(name), value);
        if (name.startsWith("get") || name.startsWith("is")) {
          return () => (values.has(setting(name)) ? values.get(setting(name)) : DEFAULTS[name]);
        }
        return undefined;
      },
    });
  }
}
