//! Every hook as a type, for typed calls: `session.call::<kind::BeforeTool>(args)`
//! takes a [`BeforeToolArgs`] and gives a [`BeforeToolReply`].
//!
//! Engines take the untyped [`HookCall`] (one enum, so one channel carries
//! every hook) and answer with the plugin's reply decoded to JSON. A host
//! reads that value once, with [`HookKind::parse_reply`]: the same strict
//! reader as [`HookCall::parse_reply`], naming the hook in its error, and
//! giving the hook's own reply type. Nothing checks a reply's kind again.
//!
//! This module sits above the rest of the contract: it uses the hooks,
//! arguments, calls and replies, and none of them uses it.

use crate::arguments::{
    AfterToolArgs, BeforeModelArgs, BeforeToolArgs, CallToolArgs, CommandArgs, FinishArgs,
    OnEventArgs, OnInputArgs, OnStopArgs, RunInfo, ToolSpec,
};
use crate::call::HookCall;
use crate::content::ContentBlock;
use crate::hook::Hook;
use crate::reply::{
    tools_from_json, AfterToolReply, BeforeModelReply, BeforeToolReply, OnInputReply, OnStopReply,
    ReplyError, ToolReply,
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

    /// Read the plugin's JSON reply, strictly.
    fn parse(reply: Value) -> Result<Self::Reply, String>;

    /// Read the plugin's JSON reply, strictly, as [`parse`](Self::parse)
    /// does; a reply that does not fit is a [`ReplyError`] naming the hook.
    fn parse_reply(reply: Value) -> Result<Self::Reply, ReplyError> {
        Self::parse(reply).map_err(|problem| ReplyError::new(Self::HOOK, problem))
    }

    /// The content blocks the reply puts in front of the model (a tool's
    /// result, an output edit), for the host to hold to its content limits.
    fn content(_reply: &Self::Reply) -> Option<&[ContentBlock]> {
        None
    }
}

/// Implement [`HookKind`] for a marker type whose reply carries a value
/// (and, for the hooks that answer with content, where it is).
macro_rules! valued_kind {
    ($(#[$doc:meta])* $kind:ident, $args:ty, $reply:ty, $parse:expr) => {
        valued_kind!($(#[$doc])* $kind, $args, $reply, $parse, |_reply| None);
    };
    ($(#[$doc:meta])* $kind:ident, $args:ty, $reply:ty, $parse:expr, $content:expr) => {
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

            fn parse(reply: Value) -> Result<Self::Reply, String> {
                ($parse)(reply)
            }

            fn content(reply: &Self::Reply) -> Option<&[ContentBlock]> {
                let content: fn(&Self::Reply) -> Option<&[ContentBlock]> = $content;
                content(reply)
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
    ToolReply::from_json,
    |reply| Some(&reply.content)
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
    AfterToolReply::from_json,
    |reply| reply.content.as_deref()
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
ignored_kind!(
    /// `command`: the reply is ignored (a command answers its user through
    /// the app's user interface).
    Command,
    CommandArgs
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
        let typed = K::parse_reply(reply.clone()).map(|_| ());
        assert_eq!(
            typed,
            call.parse_reply(reply.clone()).map(|_| ()),
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
    fn the_content_a_reply_shows_the_model_is_found_by_kind() {
        let result = ToolReply::text("ran");
        assert_eq!(CallTool::content(&result), Some(result.content.as_slice()));
        assert_eq!(AfterTool::content(&AfterToolReply::default()), None);
        let edit = AfterToolReply {
            content: Some(vec![ContentBlock::text("x")]),
            ..AfterToolReply::default()
        };
        assert_eq!(AfterTool::content(&edit).map(<[_]>::len), Some(1));
        assert_eq!(BeforeTool::content(&BeforeToolReply::Allow), None);
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
