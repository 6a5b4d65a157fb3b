//! Every hook's reply, and the strict readers of a plugin's JSON reply.
//!
//! Each reply type's `from_json` accepts exactly the shapes of the contract
//! and nothing else: an unknown shape or an unknown field is an error, never
//! a silent allow. [`HookCall::parse_reply`](crate::HookCall::parse_reply)
//! and [`HookKind::parse`](crate::HookKind::parse) pick the reader of a hook;
//! `to_json` gives the form a plugin would return.

use crate::arguments::ToolSpec;
use crate::content::{ContentBlock, ToolOutputData};
use crate::hook::Hook;
use serde_json::{Map, Value};

/// A reply that does not fit its hook's contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyError {
    /// The hook whose reply it was.
    pub hook: Hook,
    /// What is wrong with it.
    pub problem: String,
}

impl ReplyError {
    /// `hook`'s reply does not fit the contract, for this reason.
    pub fn new(hook: Hook, problem: impl Into<String>) -> Self {
        Self {
            hook,
            problem: problem.into(),
        }
    }
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
    /// `on_event`, `finish` and `command`.
    Ignored,
}

impl HookReply {
    /// Read `reply` as `hook`'s JSON reply, strictly, in its untyped form.
    pub(crate) fn parse(hook: Hook, reply: Value) -> Result<HookReply, ReplyError> {
        match hook {
            Hook::Tools => tools_from_json(reply).map(HookReply::Tools),
            Hook::CallTool => ToolReply::from_json(reply).map(HookReply::CallTool),
            Hook::BeforeTool => BeforeToolReply::from_json(reply).map(HookReply::BeforeTool),
            Hook::AfterTool => AfterToolReply::from_json(reply).map(HookReply::AfterTool),
            Hook::BeforeModel => BeforeModelReply::from_json(reply).map(HookReply::BeforeModel),
            Hook::OnInput => OnInputReply::from_json(reply).map(HookReply::OnInput),
            Hook::OnStop => OnStopReply::from_json(reply).map(HookReply::OnStop),
            Hook::OnEvent | Hook::Finish | Hook::Command => Ok(HookReply::Ignored),
        }
        .map_err(|problem| ReplyError::new(hook, problem))
    }

    /// Whether this is a reply to `hook`: its own variant, or
    /// [`Ignored`](Self::Ignored) for `on_event`, `finish` and `command`. A reply built
    /// in code for another hook is not one, even where its JSON form would
    /// read as one (`null` is an allow, a pass and an accept alike).
    pub fn answers(&self, hook: Hook) -> bool {
        let own = match self {
            HookReply::Tools(_) => Hook::Tools,
            HookReply::CallTool(_) => Hook::CallTool,
            HookReply::BeforeTool(_) => Hook::BeforeTool,
            HookReply::AfterTool(_) => Hook::AfterTool,
            HookReply::BeforeModel(_) => Hook::BeforeModel,
            HookReply::OnInput(_) => Hook::OnInput,
            HookReply::OnStop(_) => Hook::OnStop,
            HookReply::Ignored => {
                return matches!(hook, Hook::OnEvent | Hook::Finish | Hook::Command)
            }
        };
        own == hook
    }

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

/// Read `tools`' reply: `null` (no tools) or a list of tools.
pub(crate) fn tools_from_json(reply: Value) -> Result<Vec<ToolSpec>, String> {
    match reply {
        Value::Null => Ok(Vec::new()),
        other => {
            serde_json::from_value(other).map_err(|e| format!("expected a list of tools: {e}"))
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
    /// `{deny: reason}`: block it; the model sees the reason, which must
    /// not be empty or blank (see [`check`](Self::check)).
    Deny(String),
    /// `{args: {...}}`: run it with these arguments instead.
    Rewrite(Value),
}

impl BeforeToolReply {
    /// Read `null`, `{deny}` or `{args}`; a deny must keep the rule of
    /// [`check`](Self::check).
    pub fn from_json(reply: Value) -> Result<Self, String> {
        let reply = match one_of(reply, &["deny", "args"])? {
            None => Self::Allow,
            Some(("deny", reason)) => Self::Deny(string_value("deny", reason)?),
            Some((_, args)) if args.is_object() => Self::Rewrite(args),
            Some((_, args)) => {
                return Err(format!("`args` must be an object, got {}", kind(&args)))
            }
        };
        reply.check()?;
        Ok(reply)
    }

    /// The verdict keeps the rule that its shape alone cannot: a deny gives
    /// a reason. An empty or blank one is a bad reply, since the model and
    /// the person reading the run must learn why the call was blocked.
    /// [`from_json`](Self::from_json) applies it, so every reply a host
    /// reads keeps it, including a verdict built in code and sent as JSON.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Self::Deny(reason) if reason.trim().is_empty() => {
                Err("a deny must give a reason, got an empty one".into())
            }
            _ => Ok(()),
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

    #[test]
    fn a_reply_answers_its_own_hook_only() {
        let allow = HookReply::BeforeTool(BeforeToolReply::Allow);
        assert!(allow.answers(Hook::BeforeTool));
        assert!(!allow.answers(Hook::OnInput));
        let pass = HookReply::OnInput(OnInputReply::Pass);
        assert!(
            !pass.answers(Hook::BeforeTool),
            "`null` alike, another hook"
        );
        assert!(HookReply::Ignored.answers(Hook::OnEvent));
        assert!(HookReply::Ignored.answers(Hook::Finish));
        assert!(HookReply::Ignored.answers(Hook::Command));
        assert!(!HookReply::Ignored.answers(Hook::BeforeTool));
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
    fn a_deny_must_give_a_reason() {
        for blank in ["", " ", " \n\t"] {
            let reply = BeforeToolReply::Deny(blank.into());
            let problem = reply.check().unwrap_err();
            assert!(problem.contains("reason"), "{problem}");
            assert_eq!(
                BeforeToolReply::from_json(json!({ "deny": blank })).unwrap_err(),
                problem,
                "{blank:?}"
            );
            let err = HookReply::parse(Hook::BeforeTool, reply.to_json()).unwrap_err();
            assert_eq!(err.hook, Hook::BeforeTool);
        }
        for fine in [
            BeforeToolReply::Allow,
            BeforeToolReply::Deny("no".into()),
            BeforeToolReply::Deny(" no ".into()),
            BeforeToolReply::Rewrite(json!({})),
        ] {
            fine.check().unwrap();
            assert_eq!(BeforeToolReply::from_json(fine.to_json()).unwrap(), fine);
        }
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
}
