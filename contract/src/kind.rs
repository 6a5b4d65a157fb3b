//! Every hook as a type, for typed calls: `session.call::<kind::BeforeTool>(args)`
//! takes a [`BeforeToolArgs`] and gives a [`BeforeToolReply`].
//!
//! Engines speak the untyped [`HookCall`] and [`HookReply`] (one enum each,
//! so one channel carries every hook). [`HookKind::from_reply`] is the one
//! place that checks a reply is the kind of its hook; [`HookKind::parse`]
//! reads the hook's JSON reply with the same strict reader as
//! [`HookCall::parse_reply`], and [`HookKind::parse_reply`] names the hook
//! in its error.
//!
//! This module sits above the rest of the contract: it uses the hooks,
//! arguments, calls and replies, and none of them uses it.

use crate::arguments::{
    AfterToolArgs, BeforeModelArgs, BeforeToolArgs, CallToolArgs, FinishArgs, OnEventArgs,
    OnInputArgs, OnStopArgs, RunInfo, ToolSpec,
};
use crate::call::HookCall;
use crate::hook::Hook;
use crate::reply::{
    tools_from_json, AfterToolReply, BeforeModelReply, BeforeToolReply, HookReply, OnInputReply,
    OnStopReply, ReplyError, ToolReply,
};
use serde_json::Value;

/// A hook of the contract as a type: its name, argument and reply.
pub trait HookKind: Send + Sync + 'static {
    /// The hook.
    const HOOK: Hook;
    /// What the hook is called with.
    type Args: Clone + Send + 'static;
    /// What a plugin's hook answers, typed.
    type Reply: Send + 'static;

    /// The untyped call that carries `args` to an engine.
    fn call(args: Self::Args) -> HookCall;

    /// The untyped form of a reply.
    fn wrap(reply: Self::Reply) -> HookReply;

    /// The reply, if it is this hook's kind; a [`ReplyError`] naming the
    /// hook otherwise.
    fn from_reply(reply: HookReply) -> Result<Self::Reply, ReplyError>;

    /// Read the plugin's JSON reply, strictly.
    fn parse(reply: Value) -> Result<Self::Reply, String>;

    /// Read the plugin's JSON reply, strictly, as [`parse`](Self::parse)
    /// does; a reply that does not fit is a [`ReplyError`] naming the hook.
    fn parse_reply(reply: Value) -> Result<Self::Reply, ReplyError> {
        Self::parse(reply).map_err(|problem| ReplyError::new(Self::HOOK, problem))
    }
}

/// The error of a reply that belongs to another hook.
fn wrong_kind(hook: Hook, reply: &HookReply) -> ReplyError {
    ReplyError::new(
        hook,
        format!("got the reply of another hook ({})", reply_name(reply)),
    )
}

fn reply_name(reply: &HookReply) -> &'static str {
    match reply {
        HookReply::Tools(_) => "tools",
        HookReply::CallTool(_) => "call_tool",
        HookReply::BeforeTool(_) => "before_tool",
        HookReply::AfterTool(_) => "after_tool",
        HookReply::BeforeModel(_) => "before_model",
        HookReply::OnInput(_) => "on_input",
        HookReply::OnStop(_) => "on_stop",
        HookReply::Ignored => "on_event or finish",
    }
}

