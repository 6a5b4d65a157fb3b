//! A test adapter: tool rules as plain text, a new engine and ecosystem
//! for yohost brought by this crate alone, through `yohost::adapter`.
//!
//! A `*.rules` file in a plugin directory is a plugin named after its
//! stem. Each line is a rule, `deny TOOL: REASON`; blank lines and lines
//! starting with `#` are passed over. The plugin answers `before_tool`:
//! a call of a denied tool is denied with the rule's reason. A line that
//! is not a rule refuses the plugin, naming the line.
//!
//! The engine (`rules`) and the ecosystem (`rules`) are ids of this crate:
//! the host knows neither until the adapter is registered.

use std::path::Path;
use std::sync::Arc;
use yohost::adapter::contract::{Hook, HookCall, RunInfo};
use yohost::adapter::limits::MAX_SOURCE_BYTES;
use yohost::adapter::source::read_text;
use yohost::adapter::{
    stat, Adapter, CallError, CallLimits, Candidate, Ecosystem, EngineKind, Found, LoadError,
    Loaded, Plugin, PluginRun,
};
use yohost::manifest::Manifest;

/// The engine's id.
pub const ENGINE: EngineKind = EngineKind::new("rules");

/// The ecosystem's id.
pub const ECOSYSTEM: Ecosystem = Ecosystem::new("rules");

/// How a rules file's name ends.
const SUFFIX: &str = ".rules";

/// The adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn adapter() -> Arc<dyn Adapter> {
    Arc::new(RulesAdapter)
}

/// Loads `*.rules` files.
struct RulesAdapter;

impl Adapter for RulesAdapter {
    fn engine(&self) -> EngineKind {
        ENGINE
    }

    fn ecosystem(&self) -> Ecosystem {
        ECOSYSTEM
    }

    fn discover(&self, entry: &Path) -> Option<Vec<Found>> {
        let name = entry.file_name()?.to_str()?.strip_suffix(SUFFIX)?;
        let found = match Candidate::new(
            name,
            entry,
            entry.to_path_buf(),
            ENGINE,
            Manifest::default(),
            vec![stat(entry)],
        ) {
            Ok(candidate) => Found::Plugin(Box::new(candidate)),
            Err(reason) => Found::Refused {
                name: name.to_string(),
                file: entry.to_path_buf(),
                reason,
            },
        };
        Some(vec![found])
    }

    fn load(
        &self,
        candidate: &Candidate,
        _grants: yohost::adapter::grants::Grants,
    ) -> Result<Loaded, LoadError> {
        let text = read_text(&candidate.entry, MAX_SOURCE_BYTES).map_err(|problem| {
            LoadError::Unreadable {
                path: candidate.entry.clone(),
                problem,
            }
        })?;
        let rules = parse(&text).map_err(|message| LoadError::Invalid {
            path: candidate.entry.clone(),
            message,
        })?;
        let mut loaded = Loaded::new(Arc::new(Rules(Arc::new(rules))), [Hook::BeforeTool]);
        loaded.ecosystem = Some(ECOSYSTEM);
        Ok(loaded)
    }
}

/// The denied tools, each with its reason.
type DenyList = Vec<(String, String)>;

/// The rules of a file, or the first line that is not one.
fn parse(text: &str) -> Result<DenyList, String> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
        .map(|(number, line)| {
            line.strip_prefix("deny ")
                .and_then(|rule| rule.split_once(':'))
                .map(|(tool, reason)| (tool.trim().to_string(), reason.trim().to_string()))
                .filter(|(tool, reason)| !tool.is_empty() && !reason.is_empty())
                .ok_or_else(|| format!("line {number} is not a rule `deny TOOL: REASON`: {line}"))
        })
        .collect()
}

/// A loaded rules file.
struct Rules(Arc<DenyList>);

#[async_trait::async_trait]
impl Plugin for Rules {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(Rules(self.0.clone())))
    }
}

#[async_trait::async_trait]
impl PluginRun for Rules {
    async fn call(
        &self,
        call: HookCall,
        _limits: CallLimits,
    ) -> Result<serde_json::Value, CallError> {
        let HookCall::BeforeTool(args) = call else {
            return Err(CallError::Guest("rules answer before_tool only".into()));
        };
        Ok(match self.0.iter().find(|(tool, _)| *tool == args.tool) {
            Some((_, reason)) => serde_json::json!({ "deny": reason }),
            None => serde_json::Value::Null,
        })
    }
}
