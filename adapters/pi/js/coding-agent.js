// `@earendil-works/pi-coding-agent` (and `@mariozechner/pi-coding-agent`):
// the runtime helpers pi extensions import that the host can honour. Its
// types (`ExtensionAPI`, ...) vanish when types are stripped. Anything else
// imported from it at run time (TUI components, tool factories, session
// helpers) is not here, and the plugin is refused naming it.

/** A tool definition, unchanged (a typed identity helper in pi). */
export function defineTool(tool) {
  return tool;
}

/** Whether a `tool_call` event is for the tool `name` (pi's names: `bash`, `read`, ...). */
export function isToolCallEventType(name, event) {
  return event?.toolName === name;
}

const resultOf = (name) => (event) => event?.toolName === name;
export const isBashToolResult = resultOf("bash");
export const isReadToolResult = resultOf("read");
export const isWriteToolResult = resultOf("write");
export const isEditToolResult = resultOf("edit");
export const isGrepToolResult = resultOf("grep");
export const isFindToolResult = resultOf("find");
export const isLsToolResult = resultOf("ls");

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;

function utf8Length(text) {
  let bytes = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** A byte count as pi shows it: `512B`, `1.5KB`, `2.0MB`. */
export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

// Keep whole lines from one end of `content` within both limits.
function truncate(content, options, fromEnd) {
  const maxLines = options?.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options?.maxBytes ?? DEFAULT_MAX_BYTES;
  const lines = content.split("\n");
  const totalBytes = utf8Length(content);
  const ordered = fromEnd ? [...lines].reverse() : lines;
  const kept = [];
  let bytes = 0;
  let truncatedBy = null;
  for (const line of ordered) {
    if (kept.length >= maxLines) {
      truncatedBy = "lines";
      break;
    }
    const cost = utf8Length(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    kept.push(line);
    bytes += cost;
  }
  const output = (fromEnd ? kept.reverse() : kept).join("\n");
  return {
    content: output,
    truncated: truncatedBy !== null,
    truncatedBy,
    totalLines: lines.length,
    totalBytes,
    outputLines: kept.length,
    outputBytes: utf8Length(output),
    lastLinePartial: false,
    firstLineExceedsLimit: kept.length === 0 && lines.length > 0 && truncatedBy === "bytes",
    maxLines,
    maxBytes,
  };
}

/** The first lines of `content` within `maxLines` and `maxBytes`. */
export function truncateHead(content, options) {
  return truncate(content, options, false);
}

/** The last lines of `content` within `maxLines` and `maxBytes`. */
export function truncateTail(content, options) {
  return truncate(content, options, true);
}

/** One line cut to `maxChars` characters, with an ellipsis. */
export function truncateLine(line, maxChars = 500) {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}

const queues = new Map();

/** Run `work` after every earlier mutation queued on `path` has finished. */
export function withFileMutationQueue(path, work) {
  const previous = queues.get(path) ?? Promise.resolve();
  const next = previous.then(() => work());
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  queues.set(path, settled);
  settled.then(() => {
    if (queues.get(path) === settled) queues.delete(path);
  });
  return next;
}