/// Implement [`HookKind`] for a marker type whose reply is one variant of
/// [`HookReply`] carrying a value.
macro_rules! valued_kind {
    ($(#[$doc:meta])* $kind:ident, $args:ty, $reply:ty, $parse:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $kind;

        impl HookKind for $kind {
            const HOOK: Hook = Hook::$kind;
            type Args = $args;
            type Reply = $reply;

            fn call(args: Self::Args) -> HookCall {
                HookCall::$kind(args)
            }

            fn wrap(reply: Self::Reply) -> HookReply {
                HookReply::$kind(reply)
            }

            fn from_reply(reply: HookReply) -> Result<Self::Reply, ReplyError> {
                match reply {
                    HookReply::$kind(reply) => Ok(reply),
                    other => Err(wrong_kind(Self::HOOK, &other)),
                }
            }

            fn parse(reply: Value) -> Result<Self::Reply, String> {
                ($parse)(reply)
            }
        }
    };
}

/// Implement [`HookKind`] for a hook whose reply is ignored.
macro_rules! ignored_kind {
    ($(#[$doc:meta])* $kind:ident, $args:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $kind;

        impl HookKind for $kind {
            const HOOK: Hook = Hook::$kind;
            type Args = $args;
            type Reply = ();

            fn call(args: Self::Args) -> HookCall {
                HookCall::$kind(args)
            }

            fn wrap(_reply: ()) -> HookReply {
                HookReply::Ignored
            }

            fn from_reply(reply: HookReply) -> Result<(), ReplyError> {
                match reply {
                    HookReply::Ignored => Ok(()),
                    other => Err(wrong_kind(Self::HOOK, &other)),
                }
            }

            fn parse(_reply: Value) -> Result<(), String> {
                Ok(())
            }
        }
    };
}

valued_kind!(
    /// `tools`: the run, answered by a list of tools (`null` is none).
    Tools,
    RunInfo,
    Vec<ToolSpec>,
    tools_from_json
);
valued_kind!(
    /// `call_tool`: a string, or `{content, details?, is_error?}`.
    CallTool,
    CallToolArgs,
    ToolReply,
    ToolReply::from_json
);
valued_kind!(
    /// `before_tool`: `null`, `{deny}` or `{args}`.
    BeforeTool,
    BeforeToolArgs,
    BeforeToolReply,
    BeforeToolReply::from_json
);
valued_kind!(
    /// `after_tool`: `null` or `{content?, details?, is_error?}`.
    AfterTool,
    AfterToolArgs,
    AfterToolReply,
    AfterToolReply::from_json
);
valued_kind!(
    /// `before_model`: `null`, a string, `{note}` or `{stop}`.
    BeforeModel,
    BeforeModelArgs,
    BeforeModelReply,
    BeforeModelReply::from_json
);
valued_kind!(
    /// `on_input`: `null` or `{reject}`.
    OnInput,
    OnInputArgs,
    OnInputReply,
    OnInputReply::from_json
);
valued_kind!(
    /// `on_stop`: `null`, `{continue}` or `{fail}`.
    OnStop,
    OnStopArgs,
    OnStopReply,
    OnStopReply::from_json
);
ignored_kind!(
    /// `on_event`: the reply is ignored.
    OnEvent,
    OnEventArgs
);
ignored_kind!(
    /// `finish`: the reply is ignored.
    Finish,
    FinishArgs
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `K::parse` and `HookCall::parse_reply` read `reply` alike.
    fn reads_alike<K: HookKind>(args: K::Args, reply: Value)
    where
        K::Reply: std::fmt::Debug,
    {
        let call = K::call(args);
        let typed = K::parse_reply(reply.clone()).map(K::wrap);
        assert_eq!(
            typed,
            call.parse_reply(reply.clone()),
            "{} {reply}",
            K::HOOK
        );
    }

    #[test]
    fn typed_and_untyped_replies_are_read_alike() {
        let run = RunInfo::default();
        for reply in [json!(null), json!([]), json!([{"name": "t"}]), json!({})] {
            reads_alike::<Tools>(run.clone(), reply);
        }
        let before = BeforeToolArgs {
            run: run.clone(),
            tool: "bash".into(),
            call_id: "c1".into(),
            args: json!({}),
            user_request: None,
            latest_user_text: None,
        };
        for reply in [
            json!(null),
            json!({"deny": "no"}),
            json!({"deny": " "}),
            json!({"args": {"x": 1}}),
            json!({"args": 1}),
        ] {
            reads_alike::<BeforeTool>(before.clone(), reply);
        }
        let input = OnInputArgs {
            run: run.clone(),
            text: "hi".into(),
        };
        for reply in [json!(null), json!({"reject": "r"}), json!("r")] {
            reads_alike::<OnInput>(input.clone(), reply);
        }
        let event = OnEventArgs {
            run,
            event: json!({}),
        };
        reads_alike::<OnEvent>(event, json!({"anything": true}));
        let err = BeforeTool::parse_reply(json!(true)).unwrap_err();
        assert_eq!(err.hook, Hook::BeforeTool);
    }

    #[test]
    fn a_reply_of_another_hook_is_an_error_naming_both() {
        let err = BeforeTool::from_reply(HookReply::OnInput(OnInputReply::Pass)).unwrap_err();
        assert_eq!(err.hook, Hook::BeforeTool);
        assert!(err.problem.contains("on_input"), "{}", err.problem);
        assert!(Finish::from_reply(HookReply::Tools(Vec::new())).is_err());
        assert_eq!(
            BeforeTool::from_reply(HookReply::BeforeTool(BeforeToolReply::Allow)).unwrap(),
            BeforeToolReply::Allow
        );
        OnEvent::from_reply(HookReply::Ignored).unwrap();
    }

    #[test]
    fn each_kind_names_its_hook_and_wraps_its_call() {
        let run = RunInfo::default();
        assert_eq!(Tools::call(run.clone()).hook(), Tools::HOOK);
        assert_eq!(Tools::HOOK, Hook::Tools);
        let finish = FinishArgs {
            run,
            end: "completed".into(),
            reason: None,
            error: None,
        };
        assert_eq!(Finish::call(finish).hook(), Hook::Finish);
    }
}
