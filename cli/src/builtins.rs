//! The built-in tools `yohost run` gives the agent, and the ones a pi
//! extension or a DSH tool replaces: as in pi and in DSH, a foreign tool
//! with a built-in's name takes its place (yoagent keeps an agent's own
//! tool over a plugin's of the same name, so the built-in is left out):
//! DSH's `bash` runs, in the plugin's sandbox, not the built-in one. A
//! yohost plugin's tool of such a name does not: the built-in is kept and
//! the plugin's is dropped.

use crate::output::escaped;
use yoagent::AgentTool;
use yohost::{Ecosystem, PluginHost, PluginReport, Status};

/// The ecosystems whose tools replace built-ins of the same name, as their
/// own hosts do.
const REPLACING: [Ecosystem; 2] = [yohost_adapter_pi::ECOSYSTEM, yohost_adapter_dsh::ECOSYSTEM];

/// A built-in tool a plugin's tool replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The tool's name.
    pub tool: String,
    /// The plugin whose tool replaces it.
    pub plugin: String,
}

/// Which of the built-ins named `builtins` the loaded plugins of `report`
/// replace, in the order of the built-ins.
pub fn replaced<'a>(
    builtins: impl IntoIterator<Item = &'a str>,
    report: &[PluginReport],
) -> Vec<Replaced> {
    builtins
        .into_iter()
        .filter_map(|tool| {
            report
                .iter()
                .find(|p| {
                    p.status == Status::Loaded
                        && REPLACING
                            .iter()
                            .any(|e| p.ecosystem.as_deref() == Some(e.as_str()))
                        && p.tools.iter().any(|t| t == tool)
                })
                .map(|p| Replaced {
                    tool: tool.to_string(),
                    plugin: p.name.clone(),
                })
        })
        .collect()
}

/// Which of the built-ins named `builtins` the plugins of `host` replace.
/// Only a host with a plugin of a replacing ecosystem is asked for its
/// report, which asks each plugin for its tools (a call its figures count).
pub async fn replaced_in<'a>(
    host: &PluginHost,
    builtins: impl IntoIterator<Item = &'a str>,
) -> Vec<Replaced> {
    if host
        .plugins()
        .iter()
        .any(|p| REPLACING.contains(&p.ecosystem))
    {
        replaced(builtins, &host.report().await)
    } else {
        Vec::new()
    }
}

/// `tools` without the ones `replaced` names.
pub fn without(tools: Vec<Box<dyn AgentTool>>, replaced: &[Replaced]) -> Vec<Box<dyn AgentTool>> {
    tools
        .into_iter()
        .filter(|t| !replaced.iter().any(|r| r.tool == t.name()))
        .collect()
}

/// The names of the built-in tools `yohost run` gives the agent.
pub fn names() -> Vec<String> {
    yoagent::tools::default_tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect()
}

/// How `replaced` is told: a line, or with `json` an object per tool.
pub fn describe(replaced: &Replaced, json: bool) -> String {
    if json {
        serde_json::json!({"replaces_builtin": {"plugin": replaced.plugin, "tool": replaced.tool}})
            .to_string()
    } else {
        let (plugin, tool) = (escaped(&replaced.plugin), escaped(&replaced.tool));
        format!("{plugin}'s tool {tool} replaces the built-in {tool}")
    }
}
