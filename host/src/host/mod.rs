//! The directory-level host: [`PluginHost`](crate::PluginHost), the
//! report of what loaded and what was refused, the commands plugins
//! offer an app's user, and runs of their tools without a model.

pub(crate) mod commands;
pub(crate) mod plugin_host;
pub(crate) mod report;
pub(crate) mod tool_run;
