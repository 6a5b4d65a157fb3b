//! The directory-level host: [`PluginHost`](crate::PluginHost), and the
//! report of what loaded and what was refused.

pub(crate) mod plugin_host;
pub(crate) mod report;
