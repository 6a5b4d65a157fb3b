//! Every hook's argument and reply.
//!
//! Arguments serialize to objects with `snake_case` fields. Replies are read
//! with [`HookCall::parse_reply`] (or each reply's `from_json`), which accepts
//! exactly the shapes of the contract and nothing else. Typed calls go
//! through [`HookKind`](crate::HookKind).

use crate::content::{ContentBlock, ToolOutputData};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

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

/// A reply that does not fit its hook's contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyError {
    /// The hook whose reply it was.
    pub hook: Hook,
    /// What is wrong with it.
    pub problem: String,
}

impl std::fmt::Display for ReplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} returned a reply the host cannot use: {}",
            self.hook, self.problem
        )
    }
}

impl std::error::Error for ReplyError {}

/// The hooks of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    /// Tools to offer for a run.
    Tools,
    /// Run one of the plugin's tools.
    CallTool,
    /// Judge a tool call: allow, deny or rewrite.
    BeforeTool,
    /// Filter a tool call's output.
    AfterTool,
    /// Add a note before a model request, or stop the run.
    BeforeModel,
    /// Judge a prompted run's input.
    OnInput,
    /// Verify the model's final answer.
    OnStop,
    /// Observe an event.
    OnEvent,
    /// The run ended.
    Finish,
}

impl Hook {
    /// Every hook, in contract order.
    pub const ALL: [Hook; 9] = [
        Hook::Tools,
        Hook::CallTool,
        Hook::BeforeTool,
        Hook::AfterTool,
        Hook::BeforeModel,
        Hook::OnInput,
        Hook::OnStop,
        Hook::OnEvent,
        Hook::Finish,
    ];

    /// The hook's name in the contract (`before_tool`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::Tools => "tools",
            Hook::CallTool => "call_tool",
            Hook::BeforeTool => "before_tool",
            Hook::AfterTool => "after_tool",
            Hook::BeforeModel => "before_model",
            Hook::OnInput => "on_input",
            Hook::OnStop => "on_stop",
            Hook::OnEvent => "on_event",
            Hook::Finish => "finish",
        }
    }

    /// The hook with this contract name.
    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// How long a call may take unless the plugin's manifest says otherwise:
    /// 10 s for the hooks that guard a call or a run's input and answer,
    /// 5 s for the rest, 300 s for `call_tool`.
    pub fn default_timeout(self) -> Duration {
        match self {
            Hook::BeforeTool | Hook::AfterTool | Hook::OnInput | Hook::OnStop => {
                Duration::from_secs(10)
            }
            Hook::Tools | Hook::BeforeModel | Hook::OnEvent | Hook::Finish => {
                Duration::from_secs(5)
            }
            Hook::CallTool => Duration::from_secs(300),
        }
    }
}

impl std::fmt::Display for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One hook call: which hook, with its argument.
#[derive(Debug, Clone, PartialEq)]
pub enum HookCall {
    /// `tools`.
    Tools(RunInfo),
    /// `call_tool`.
    CallTool(CallToolArgs),
    /// `before_tool`.
    BeforeTool(BeforeToolArgs),
    /// `after_tool`.
    AfterTool(AfterToolArgs),
    /// `before_model`.
    BeforeModel(BeforeModelArgs),
    /// `on_input`.
    OnInput(OnInputArgs),
    /// `on_stop`.
    OnStop(OnStopArgs),
    /// `on_event`.
    OnEvent(OnEventArgs),
    /// `finish`.
    Finish(FinishArgs),
}

impl HookCall {
    /// Which hook this calls.
    pub fn hook(&self) -> Hook {
        match self {
            HookCall::Tools(_) => Hook::Tools,
            HookCall::CallTool(_) => Hook::CallTool,
            HookCall::BeforeTool(_) => Hook::BeforeTool,
            HookCall::AfterTool(_) => Hook::AfterTool,
            HookCall::BeforeModel(_) => Hook::BeforeModel,
            HookCall::OnInput(_) => Hook::OnInput,
            HookCall::OnStop(_) => Hook::OnStop,
            HookCall::OnEvent(_) => Hook::OnEvent,
            HookCall::Finish(_) => Hook::Finish,
        }
    }

