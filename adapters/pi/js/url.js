// `node:url` (and `url`) for pi extensions: file URLs to paths and back.

export function fileURLToPath(url) {
  const href = typeof url === "string" ? url : String(url?.href ?? url);
  if (!href.startsWith("file://")) {
    const hint = url === undefined ? " (the host does not set import.meta.url)" : "";
    throw new TypeError(`fileURLToPath needs a file: URL, got ${href}${hint}`);
  }
  return decodeURIComponent(href.slice("file://".length).replace(/^[^/]*/, ""));
}

export function pathToFileURL(path) {
  const href = "file://" + encodeURI(path).replace(/[?#]/g, encodeURIComponent);
  return { href, protocol: "file:", pathname: href.slice("file://".length), toString: () => href };
}

export default { fileURLToPath, pathToFileURL };
