//! One hook call, untyped: which hook, with its argument. Engines carry
//! every hook on one channel as a [`HookCall`] and read the plugin's reply
//! with [`HookCall::parse_reply`].

use crate::arguments::*;
use crate::hook::Hook;
use crate::reply::{HookReply, ReplyError};
use serde::Serialize;
use serde_json::Value;

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
    /// `command`.
    Command(CommandArgs),
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
            HookCall::Command(_) => Hook::Command,
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
            HookCall::Command(a) => &a.run,
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

    /// Read a plugin's JSON reply to this call, strictly, with the reader of
    /// the call's own hook, so the reply is always this hook's kind.
    pub fn parse_reply(&self, reply: Value) -> Result<HookReply, ReplyError> {
        HookReply::parse(self.hook(), reply)
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
            HookCall::Command(a) => a.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::BeforeToolReply;
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
    fn a_call_serializes_as_its_argument_and_names_its_hook() {
        let call = before_tool();
        assert_eq!(call.hook(), Hook::BeforeTool);
        assert_eq!(call.call_id(), Some("c1"));
        assert_eq!(call.args_json()["tool"], "bash");
        let run = HookCall::Tools(RunInfo {
            run_id: "r1".into(),
            ..RunInfo::default()
        });
        assert_eq!(run.args_json(), json!({"run_id": "r1", "depth": 0}));
        assert_eq!(run.call_id(), None);
    }
}