    /// The run the call belongs to.
    pub fn run(&self) -> &RunInfo {
        match self {
            HookCall::Tools(run) => run,
            HookCall::CallTool(a) => &a.run,
            HookCall::BeforeTool(a) => &a.run,
            HookCall::AfterTool(a) => &a.run,
            HookCall::BeforeModel(a) => &a.run,
            HookCall::OnInput(a) => &a.run,
            HookCall::OnStop(a) => &a.run,
            HookCall::OnEvent(a) => &a.run,
            HookCall::Finish(a) => &a.run,
        }
    }

    /// The id of the tool call the hook is about (`call_tool`,
    /// `before_tool` and `after_tool`).
    pub fn call_id(&self) -> Option<&str> {
        match self {
            HookCall::CallTool(a) => Some(&a.call_id),
            HookCall::BeforeTool(a) => Some(&a.call_id),
            HookCall::AfterTool(a) => Some(&a.call_id),
            _ => None,
        }
    }

    /// The argument as a JSON value (for `tools`, the run itself).
    pub fn args_json(&self) -> Value {
        // These types hold only strings, numbers and JSON values: serializing
        // them cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Read a plugin's JSON reply to this call, strictly, with the parser of
    /// the call's own hook ([`HookKind::parse`](crate::HookKind::parse)), so
    /// the reply is always this hook's kind.
    pub fn parse_reply(&self, reply: Value) -> Result<HookReply, ReplyError> {
        use crate::kind::{self, parse_as};
        match self.hook() {
            Hook::Tools => parse_as::<kind::Tools>(reply),
            Hook::CallTool => parse_as::<kind::CallTool>(reply),
            Hook::BeforeTool => parse_as::<kind::BeforeTool>(reply),
            Hook::AfterTool => parse_as::<kind::AfterTool>(reply),
            Hook::BeforeModel => parse_as::<kind::BeforeModel>(reply),
            Hook::OnInput => parse_as::<kind::OnInput>(reply),
            Hook::OnStop => parse_as::<kind::OnStop>(reply),
            Hook::OnEvent => parse_as::<kind::OnEvent>(reply),
            Hook::Finish => parse_as::<kind::Finish>(reply),
        }
    }
}

/// A call serializes as its argument alone (for `tools`, the run).
impl Serialize for HookCall {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            HookCall::Tools(run) => run.serialize(serializer),
            HookCall::CallTool(a) => a.serialize(serializer),
            HookCall::BeforeTool(a) => a.serialize(serializer),
            HookCall::AfterTool(a) => a.serialize(serializer),
            HookCall::BeforeModel(a) => a.serialize(serializer),
            HookCall::OnInput(a) => a.serialize(serializer),
            HookCall::OnStop(a) => a.serialize(serializer),
            HookCall::OnEvent(a) => a.serialize(serializer),
            HookCall::Finish(a) => a.serialize(serializer),
        }
    }
}

/// A typed reply, one variant per hook (`on_event` and `finish` replies are
/// ignored).
#[derive(Debug, Clone, PartialEq)]
pub enum HookReply {
    /// `tools`.
    Tools(Vec<ToolSpec>),
    /// `call_tool`.
    CallTool(ToolReply),
    /// `before_tool`.
    BeforeTool(BeforeToolReply),
    /// `after_tool`.
    AfterTool(AfterToolReply),
    /// `before_model`.
    BeforeModel(BeforeModelReply),
    /// `on_input`.
    OnInput(OnInputReply),
    /// `on_stop`.
    OnStop(OnStopReply),
    /// `on_event` and `finish`.
    Ignored,
}

impl HookReply {
    /// The reply in its contract JSON form (what a plugin would return).
    pub fn to_json(&self) -> Value {
        match self {
            HookReply::Tools(tools) => serde_json::to_value(tools).unwrap_or(Value::Null),
            HookReply::CallTool(r) => r.to_json(),
            HookReply::BeforeTool(r) => r.to_json(),
            HookReply::AfterTool(r) => r.to_json(),
            HookReply::BeforeModel(r) => r.to_json(),
            HookReply::OnInput(r) => r.to_json(),
            HookReply::OnStop(r) => r.to_json(),
            HookReply::Ignored => Value::Null,
        }
    }
}

/// A tool's result: `"text"`, or `{content, details?, is_error?, terminate?}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolReply {
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Structured details for apps.
    pub details: Value,
    /// Whether the tool failed.
    pub is_error: bool,
    /// End the run once this turn's tools are done, before the next model
    /// request, when every result of the turn asks it (pi's `terminate`).
    pub terminate: bool,
}

