//! A rutis-agent tool library as a yohost plugin with the `tools` and
//! `call_tool` hooks.
//!
//! The schemas are read and checked once, at load. Invocations run on a
//! worker thread of the plugin's own ([`yohost::adapter::worker`]), never on the async
//! runtime: a tool that blocks or hangs is abandoned at the call's deadline
//! (the host's) and its worker retired, as for yohost's own dylibs.

use crate::library::{OpenError, Returned, ToolLibrary};
use crate::reply::tool_reply;
use crate::schema::{check_unique, parse_tool, SchemaError, MAX_SCHEMA_BYTES, MAX_TOOLS};
use serde_json::Value;
use std::ffi::CString;
use std::sync::Arc;
use yohost::adapter::worker::WorkerSlot;
use yohost::adapter::Candidate;
use yohost::contract::{Hook, HookCall, HookReply, RunInfo, ToolSpec};
use yohost::{CallError, CallLimits, LoadError, Loaded, Plugin, PluginRun};

/// The longest name `rutis_plugin_name` may return, in bytes.
const MAX_NAME_BYTES: usize = 256;

/// Open the candidate's library and read its tools, or refuse it.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    let invalid = |message: String| LoadError::Invalid {
        path: candidate.entry.clone(),
        message,
    };
    let library = ToolLibrary::open(&candidate.entry).map_err(|e| match e {
        OpenError::Copy(refusal) => refusal,
        OpenError::Missing(_) => invalid(format!("not a rutis-agent tool library: {e}")),
        OpenError::Load(_) => invalid(e.to_string()),
    })?;
    let tools = read_tools(&library).map_err(|e| invalid(format!("malformed tool schema: {e}")))?;
    let name = match library.name(MAX_NAME_BYTES) {
        None | Some(Returned::Null) => None,
        Some(Returned::Bytes(bytes)) => Some(String::from_utf8(bytes).map_err(|_| {
            invalid("`rutis_plugin_name` returned a name that is not UTF-8".into())
        })?),
        Some(Returned::TooLong) => {
            return Err(invalid(format!(
                "`rutis_plugin_name` returned a name longer than {MAX_NAME_BYTES} bytes"
            )))
        }
    };
    let worker_name = format!("rutis-{}", name.as_deref().unwrap_or(&candidate.name));
    let plugin = Arc::new(ToolPlugin(Arc::new(Tools {
        library: Arc::new(library),
        tools,
        worker: WorkerSlot::new(&worker_name),
    })));
    let mut loaded = Loaded::new(plugin, [Hook::Tools, Hook::CallTool]);
    loaded.name = name.filter(|n| !n.trim().is_empty());
    loaded.ecosystem = Some(crate::ECOSYSTEM);
    Ok(loaded)
}

/// Every tool's schema, checked.
fn read_tools(library: &ToolLibrary) -> Result<Vec<ToolSpec>, SchemaError> {
    let count = library.count();
    if count > MAX_TOOLS {
        return Err(SchemaError::TooMany(count));
    }
    let tools = (0..count)
        .map(|i| match library.schema(i, MAX_SCHEMA_BYTES) {
            Returned::Null => Err(SchemaError::Missing(i)),
            Returned::TooLong => Err(SchemaError::TooLong(i)),
            Returned::Bytes(bytes) => parse_tool(i, &bytes),
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_unique(&tools)?;
    Ok(tools)
}

/// A loaded library and its tools, shared by every run.
struct Tools {
    library: Arc<ToolLibrary>,
    tools: Vec<ToolSpec>,
    worker: WorkerSlot,
}

/// The plugin: stateless across runs, so every run shares it.
struct ToolPlugin(Arc<Tools>);

#[async_trait::async_trait]
impl Plugin for ToolPlugin {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(ToolRun(Arc::clone(&self.0))))
    }
}

struct ToolRun(Arc<Tools>);

#[async_trait::async_trait]
impl PluginRun for ToolRun {
    async fn call(&self, call: HookCall, _limits: CallLimits) -> Result<Value, CallError> {
        let tools = &self.0;
        match call {
            HookCall::Tools(_) => Ok(HookReply::Tools(tools.tools.clone()).to_json()),
            HookCall::CallTool(args) => {
                let index = tools
                    .tools
                    .iter()
                    .position(|t| t.name == args.tool)
                    .ok_or_else(|| {
                        CallError::Guest(format!("the library has no tool `{}`", args.tool))
                    })? as u32;
                let json =
                    CString::new(args.args.to_string()).expect("serialized JSON escapes every NUL");
                let library = Arc::clone(&tools.library);
                let returned = tools
                    .worker
                    .run(move || {
                        library.invoke(index, &json, yohost::adapter::limits::MAX_REPLY_BYTES)
                    })
                    .await
                    .map_err(|e| CallError::Crashed(e.to_string()))?;
                tool_reply(returned).map(|reply| reply.to_json())
            }
            other => Err(CallError::Guest(format!(
                "a rutis-agent tool library has no `{}` hook",
                other.hook()
            ))),
        }
    }
}
