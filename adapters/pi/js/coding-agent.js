// `@earendil-works/pi-coding-agent` (and `@mariozechner/pi-coding-agent`):
// the runtime helpers pi extensions import that the host can honour, pi's
// constants, and its UI helpers as components that render nothing. Its
// types (`ExtensionAPI`, ...) vanish when types are stripped. Anything else
// imported from it at run time (session helpers) is not here, and the
// plugin is refused naming it. The tool factories (`createBashTool`, ...)
// are in `pi:tools`.

import { Component, Editor } from "@earendil-works/pi-tui";
import { settings } from "pi:settings";

export {
  createBashToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
  createEditToolDefinition,
  createLsToolDefinition,
  createFindToolDefinition,
  createGrepToolDefinition,
  createBashTool,
  createReadTool,
  createWriteTool,
  createEditTool,
  createLsTool,
  createFindTool,
  createGrepTool,
} from "pi:tools";

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

// --- pi's constants and runtime helpers ------------------------------------

/** The pi version whose extension API the adapter follows. */
export const VERSION = settings.piVersion;
/** The name of pi's per-project folder (`.pi`). */
export const CONFIG_DIR_NAME = ".pi";

/** The extension's per-user folder: a yohost one, not pi's (`~/.pi/agent`). */
export function getAgentDir() {
  return settings.agentDir;
}

/** `":start-end"` for a read of `limit` lines from line `offset`, as pi shows it. */
export function formatReadLineRange(offset, limit) {
  const number = (value) => {
    if (typeof value === "string" && value.trim() !== "") value = Number(value);
    return typeof value === "number" && Number.isFinite(value) ? value : undefined;
  };
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : number(offset);
  if (start === undefined) return "";
  if (limit == null) return `:${start}`;
  const count = number(limit);
  if (count === undefined) return "";
  const end = start + count - 1;
  return `:${start}${end ? `-${end}` : ""}`;
}

// A YAML scalar: quoted strings, numbers, booleans, null, inline lists.
function scalar(text) {
  const value = text.trim();
  if (value === "" || value === "~" || value === "null") return null;
  if (value === "true") return true;
  if (value === "false") return false;
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (/^(["']).*\1$/.test(value)) return value.slice(1, -1);
  if (value.startsWith("[") && value.endsWith("]")) {
    const inner = value.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map(scalar);
  }
  return value;
}

/**
 * A Markdown file's front matter and body, as pi's helper splits them. The
 * front matter is the simple YAML pi's own files use: `key: value` lines,
 * and lists of `- item` lines under a key.
 */
export function parseFrontmatter(content) {
  const text = String(content).replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const end = text.startsWith("---") ? text.indexOf("\n---", 3) : -1;
  if (end === -1) return { frontmatter: {}, body: text };
  const frontmatter = {};
  let list = null;
  for (const line of text.slice(4, end).split("\n")) {
    const item = /^\s+-\s*(.*)$/.exec(line) ?? (list && /^-\s*(.*)$/.exec(line));
    if (item && list) {
      list.push(scalar(item[1]));
      continue;
    }
    const pair = /^([^:#\s][^:]*):\s*(.*)$/.exec(line);
    if (!pair) continue;
    const key = pair[1].trim();
    if (pair[2].trim() === "") {
      list = frontmatter[key] = [];
    } else {
      list = null;
      frontmatter[key] = scalar(pair[2]);
    }
  }
  for (const [key, value] of Object.entries(frontmatter)) {
    if (Array.isArray(value) && value.length === 0) frontmatter[key] = null;
  }
  return { frontmatter, body: text.slice(end + 4).trim() };
}

/** A Markdown file's body, without its front matter. */
export const stripFrontmatter = (content) => parseFrontmatter(content).body;

// --- pi's UI helpers: components that render nothing -------------------------

export class CustomEditor extends Editor {}
export class BorderedLoader extends Component {
  constructor(...args) {
    super(...args);
    this.signal = new AbortController().signal;
    this.onAbort = undefined;
  }
}
export class DynamicBorder extends Component {}

const plainTheme = () =>
  new Proxy(Object.create(null), {
    get: (_t, name) => (name === Symbol.toPrimitive ? undefined : (text) => (typeof text === "string" ? text : "")),
  });
/** A theme whose every style leaves text as it is. */
export const getMarkdownTheme = plainTheme;
export const getSelectListTheme = plainTheme;
export const getSettingsListTheme = plainTheme;

/** A key hint as pi shows it, as plain text. */
export const keyHint = (key, description) => (description ? `${key} ${description}` : String(key));
export const rawKeyHint = keyHint;
export const keyText = (key) => String(key);

// --- history helpers a plugin cannot use here --------------------------------

const noHistory = (name) => () => {
  throw new Error(`${name} is not available in yohost: the host never shows or rewrites a run's history`);
};
export const convertToLlm = noHistory("convertToLlm");
export const serializeConversation = noHistory("serializeConversation");
