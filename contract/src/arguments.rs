//! Every hook's argument, and the run a call belongs to.
//!
//! Arguments serialize to objects with `snake_case` fields, the form every
//! engine hands a plugin.

use crate::content::ToolOutputData;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The run a hook call belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunInfo {
    /// Unique per run; every log line of the call carries it.
    pub run_id: String,
    /// The host's label for the run (a session id, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// 0 for a top-level run, 1 for a sub-agent's run, and so on.
    #[serde(default)]
    pub depth: usize,
    /// For a delegated run: the calling run's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// For a delegated run: the tool call that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_by: Option<String>,
}

/// A tool a plugin offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What the model reads about it.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of its arguments (an object schema).
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    /// A human-readable label for UIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The plugin rewrites the model's arguments before it checks them
    /// against `parameters` itself (pi's `prepareArguments`), so the host
    /// hands them over unchecked. A plugin that sets it must check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prepares_arguments: bool,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// `call_tool`'s argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolArgs {
    /// The run.
    pub run: RunInfo,
    /// The tool's name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// The arguments, as the model gave them (after policy rewrites).
    pub args: Value,
}

/// `before_tool`'s argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeforeToolArgs {
    /// The run.
    pub run: RunInfo,
    /// The tool the model wants to run.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// The arguments (as rewritten by plugins earlier in the chain).
    pub args: Value,
    /// What the user is asking for, as yoagent derives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_request: Option<String>,
    /// The text of the user's latest message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_user_text: Option<String>,
}

/// `after_tool`'s argument: the call and its output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AfterToolArgs {
    /// The run.
    pub run: RunInfo,
    /// The tool that ran.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// The arguments it ran with.
    pub args: Value,
    /// Its output, as edited by plugins earlier in the chain.
    pub output: ToolOutputData,
}

/// `before_model`'s argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeforeModelArgs {
    /// The run.
    pub run: RunInfo,
    /// The model id.
    pub model: String,
    /// The names of the tools offered this turn.
    pub tools: Vec<String>,
    /// What the user is asking for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_request: Option<String>,
}

/// `on_input`'s argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnInputArgs {
    /// The run.
    pub run: RunInfo,
    /// Every user text block of the prompt, joined by newlines.
    pub text: String,
}

/// `on_stop`'s argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnStopArgs {
    /// The run.
    pub run: RunInfo,
    /// The text of the model's final answer.
    pub answer: String,
    /// How many times this run was continued already.
    pub continues: usize,
}

/// `on_event`'s argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnEventArgs {
    /// The run.
    pub run: RunInfo,
    /// The event, in yoagent's `AgentEvent` JSON form.
    pub event: Value,
}

/// A command a plugin offers an app's user (`/name args`), outside the
/// model's tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// The name the user types after `/`.
    pub name: String,
    /// What the user reads about it.
    #[serde(default)]
    pub description: String,
}

/// `command`'s argument: which of the plugin's commands, and the rest of
/// the user's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandArgs {
    /// The command's own run (its `run_id` is on its log lines).
    pub run: RunInfo,
    /// The command's name, without the `/`.
    pub name: String,
    /// What the user typed after the name, trimmed.
    #[serde(default)]
    pub args: String,
}

/// `finish`'s argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinishArgs {
    /// The run.
    pub run: RunInfo,
    /// `completed`, `stopped`, `rejected`, `cancelled` or `failed`.
    pub end: String,
    /// Why it stopped or was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
