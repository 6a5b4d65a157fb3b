//! The per-run rules: one bounded hook call ([`invoke`]), the fail-closed
//! rules of a plugin's session, the combination of several plugins
//! ([`runset`]), plugin tools, terminations, conversions to and from
//! yoagent's types, and the yoagent `Extension`s.

pub(crate) mod convert;
pub(crate) mod extension;
pub(crate) mod invoke;
pub(crate) mod runset;
pub(crate) mod session;
pub(crate) mod terminate;
pub(crate) mod tool;
