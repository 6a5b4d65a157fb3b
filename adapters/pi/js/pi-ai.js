// `@earendil-works/pi-ai` (and `@mariozechner/pi-ai`): what pi extensions
// use of it at run time and the host can honour: typebox's `Type`,
// `StringEnum`, `uuidv7` and `clampThinkingLevel`, and pi's constants. The
// rest (pi's model providers) loads, and fails by name when called.

import { randomBytes } from "node:crypto";
import { settings } from "pi:settings";
import { noProviders, unavailable } from "pi:shape/refusals";

export { Type } from "typebox";

/** A string enum schema (`{type: "string", enum}`), as pi's helper makes it. */
export function StringEnum(values, options) {
  return { type: "string", enum: [...values], ...(options ?? {}) };
}

/** A time-ordered (version 7) UUID, as pi's helper makes it. */
export function uuidv7() {
  const bytes = randomBytes(16);
  let now = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = now % 256;
    now = Math.floor(now / 256);
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The thinking levels pi knows, from none to the most. */
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** The levels `model` supports: "off" alone for a model without reasoning;
 * "xhigh" and "max" only where its `thinkingLevelMap` names them, and no
 * level it maps to `null`. */
function supportedThinkingLevels(model) {
  if (!model?.reasoning) return ["off"];
  return THINKING_LEVELS.filter((level) => {
    const mapped = model.thinkingLevelMap?.[level];
    if (mapped === null) return false;
    return level === "xhigh" || level === "max" ? mapped !== undefined : true;
  });
}

/** `level` if `model` supports it, else the nearest supported level above
 * it, else the nearest below, as pi chooses. */
export function clampThinkingLevel(model, level) {
  const available = supportedThinkingLevels(model);
  if (available.includes(level)) return level;
  const asked = THINKING_LEVELS.indexOf(level);
  if (asked === -1) return available[0] ?? "off";
  const above = THINKING_LEVELS.slice(asked).find((l) => available.includes(l));
  const below = THINKING_LEVELS.slice(0, asked).reverse().find((l) => available.includes(l));
  return above ?? below ?? available[0] ?? "off";
}
export const PI_AI_VERSION = settings.piVersion;
export const PI_ATTRIBUTION = Object.freeze({ name: "pi", url: "https://pi.dev", categories: Object.freeze(["cli-agent"]) });
export const CACHE_WARMING_IDLE_CONTINUATION_PROBABILITY = 0.15;
export const CACHE_WARMING_MAX_AGE_MS = 60 * 60_000;
export const CACHE_WARMING_MAX_IDLE_AGE_MS = 30 * 60_000;
export const CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS = 0.05;
export const DEFAULT_MAX_AGENT_RETRY_DELAY_MS = 60_000;

// The rest of pi's surface, which fails by name when called.
export const AI_TELEMETRY_SCHEMA = unavailable("AI_TELEMETRY_SCHEMA", noProviders);
export const AssistantMessageEventStream = unavailable("AssistantMessageEventStream", noProviders);
export const EventStream = unavailable("EventStream", noProviders);
export const InMemoryCredentialStore = unavailable("InMemoryCredentialStore", noProviders);
export const InMemoryModelsStore = unavailable("InMemoryModelsStore", noProviders);
export const ModelsError = unavailable("ModelsError", noProviders);
export const StreamingJsonParser = unavailable("StreamingJsonParser", noProviders);
export const ToolCallArgumentsStream = unavailable("ToolCallArgumentsStream", noProviders);
export const appendAssistantMessageDiagnostic = unavailable("appendAssistantMessageDiagnostic", noProviders);
export const calculateCost = unavailable("calculateCost", noProviders);
export const cleanupSessionResources = unavailable("cleanupSessionResources", noProviders);
export const clearApiProviders = unavailable("clearApiProviders", noProviders);
export const collapseSystemMessages = unavailable("collapseSystemMessages", noProviders);
export const complete = unavailable("complete", noProviders);
export const completeSimple = unavailable("completeSimple", noProviders);
export const contentText = unavailable("contentText", noProviders);
export const createAssistantMessageDiagnostic = unavailable("createAssistantMessageDiagnostic", noProviders);
export const createAssistantMessageEventStream = unavailable("createAssistantMessageEventStream", noProviders);
export const createFauxCore = unavailable("createFauxCore", noProviders);
export const createInitialSystemMessage = unavailable("createInitialSystemMessage", noProviders);
export const createModels = unavailable("createModels", noProviders);
export const createProvider = unavailable("createProvider", noProviders);
export const declarationsEqual = unavailable("declarationsEqual", noProviders);
export const defaultProviderAuthContext = unavailable("defaultProviderAuthContext", noProviders);
export const envApiKeyAuth = unavailable("envApiKeyAuth", noProviders);
export const evaluateCacheWarming = unavailable("evaluateCacheWarming", noProviders);
export const extractDiagnosticError = unavailable("extractDiagnosticError", noProviders);
export const fauxAssistantMessage = unavailable("fauxAssistantMessage", noProviders);
export const fauxProvider = unavailable("fauxProvider", noProviders);
export const fauxText = unavailable("fauxText", noProviders);
export const fauxThinking = unavailable("fauxThinking", noProviders);
export const fauxToolCall = unavailable("fauxToolCall", noProviders);
export const findEnvKeys = unavailable("findEnvKeys", noProviders);
export const formatThrownValue = unavailable("formatThrownValue", noProviders);
export const formatUserAgent = unavailable("formatUserAgent", noProviders);
export const getApiProvider = unavailable("getApiProvider", noProviders);
export const getApiProviders = unavailable("getApiProviders", noProviders);
export const getAttributionHeaders = unavailable("getAttributionHeaders", noProviders);
export const getCacheWarmingDelayMs = unavailable("getCacheWarmingDelayMs", noProviders);
export const getCacheWarmingRequestOptions = unavailable("getCacheWarmingRequestOptions", noProviders);
export const getClientVersion = unavailable("getClientVersion", noProviders);
export const getCurrentSystemMessage = unavailable("getCurrentSystemMessage", noProviders);
export const getCurrentSystemPrompt = unavailable("getCurrentSystemPrompt", noProviders);
export const getCurrentTools = unavailable("getCurrentTools", noProviders);
export const getDeclaredTools = unavailable("getDeclaredTools", noProviders);
export const getEnvApiKey = unavailable("getEnvApiKey", noProviders);
export const getIdentityHeaders = unavailable("getIdentityHeaders", noProviders);
export const getInitialSystemMessage = unavailable("getInitialSystemMessage", noProviders);
// pi's catalog of providers and models, as the host has it: the host's
// agent talks to the model, so none is listed (as `ctx.modelRegistry`).
export const getModel = () => undefined;
export const getModelType = unavailable("getModelType", noProviders);
export const getModels = () => [];
export const getOpenCodeSessionHeaders = unavailable("getOpenCodeSessionHeaders", noProviders);
export const getOverflowPatterns = unavailable("getOverflowPatterns", noProviders);
export const getPromptCacheTtlMs = unavailable("getPromptCacheTtlMs", noProviders);
export const getProviders = () => [];
export const getSupportedThinkingLevels = unavailable("getSupportedThinkingLevels", noProviders);
export const getSystemMessageText = unavailable("getSystemMessageText", noProviders);
export const getToolStateChanges = unavailable("getToolStateChanges", noProviders);
export const hasApi = unavailable("hasApi", noProviders);
export const hasNonAdditiveToolChanges = unavailable("hasNonAdditiveToolChanges", noProviders);
export const hasToolRedefinitions = unavailable("hasToolRedefinitions", noProviders);
export const isCacheWarmingReplayable = unavailable("isCacheWarmingReplayable", noProviders);
export const isContextOverflow = unavailable("isContextOverflow", noProviders);
export const isModelType = unavailable("isModelType", noProviders);
export const isRecoverableLength = unavailable("isRecoverableLength", noProviders);
export const isRetryableAssistantError = unavailable("isRetryableAssistantError", noProviders);
export const lazyApi = unavailable("lazyApi", noProviders);
export const lazyOAuth = unavailable("lazyOAuth", noProviders);
export const lazyStream = unavailable("lazyStream", noProviders);
export const mergeClientIdentity = unavailable("mergeClientIdentity", noProviders);
export const modelsAreEqual = unavailable("modelsAreEqual", noProviders);
export const normalizeContext = unavailable("normalizeContext", noProviders);
export const parseJsonWithRepair = unavailable("parseJsonWithRepair", noProviders);
export const parseStreamingJson = unavailable("parseStreamingJson", noProviders);
export const parseToolCallArguments = unavailable("parseToolCallArguments", noProviders);
export const registerApiProvider = unavailable("registerApiProvider", noProviders);
export const registerBuiltInApiProviders = unavailable("registerBuiltInApiProviders", noProviders);
export const registerFauxProvider = unavailable("registerFauxProvider", noProviders);
export const registerSessionResourceCleanup = unavailable("registerSessionResourceCleanup", noProviders);
export const renderSystemMessageUpdate = unavailable("renderSystemMessageUpdate", noProviders);
export const repairJson = unavailable("repairJson", noProviders);
export const resetApiProviders = unavailable("resetApiProviders", noProviders);
export const resolveTranscript = unavailable("resolveTranscript", noProviders);
export const resolveTranscriptTools = unavailable("resolveTranscriptTools", noProviders);
export const retryAssistantCall = unavailable("retryAssistantCall", noProviders);
export const retryDelayMs = unavailable("retryDelayMs", noProviders);
export const setBedrockProviderModule = unavailable("setBedrockProviderModule", noProviders);
export const stream = unavailable("stream", noProviders);
export const streamAnthropic = unavailable("streamAnthropic", noProviders);
export const streamAzureOpenAIResponses = unavailable("streamAzureOpenAIResponses", noProviders);
export const streamGoogle = unavailable("streamGoogle", noProviders);
export const streamGoogleVertex = unavailable("streamGoogleVertex", noProviders);
export const streamMistral = unavailable("streamMistral", noProviders);
export const streamOpenAICodexResponses = unavailable("streamOpenAICodexResponses", noProviders);
export const streamOpenAICompletions = unavailable("streamOpenAICompletions", noProviders);
export const streamOpenAIResponses = unavailable("streamOpenAIResponses", noProviders);
export const streamSimple = unavailable("streamSimple", noProviders);
export const streamSimpleAnthropic = unavailable("streamSimpleAnthropic", noProviders);
export const streamSimpleAzureOpenAIResponses = unavailable("streamSimpleAzureOpenAIResponses", noProviders);
export const streamSimpleGoogle = unavailable("streamSimpleGoogle", noProviders);
export const streamSimpleGoogleVertex = unavailable("streamSimpleGoogleVertex", noProviders);
export const streamSimpleMistral = unavailable("streamSimpleMistral", noProviders);
export const streamSimpleOpenAICodexResponses = unavailable("streamSimpleOpenAICodexResponses", noProviders);
export const streamSimpleOpenAICompletions = unavailable("streamSimpleOpenAICompletions", noProviders);
export const streamSimpleOpenAIResponses = unavailable("streamSimpleOpenAIResponses", noProviders);
export const toToolDeclaration = unavailable("toToolDeclaration", noProviders);
export const unregisterApiProviders = unavailable("unregisterApiProviders", noProviders);
export const validateToolArguments = unavailable("validateToolArguments", noProviders);
export const validateToolCall = unavailable("validateToolCall", noProviders);
export const withClientIdentity = unavailable("withClientIdentity", noProviders);
export const withoutInitialSystemMessage = unavailable("withoutInitialSystemMessage", noProviders);
