// The services DSH's host injects, on the embedded engine: none besides
// `tools` and `systemPrompt`, which every engine's `ctx` has. A plugin that
// needs `shell`, `fs` or the others runs on Node (`node/services.js`, which
// gives the shape the same `Provided`).

/**
 * What the services module gives the shape: the services by name, and what
 * ends with a run and on unload.
 * @typedef {object} Provided
 * @property {Record<string, unknown>} services
 * @property {(runId: string) => Promise<void>} finishRun
 * @property {() => Promise<void>} dispose
 */

/**
 * No further services, and nothing to end with a run or on unload.
 * @param {unknown} _settings The adapter's settings.
 * @param {string[]} _needed The services the plugin injects.
 * @returns {Promise<Provided>}
 */
export async function provide(_settings, _needed) {
  return { services: {}, finishRun: async () => {}, dispose: async () => {} };
}
