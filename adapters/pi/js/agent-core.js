// `@earendil-works/pi-agent-core` (and `@mariozechner/pi-agent-core`): pi's
// agent loop, which yohost does not run (its own agent runs the loop). Its
// exports load, and fail by name when called.

import { PI_ATTRIBUTION } from "@earendil-works/pi-ai";
import { noApp, unavailable } from "pi:shape/refusals";

export const DEFAULT_AGENT_IDENTITY = Object.freeze({ attribution: PI_ATTRIBUTION });

// The rest of pi's surface, which fails by name when called.
export const Agent = unavailable("Agent", noApp);
export const agentLoop = unavailable("agentLoop", noApp);
export const agentLoopContinue = unavailable("agentLoopContinue", noApp);
export const runAgentLoop = unavailable("runAgentLoop", noApp);
export const runAgentLoopContinue = unavailable("runAgentLoopContinue", noApp);
export const runToolCall = unavailable("runToolCall", noApp);
export const setDefaultStreamFn = unavailable("setDefaultStreamFn", noApp);
export const streamProxy = unavailable("streamProxy", noApp);
