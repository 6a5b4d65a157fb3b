// The services DSH's host injects, on the embedded engine: none besides
// `tools` and `systemPrompt`, which every engine's `ctx` has. A plugin that
// needs `shell`, `fs` or the others runs on Node (`node/services.js`).

/** No further services, and nothing to end with a run or on unload. */
export async function provide() {
  return { services: {}, finishRun: async () => {}, dispose: async () => {} };
}