impl ToolReply {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            details: Value::Null,
            is_error: false,
            terminate: false,
        }
    }

    /// A failed result with this message.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(text)
        }
    }

    /// Read `"text"` or `{content, details?, is_error?, terminate?}`.
    pub fn from_json(reply: Value) -> Result<Self, String> {
        match reply {
            Value::String(text) => Ok(Self::text(text)),
            Value::Object(map) => {
                let mut map = only_fields(map, &["content", "details", "is_error", "terminate"])?;
                let content = match map.remove("content") {
                    Some(content) => content_from(content)?,
                    None => return Err("a tool result object needs `content`".into()),
                };
                Ok(Self {
                    content,
                    details: map.remove("details").unwrap_or(Value::Null),
                    is_error: bool_field(&mut map, "is_error")?.unwrap_or(false),
                    terminate: bool_field(&mut map, "terminate")?.unwrap_or(false),
                })
            }
            other => Err(format!(
                "expected a string or {{content, details?, is_error?, terminate?}}, got {}",
                kind(&other)
            )),
        }
    }

    /// `{content, details, is_error}`, and `terminate` when it is set.
    pub fn to_json(&self) -> Value {
        let mut json = serde_json::json!({
            "content": self.content,
            "details": self.details,
            "is_error": self.is_error,
        });
        if self.terminate {
            json["terminate"] = Value::Bool(true);
        }
        json
    }
}

/// `before_tool`'s verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolReply {
    /// `null`: let the call run.
    Allow,
    /// `{deny: reason}`: block it; the model sees the reason (the host
    /// refuses a blank one as a bad reply).
    Deny(String),
    /// `{args: {...}}`: run it with these arguments instead.
    Rewrite(Value),
}

impl BeforeToolReply {
    /// Read `null`, `{deny}` or `{args}`.
    pub fn from_json(reply: Value) -> Result<Self, String> {
        match one_of(reply, &["deny", "args"])? {
            None => Ok(Self::Allow),
            Some(("deny", reason)) => Ok(Self::Deny(string_value("deny", reason)?)),
            Some((_, args)) if args.is_object() => Ok(Self::Rewrite(args)),
            Some((_, args)) => Err(format!("`args` must be an object, got {}", kind(&args))),
        }
    }

    /// The contract JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Allow => Value::Null,
            Self::Deny(reason) => serde_json::json!({ "deny": reason }),
            Self::Rewrite(args) => serde_json::json!({ "args": args }),
        }
    }
}

/// `after_tool`'s edit: each field given replaces the output's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AfterToolReply {
    /// New content.
    pub content: Option<Vec<ContentBlock>>,
    /// New details.
    pub details: Option<Value>,
    /// New error flag.
    pub is_error: Option<bool>,
}

impl AfterToolReply {
    /// Read `null` or `{content?, details?, is_error?}`.
    pub fn from_json(reply: Value) -> Result<Self, String> {
        match reply {
            Value::Null => Ok(Self::default()),
            Value::Object(map) => {
                let mut map = only_fields(map, &["content", "details", "is_error"])?;
                Ok(Self {
                    content: map.remove("content").map(content_from).transpose()?,
                    details: map.remove("details"),
                    is_error: bool_field(&mut map, "is_error")?,
                })
            }
            other => Err(format!(
                "expected null or {{content?, details?, is_error?}}, got {}",
                kind(&other)
            )),
        }
    }

    /// Apply the edit to an output.
    pub fn apply(self, output: &mut ToolOutputData) {
        if let Some(content) = self.content {
            output.content = content;
        }
        if let Some(details) = self.details {
            output.details = details;
        }
        if let Some(is_error) = self.is_error {
            output.is_error = is_error;
        }
    }

    /// The contract JSON form.
    pub fn to_json(&self) -> Value {
        if *self == Self::default() {
            return Value::Null;
        }
        let mut map = Map::new();
        if let Some(content) = &self.content {
            map.insert("content".into(), serde_json::json!(content));
        }
        if let Some(details) = &self.details {
            map.insert("details".into(), details.clone());
        }
        if let Some(is_error) = self.is_error {
            map.insert("is_error".into(), Value::Bool(is_error));
        }
        Value::Object(map)
    }
}

