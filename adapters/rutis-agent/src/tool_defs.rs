//! rutis-agent `ToolDef`s of a Rust host, as a yohost plugin.
//!
//! A rutis-agent `ToolDef` is an aimux `FunctionTool` (name, description,
//! input schema) plus a runner whose type is plain `std` and `serde_json`
//! (`Arc<dyn Fn(Value) -> Pin<Box<dyn Future<Output = Result<Value,
//! String>> + Send>> + Send + Sync>`). [`RustTool`] has the same fields, so
//! a host that embeds rutis-agent moves them over one to one, and this
//! crate does not depend on rutis-agent (several hundred crates):
//!
//! ```ignore
//! let tools = defs.into_iter().map(|def| RustTool {
//!     name: def.tool.name,
//!     description: def.tool.description,
//!     parameters: def.tool.input_schema,
//!     run: def.run,
//! });
//! let plugin = tool_defs::plugin("rutis-tools", tools.collect(), Manifest::default())?;
//! let host = yohost::PluginHost::from_plugins(vec![plugin]);
//! ```
//!
//! Each tool's name, description and schema are checked as a tool library's
//! schemas are ([`crate::SchemaError`]), and a call runs its runner as a task
//! of the async runtime. The result maps as rutis-agent's own `ToolRegistry`
//! maps it: `Ok(Value::String(s))` is the text `s`, any other `Ok(value)` its
//! JSON text (and `details`), `Err(message)` an error result. A runner that
//! panics fails the call closed (`Crashed`).

use crate::schema::{check_unique, parse_tool, SchemaError};
use serde_json::Value;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use tokio::task::AbortHandle;
use yohost::contract::{Hook, HookCall, HookReply, RunInfo, ToolReply, ToolSpec};
use yohost::manifest::Manifest;
use yohost::{CallError, CallLimits, EngineKind, LoadedPlugin, Plugin, PluginRun};

/// A runner: rutis-agent's `ToolDef::run`.
pub type Runner =
    Arc<dyn Fn(Value) -> Pin<Box<dyn Future<Output = Result<Value, String>> + Send>> + Send + Sync>;

/// A tool written in Rust: the fields of a rutis-agent `ToolDef`.
#[derive(Clone)]
pub struct RustTool {
    /// The name the model calls it by (`FunctionTool::name`).
    pub name: String,
    /// What the model reads about it (`FunctionTool::description`).
    pub description: Option<String>,
    /// JSON Schema of its arguments (`FunctionTool::input_schema`).
    pub parameters: Value,
    /// Runs it (`ToolDef::run`).
    pub run: Runner,
}

/// A plugin named `name` offering `defs` as its tools, for
/// [`PluginHost::from_plugins`](yohost::PluginHost::from_plugins). The
/// manifest sets its mode, priority and `call_tool` timeout. Refused, with
/// the reason, when a tool's schema is malformed or two share a name.
pub fn plugin(
    name: &str,
    defs: Vec<RustTool>,
    manifest: Manifest,
) -> Result<LoadedPlugin, SchemaError> {
    let tools = defs
        .iter()
        .enumerate()
        .map(|(i, def)| {
            let schema = serde_json::json!({
                "name": def.name,
                "description": def.description,
                "parameters": def.parameters,
            });
            parse_tool(i as u32, schema.to_string().as_bytes())
        })
        .collect::<Result<Vec<ToolSpec>, _>>()?;
    check_unique(&tools)?;
    let plugin = Arc::new(Defs(Arc::new((tools, defs))));
    let mut loaded = LoadedPlugin::new(
        name,
        EngineKind::NATIVE,
        plugin,
        [Hook::Tools, Hook::CallTool],
    );
    loaded.file = format!("<rutis-agent:{name}>").into();
    loaded.ecosystem = crate::ECOSYSTEM;
    loaded.manifest = manifest;
    Ok(loaded)
}

/// The tools' specs and their definitions, index for index.
type Shared = Arc<(Vec<ToolSpec>, Vec<RustTool>)>;

struct Defs(Shared);

#[async_trait::async_trait]
impl Plugin for Defs {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(Defs(Arc::clone(&self.0))))
    }
}

#[async_trait::async_trait]
impl PluginRun for Defs {
    async fn call(&self, call: HookCall, _limits: CallLimits) -> Result<Value, CallError> {
        let (specs, defs) = &*self.0;
        match call {
            HookCall::Tools(_) => Ok(HookReply::Tools(specs.clone()).to_json()),
            HookCall::CallTool(args) => {
                let def = specs
                    .iter()
                    .position(|t| t.name == args.tool)
                    .map(|i| &defs[i])
                    .ok_or_else(|| CallError::Guest(format!("no tool `{}`", args.tool)))?;
                let crashed =
                    |what: String| CallError::Crashed(format!("the tool's runner {what}"));
                let future = std::panic::catch_unwind(AssertUnwindSafe(|| (def.run)(args.args)))
                    .map_err(|_| crashed("panicked".into()))?;
                let task = tokio::spawn(future);
                // A call abandoned at its deadline stops its task.
                let _abort = AbortOnDrop(task.abort_handle());
                let outcome = task.await.map_err(|e| crashed(format!("failed: {e}")))?;
                let reply = match outcome {
                    Ok(Value::String(text)) => ToolReply::text(text),
                    Ok(value) => {
                        let mut reply = ToolReply::text(value.to_string());
                        reply.details = value;
                        reply
                    }
                    Err(message) => ToolReply::error(message),
                };
                Ok(reply.to_json())
            }
            other => Err(CallError::Guest(format!(
                "rutis-agent tools have no `{}` hook",
                other.hook()
            ))),
        }
    }
}

/// Aborts a runner's task when the call that awaits it is dropped.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
