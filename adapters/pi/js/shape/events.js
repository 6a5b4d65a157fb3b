// pi's events, by what the host does with them.

// Events whose handlers would rewrite history or the request, or decide
// something the host never does: the extension is refused.
export const REFUSED = {
  context: "it rewrites the messages sent to the model",
  message_end: "it can replace a finished message",
  before_provider_request: "it can replace the provider request",
  before_provider_headers: "it can change the provider request's headers",
  session_before_compact: "it decides how the session is compacted",
  session_before_switch: "it decides whether the session may be switched",
  session_before_fork: "it decides whether the session may be forked",
  session_before_tree: "it decides session tree navigation",
  user_bash: "it runs the user's `!` commands",
};

// Events the host never emits: reported, not refused.
export const SILENT = [
  "resources_discover",
  "model_select",
  "thinking_level_select",
  "session_compact",
  "session_tree",
  "after_provider_response",
];

// yoagent's AgentEvent types, with the pi event each one is shown as.
export const OBSERVED = {
  agentStart: "agent_start",
  agentEnd: "agent_end",
  turnStart: "turn_start",
  turnEnd: "turn_end",
  messageStart: "message_start",
  messageUpdate: "message_update",
  toolExecutionStart: "tool_execution_start",
  toolExecutionUpdate: "tool_execution_update",
  toolExecutionEnd: "tool_execution_end",
};

// Events that become hooks (besides the observed ones).
export const HOOKED = ["tool_call", "tool_result", "input", "before_agent_start", "session_start", "session_shutdown"];