/// `before_model`'s verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeModelReply {
    /// `null`: nothing to add.
    Continue,
    /// A string or `{note}`: add this note to the request.
    Note(String),
    /// `{stop: reason}`: end the run before this request.
    Stop(String),
}

impl BeforeModelReply {
    /// Read `null`, a string, `{note}` or `{stop}`.
    pub fn from_json(reply: Value) -> Result<Self, String> {
        if let Value::String(note) = reply {
            return Ok(Self::Note(note));
        }
        match one_of(reply, &["note", "stop"])? {
            None => Ok(Self::Continue),
            Some(("note", note)) => Ok(Self::Note(string_value("note", note)?)),
            Some((_, reason)) => Ok(Self::Stop(string_value("stop", reason)?)),
        }
    }

    /// The contract JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Continue => Value::Null,
            Self::Note(note) => serde_json::json!({ "note": note }),
            Self::Stop(reason) => serde_json::json!({ "stop": reason }),
        }
    }
}

/// `on_input`'s verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum OnInputReply {
    /// `null`: accept the input.
    Pass,
    /// `{reject: reason}`: the run does not start.
    Reject(String),
}

impl OnInputReply {
    /// Read `null` or `{reject}`.
    pub fn from_json(reply: Value) -> Result<Self, String> {
        match one_of(reply, &["reject"])? {
            None => Ok(Self::Pass),
            Some((_, reason)) => Ok(Self::Reject(string_value("reject", reason)?)),
        }
    }

    /// The contract JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Pass => Value::Null,
            Self::Reject(reason) => serde_json::json!({ "reject": reason }),
        }
    }
}

/// `on_stop`'s verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum OnStopReply {
    /// `null`: accept the answer.
    Accept,
    /// `{continue: message}`: send this to the model and go on.
    Continue(String),
    /// `{fail: reason}`: the answer is not acceptable.
    Fail(String),
}

impl OnStopReply {
    /// Read `null`, `{continue}` or `{fail}`.
    pub fn from_json(reply: Value) -> Result<Self, String> {
        match one_of(reply, &["continue", "fail"])? {
            None => Ok(Self::Accept),
            Some(("continue", message)) => Ok(Self::Continue(string_value("continue", message)?)),
            Some((_, reason)) => Ok(Self::Fail(string_value("fail", reason)?)),
        }
    }

    /// The contract JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Accept => Value::Null,
            Self::Continue(message) => serde_json::json!({ "continue": message }),
            Self::Fail(reason) => serde_json::json!({ "fail": reason }),
        }
    }
}

/// `null`, or an object with exactly one of `keys`: that key and its value.
fn one_of(reply: Value, keys: &[&'static str]) -> Result<Option<(&'static str, Value)>, String> {
    let expected = || {
        let shapes: Vec<String> = keys.iter().map(|k| format!("{{{k}}}")).collect();
        format!("null or {}", shapes.join(" or "))
    };
    match reply {
        Value::Null => Ok(None),
        Value::Object(map) => {
            if map.len() != 1 {
                let fields: Vec<&String> = map.keys().collect();
                return Err(format!(
                    "expected {}, got an object with fields {fields:?}",
                    expected()
                ));
            }
            let (field, value) = map.into_iter().next().expect("one field");
            match keys.iter().find(|k| **k == field) {
                Some(key) => Ok(Some((key, value))),
                None => Err(format!(
                    "expected {}, got unknown field `{field}`",
                    expected()
                )),
            }
        }
        other => Err(format!("expected {}, got {}", expected(), kind(&other))),
    }
}

/// The object, if every field is one of `allowed`.
fn only_fields(map: Map<String, Value>, allowed: &[&str]) -> Result<Map<String, Value>, String> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(unknown) => Err(format!(
            "unknown field `{unknown}` (expected only {})",
            allowed.join(", ")
        )),
        None => Ok(map),
    }
}

fn content_from(value: Value) -> Result<Vec<ContentBlock>, String> {
    serde_json::from_value(value)
        .map_err(|e| format!("`content` is not a list of content blocks: {e}"))
}

fn bool_field(map: &mut Map<String, Value>, field: &str) -> Result<Option<bool>, String> {
    match map.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(other) => Err(format!("`{field}` must be a boolean, got {}", kind(&other))),
    }
}

