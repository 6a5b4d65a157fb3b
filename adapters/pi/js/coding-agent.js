// `@earendil-works/pi-coding-agent` (and `@mariozechner/pi-coding-agent`):
// the runtime helpers pi extensions import that the host can honour, pi's
// constants, and its UI helpers as components that render nothing. Its
// types (`ExtensionAPI`, ...) vanish when types are stripped. The rest of
// its exports (pi's app: sessions, settings, its TUI components) load, and
// fail by name when called. The tool factories (`createBashTool`, ...) are
// in `pi:tools`.

import { Component, Editor } from "@earendil-works/pi-tui";
import { settings } from "pi:settings";
import { noApp, noHistory, noTerminal, unavailable } from "pi:shape/refusals";

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

/**
 * pi's own install folder: the host runs no pi, so a folder of the
 * adapter's per-user one that holds nothing and is never made (what an
 * extension allows or reads there is nothing).
 */
export function getPackageDir() {
  return `${settings.agentDir}/pi-package`;
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

export const convertToLlm = unavailable("convertToLlm", noHistory);
export const serializeConversation = unavailable("serializeConversation", noHistory);
export const CURRENT_SESSION_VERSION = 3;
export const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";
export const DEFAULT_COMPACTION_SETTINGS = Object.freeze({ enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 });

// The rest of pi's surface, which fails by name when called.
export const AgentSession = unavailable("AgentSession", noApp);
export const AgentSessionRuntime = unavailable("AgentSessionRuntime", noApp);
export const ArminComponent = unavailable("ArminComponent", noTerminal);
export const AssistantMessageComponent = unavailable("AssistantMessageComponent", noTerminal);
export const AuthStorage = unavailable("AuthStorage", noApp);
export const BashExecutionComponent = unavailable("BashExecutionComponent", noTerminal);
export const BranchSummaryMessageComponent = unavailable("BranchSummaryMessageComponent", noTerminal);
export const CompactionSummaryMessageComponent = unavailable("CompactionSummaryMessageComponent", noTerminal);
export const CredentialSynchronizationError = unavailable("CredentialSynchronizationError", noApp);
export const CustomMessageComponent = unavailable("CustomMessageComponent", noTerminal);
export const DefaultPackageManager = unavailable("DefaultPackageManager", noApp);
export const DefaultResourceLoader = unavailable("DefaultResourceLoader", noApp);
export const ExtensionEditorComponent = unavailable("ExtensionEditorComponent", noTerminal);
export const ExtensionInputComponent = unavailable("ExtensionInputComponent", noTerminal);
export const ExtensionRunner = unavailable("ExtensionRunner", noApp);
export const ExtensionSelectorComponent = unavailable("ExtensionSelectorComponent", noTerminal);
export const FileAuthStorageBackend = unavailable("FileAuthStorageBackend", noApp);
export const FooterComponent = unavailable("FooterComponent", noTerminal);
export const InMemoryAuthStorageBackend = unavailable("InMemoryAuthStorageBackend", noApp);
export const InteractiveMode = unavailable("InteractiveMode", noTerminal);
export const KeybindingsManager = unavailable("KeybindingsManager", noTerminal);
export const LoginDialogComponent = unavailable("LoginDialogComponent", noTerminal);
export const ModelRegistry = unavailable("ModelRegistry", noApp);
export const ModelRuntime = unavailable("ModelRuntime", noApp);
export const ModelSelectorComponent = unavailable("ModelSelectorComponent", noTerminal);
export const OAuthSelectorComponent = unavailable("OAuthSelectorComponent", noTerminal);
export const ProjectTrustStore = unavailable("ProjectTrustStore", noApp);
export const RpcClient = unavailable("RpcClient", noApp);
export const SessionManager = unavailable("SessionManager", noApp);
export const SessionSelectorComponent = unavailable("SessionSelectorComponent", noTerminal);
export { SettingsManager } from "pi:settings-manager";
export const SettingsSelectorComponent = unavailable("SettingsSelectorComponent", noTerminal);
export const ShowImagesSelectorComponent = unavailable("ShowImagesSelectorComponent", noTerminal);
export const SkillInvocationMessageComponent = unavailable("SkillInvocationMessageComponent", noTerminal);
export const Theme = unavailable("Theme", noTerminal);
export const ThemeSelectorComponent = unavailable("ThemeSelectorComponent", noTerminal);
export const ThinkingSelectorComponent = unavailable("ThinkingSelectorComponent", noTerminal);
export const ToolExecutionComponent = unavailable("ToolExecutionComponent", noTerminal);
export const TreeSelectorComponent = unavailable("TreeSelectorComponent", noTerminal);
export const UserMessageComponent = unavailable("UserMessageComponent", noTerminal);
export const UserMessageSelectorComponent = unavailable("UserMessageSelectorComponent", noTerminal);
export const buildContextEntries = unavailable("buildContextEntries", noApp);
export const buildSessionContext = unavailable("buildSessionContext", noApp);
export const buildSessionProjection = unavailable("buildSessionProjection", noApp);
export const calculateContextTokens = unavailable("calculateContextTokens", noApp);
export const collectEntriesForBranchSummary = unavailable("collectEntriesForBranchSummary", noApp);
export const compact = unavailable("compact", noApp);
export const convertToPng = unavailable("convertToPng", noTerminal);
export const copyToClipboard = unavailable("copyToClipboard", noTerminal);
export const createAgentSession = unavailable("createAgentSession", noApp);
export const createAgentSessionFromServices = unavailable("createAgentSessionFromServices", noApp);
export const createAgentSessionRuntime = unavailable("createAgentSessionRuntime", noApp);
export const createAgentSessionServices = unavailable("createAgentSessionServices", noApp);
export const createCodemodeExtension = unavailable("createCodemodeExtension", noApp);
export const createCodingTools = unavailable("createCodingTools", noApp);
export const createEventBus = unavailable("createEventBus", noApp);
export const createExtensionRuntime = unavailable("createExtensionRuntime", noApp);
export const createLocalBashOperations = unavailable("createLocalBashOperations", noApp);
export const createLocalPowerShellOperations = unavailable("createLocalPowerShellOperations", noApp);
export const createMcpExtension = unavailable("createMcpExtension", noApp);
export const createPowerShellTool = unavailable("createPowerShellTool", noApp);
export const createPowerShellToolDefinition = unavailable("createPowerShellToolDefinition", noApp);
export const createReadOnlyTools = unavailable("createReadOnlyTools", noApp);
export const createSyntheticSourceInfo = unavailable("createSyntheticSourceInfo", noApp);
export const createToolSearchExtension = unavailable("createToolSearchExtension", noApp);
export const detectSupportedImageMimeTypeFromFile = unavailable("detectSupportedImageMimeTypeFromFile", noApp);
export const discoverAndLoadExtensions = unavailable("discoverAndLoadExtensions", noApp);
export const estimateTokens = unavailable("estimateTokens", noApp);
export const findCutPoint = unavailable("findCutPoint", noApp);
export const findTurnStartIndex = unavailable("findTurnStartIndex", noApp);
export const formatDimensionNote = unavailable("formatDimensionNote", noApp);
export const formatSkillsForPrompt = unavailable("formatSkillsForPrompt", noApp);
export const generateBranchSummary = unavailable("generateBranchSummary", noApp);
export const generateDiffString = unavailable("generateDiffString", noApp);
export const generateSummary = unavailable("generateSummary", noApp);
export const generateSummaryWithUsage = unavailable("generateSummaryWithUsage", noApp);
export const generateUnifiedPatch = unavailable("generateUnifiedPatch", noApp);
export const getDocsPath = unavailable("getDocsPath", noApp);
export const getExamplesPath = unavailable("getExamplesPath", noApp);
export const getLanguageFromPath = unavailable("getLanguageFromPath", noTerminal);
export const getLastAssistantUsage = unavailable("getLastAssistantUsage", noApp);
export const getLatestCompactionEntry = unavailable("getLatestCompactionEntry", noApp);
export const getPowerShellConfig = unavailable("getPowerShellConfig", noApp);
export const getReadmePath = unavailable("getReadmePath", noApp);
export const getShellConfig = unavailable("getShellConfig", noApp);
export const hasTrustRequiringProjectResources = unavailable("hasTrustRequiringProjectResources", noApp);
export const highlightCode = unavailable("highlightCode", noTerminal);
export const initTheme = unavailable("initTheme", noTerminal);
export const isPowerShellToolResult = unavailable("isPowerShellToolResult", noApp);
export const loadProjectContextFiles = unavailable("loadProjectContextFiles", noApp);
export const loadSkills = unavailable("loadSkills", noApp);
export const loadSkillsFromDir = unavailable("loadSkillsFromDir", noApp);
export const main = unavailable("main", noApp);
export const migrateSessionEntries = unavailable("migrateSessionEntries", noApp);
export const parseArgs = unavailable("parseArgs", noApp);
export const parseSessionEntries = unavailable("parseSessionEntries", noApp);
export const parseSkillBlock = unavailable("parseSkillBlock", noApp);
export const prepareBranchEntries = unavailable("prepareBranchEntries", noApp);
export const readStoredCredential = unavailable("readStoredCredential", noApp);
export const renderDiff = unavailable("renderDiff", noTerminal);
export const resizeImage = unavailable("resizeImage", noTerminal);
export const resolveCliModel = unavailable("resolveCliModel", noApp);
export const resolveModelScopeWithDiagnostics = unavailable("resolveModelScopeWithDiagnostics", noApp);
export const runPrintMode = unavailable("runPrintMode", noApp);
export const runRpcMode = unavailable("runRpcMode", noApp);
export const sessionEntryToContextMessages = unavailable("sessionEntryToContextMessages", noApp);
export const shouldCompact = unavailable("shouldCompact", noApp);
export const truncateToVisualLines = unavailable("truncateToVisualLines", noTerminal);
export const wrapRegisteredTool = unavailable("wrapRegisteredTool", noApp);
export const wrapRegisteredTools = unavailable("wrapRegisteredTools", noApp);
