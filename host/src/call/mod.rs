//! Calling a plugin: the engine-neutral plugin and run traits, the errors
//! of a call, the codecs of its replies, the hand-off of calls to an
//! engine's own thread, the bounded plugin log, the argument checks and the
//! figures the host keeps of every call. It names no engine and no
//! ecosystem; it depends only on the [model](crate::model).

pub(crate) mod arguments;
pub mod codec;
pub(crate) mod decisions;
pub(crate) mod error;
pub(crate) mod handoff;
pub mod logging;
pub(crate) mod plugin;
pub(crate) mod stats;
pub(crate) mod unloads;
pub mod worker;
