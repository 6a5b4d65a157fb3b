// The load hook of node20.mjs: in the conformance suite's CLI, the
// `globSync` import from `fs` becomes a function that says it needs Node
// 22, so the rest of the CLI loads.
/**
 * @param {string} url
 * @param {object} context
 * @param {(url: string, context: object) => Promise<{source?: unknown}>} nextLoad
 */
export async function load(url, context, nextLoad) {
  const loaded = await nextLoad(url, context);
  if (!url.includes("/@modelcontextprotocol/conformance/dist/")) return loaded;
  const source = String(loaded.source).replace(
    /import\{([^}]*?)globSync as (\w+),([^}]*)\}from"fs";/,
    (_, before, name, after) =>
      `import{${before}${after}}from"fs";const ${name}=()=>{throw new Error("globSync needs Node 22")};`,
  );
  return { ...loaded, source, shortCircuit: true };
}
