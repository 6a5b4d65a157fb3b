// pi's events, by what the host does with them.

import refused from "pi:shape/refused";

// Events whose handlers would rewrite history or the request, or decide
// something the host never does: the extension is refused. The table
// (`refused.json`) is shared with the adapter's Rust side, which names
// these even when an import stops the load first.
export const REFUSED = refused.events;

// Events the host never emits: reported, not refused. A handler of one of
// them never runs, so it can decide nothing: not a compaction, switch,
// fork or tree move of the session (the host keeps no session to move),
// nor the user's `!` commands (there is no user to type them).
export const SILENT = [
  "session_before_compact",
  "session_before_switch",
  "session_before_fork",
  "session_before_tree",
  "user_bash",
  "resources_discover",
  "model_select",
  "thinking_level_select",
  "session_compact",
  "session_tree",
  "after_provider_response",
  "provider_stream_event",
  "project_trust",
  "session_info_changed",
  "session_compact_failed",
  "mcp_servers_change",
  "agent_settled",
  "ui_prompt_start",
  "ui_prompt_end",
];

// yoagent's AgentEvent types, with the pi event each one is shown as.
export const OBSERVED = {
  agentStart: "agent_start",
  turnStart: "turn_start",
  turnEnd: "turn_end",
  messageStart: "message_start",
  messageUpdate: "message_update",
  toolExecutionStart: "tool_execution_start",
  toolExecutionUpdate: "tool_execution_update",
  toolExecutionEnd: "tool_execution_end",
};

// Events that become hooks (besides the observed ones). yoagent shows its
// `agentEnd` to no plugin (the run is over by then): `agent_end` runs at
// the run's `finish`, with the messages the run ended (`messageEnd`).
export const HOOKED = ["tool_call", "tool_result", "input", "before_agent_start", "session_start", "session_shutdown", "agent_end"];
