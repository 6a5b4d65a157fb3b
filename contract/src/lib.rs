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
//! error, never a silent allow. [`HookCall::parse_reply`] is the one place
//! that turns a plugin's JSON reply into a [`HookReply`], and
//! [`HookKind::from_reply`] the one place that checks a reply is its hook's
//! kind (see [`kind`] for typed calls).

pub mod abi;
mod content;
mod hooks;
pub mod kind;
mod version;

pub use content::{ContentBlock, ToolOutputData};
pub use hooks::{
    AfterToolArgs, AfterToolReply, BeforeModelArgs, BeforeModelReply, BeforeToolArgs,
    BeforeToolReply, CallToolArgs, FinishArgs, Hook, HookCall, HookReply, OnEventArgs, OnInputArgs,
    OnInputReply, OnStopArgs, OnStopReply, ReplyError, RunInfo, ToolReply, ToolSpec,
};
pub use kind::HookKind;
pub use version::{ABI_VERSION, ENTRY_SYMBOL, WIT_PACKAGE};
