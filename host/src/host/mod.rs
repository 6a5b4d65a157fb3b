//! The directory-level host: [`PluginHost`](crate::PluginHost), the
//! report of what loaded and what was refused, and the commands plugins
//! offer an app's user.

pub(crate) mod commands;
pub(crate) mod plugin_host;
pub(crate) mod report;