fn string_value(field: &str, value: Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(format!("`{field}` must be a string, got {}", kind(&other))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn before_tool() -> HookCall {
        HookCall::BeforeTool(BeforeToolArgs {
            run: RunInfo::default(),
            tool: "bash".into(),
            call_id: "c1".into(),
            args: json!({}),
            user_request: None,
            latest_user_text: None,
        })
    }

    #[test]
    fn before_tool_replies_parse_strictly() {
        let call = before_tool();
        assert_eq!(
            call.parse_reply(Value::Null).unwrap(),
            HookReply::BeforeTool(BeforeToolReply::Allow)
        );
        assert_eq!(
            call.parse_reply(json!({"deny": "no"})).unwrap(),
            HookReply::BeforeTool(BeforeToolReply::Deny("no".into()))
        );
        assert_eq!(
            call.parse_reply(json!({"args": {"x": 1}})).unwrap(),
            HookReply::BeforeTool(BeforeToolReply::Rewrite(json!({"x": 1})))
        );
        for garbage in [
            json!(true),
            json!("allow"),
            json!({"allow": true}),
            json!({"deny": "a", "args": {}}),
            json!({"deny": 3}),
            json!({"args": [1]}),
            json!({}),
        ] {
            let err = call.parse_reply(garbage.clone()).unwrap_err();
            assert_eq!(err.hook, Hook::BeforeTool, "{garbage}");
        }
    }

    #[test]
    fn tool_replies_accept_text_or_output_objects_only() {
        assert_eq!(
            ToolReply::from_json(json!("hi")).unwrap(),
            ToolReply::text("hi")
        );
        let image = json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "is_error": false});
        assert!(matches!(
            ToolReply::from_json(image).unwrap().content[0],
            ContentBlock::Image { .. }
        ));
        assert!(ToolReply::from_json(json!({"text": "hi"})).is_err());
        let ending = ToolReply::from_json(json!({"content": [], "terminate": true})).unwrap();
        assert!(ending.terminate);
        assert_eq!(ToolReply::from_json(ending.to_json()).unwrap(), ending);
        assert!(!ToolReply::text("hi")
            .to_json()
            .as_object()
            .unwrap()
            .contains_key("terminate"));
        assert!(ToolReply::from_json(json!({"content": [], "terminate": "yes"})).is_err());
        assert!(ToolReply::from_json(json!({"content": [{"type": "video"}]})).is_err());
        assert!(ToolReply::from_json(json!(42)).is_err());
    }

    #[test]
    fn after_tool_edit_replaces_only_given_fields() {
        let mut output = ToolOutputData {
            content: vec![ContentBlock::text("secret")],
            details: json!({"k": 1}),
            is_error: false,
        };
        AfterToolReply::from_json(json!({"content": [{"type": "text", "text": "[redacted]"}]}))
            .unwrap()
            .apply(&mut output);
        assert_eq!(output.content, vec![ContentBlock::text("[redacted]")]);
        assert_eq!(output.details, json!({"k": 1}));
        assert!(AfterToolReply::from_json(json!({"contents": []})).is_err());
    }

    #[test]
    fn model_input_and_stop_replies_round_trip() {
        for reply in [
            BeforeModelReply::Continue,
            BeforeModelReply::Note("n".into()),
            BeforeModelReply::Stop("s".into()),
        ] {
            assert_eq!(BeforeModelReply::from_json(reply.to_json()).unwrap(), reply);
        }
        assert_eq!(
            BeforeModelReply::from_json(json!("plain note")).unwrap(),
            BeforeModelReply::Note("plain note".into())
        );
        for reply in [
            OnStopReply::Accept,
            OnStopReply::Continue("c".into()),
            OnStopReply::Fail("f".into()),
        ] {
            assert_eq!(OnStopReply::from_json(reply.to_json()).unwrap(), reply);
        }
        assert_eq!(
            OnInputReply::from_json(json!({"reject": "r"})).unwrap(),
            OnInputReply::Reject("r".into())
        );
        assert!(OnInputReply::from_json(json!({"reject": "r", "extra": 1})).is_err());
    }

    #[test]
    fn hook_names_round_trip() {
        for hook in Hook::ALL {
            assert_eq!(Hook::from_name(hook.as_str()), Some(hook));
        }
        assert_eq!(Hook::from_name("before_everything"), None);
    }
}
