//! The yohost hook contract, shared by the host and every plugin kit.
//!
//! This crate holds only data: the arguments and replies of every hook, the
//! run a hook belongs to, content blocks, and the version constants. It
//! depends on serde alone, so a guest kit (a dylib, a Wasm component) can use
//! it without pulling in an engine.
//!
//! | Hook | Argument | Reply |
//! | --- | --- | --- |
//! | `tools` | [`RunInfo`] | list of [`ToolSpec`] |
//! | `call_tool` | [`CallToolArgs`] | [`ToolReply`]: a string, or `{content, details?, is_error?}` |
//! | `before_tool` | [`BeforeToolArgs`] | [`BeforeToolReply`]: `null`, `{deny}` or `{args}` |
//! | `after_tool` | [`AfterToolArgs`] | [`AfterToolReply`]: `null` or `{content?, details?, is_error?}` |
//! | `before_model` | [`BeforeModelArgs`] | [`BeforeModelReply`]: `null`, a string, `{note}` or `{stop}` |
//! | `on_input` | [`OnInputArgs`] | [`OnInputReply`]: `null` or `{reject}` |
//! | `on_stop` | [`OnStopArgs`] | [`OnStopReply`]: `null`, `{continue}` or `{fail}` |
//! | `on_event` | [`OnEventArgs`] | ignored |
//! | `finish` | [`FinishArgs`] | ignored |
//!
//! Parsing is strict: a reply with an unknown shape or an unknown field is an
//! error, never a silent allow. Each reply type's `from_json` is the one
//! reader of its hook's JSON reply; [`HookCall::parse_reply`] (untyped, into
//! a [`HookReply`]) and [`HookKind::parse`] (typed, see [`kind`]) pick it by
//! hook. A host reads an engine's reply once, typed, with
//! [`HookKind::parse_reply`].
//!
//! The modules depend one way: [`Hook`] and the content blocks at the
//! bottom; the arguments; the replies; the untyped [`HookCall`]; and
//! [`kind`], the typed hooks, on top.

#![warn(missing_docs)]

pub mod abi;
mod arguments;
mod call;
mod content;
mod hook;
pub mod kind;
mod reply;
mod version;

pub use arguments::{
    AfterToolArgs, BeforeModelArgs, BeforeToolArgs, CallToolArgs, CommandArgs, CommandSpec,
    FinishArgs, OnEventArgs, OnInputArgs, OnStopArgs, RunInfo, ToolSpec,
};
pub use call::HookCall;
pub use content::{ContentBlock, ToolOutputData};
pub use hook::Hook;
pub use kind::HookKind;
pub use reply::{
    AfterToolReply, BeforeModelReply, BeforeToolReply, HookReply, OnInputReply, OnStopReply,
    ReplyError, ToolReply,
};
pub use version::{ABI_VERSION, DATA_DIR_SYMBOL, ENTRY_SYMBOL, WIT_PACKAGE};
