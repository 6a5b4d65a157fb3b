//! Calling a plugin: the engine-neutral plugin and run traits, the errors
//! of a call, the codecs of its replies, the hand-off of calls to an
//! engine's own thread, the bounded plugin log, the argument checks, the
//! figures the host keeps of every call, a tool call's bounded progress,
//! and the app's user interface a call may ask. It names no engine and no
//! ecosystem; it depends only on the [model](crate::model).

pub(crate) mod arguments;
pub mod codec;
pub(crate) mod decisions;
pub(crate) mod error;
pub(crate) mod handoff;
pub mod logging;
pub(crate) mod plugin;
pub mod progress;
pub(crate) mod stats;
pub(crate) mod ui;
#[cfg(any(feature = "js", feature = "node"))]
pub(crate) mod ui_requests;
pub(crate) mod unloads;
pub mod worker;
