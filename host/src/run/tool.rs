//! A plugin's tool as a yoagent `AgentTool`.

use crate::call::arguments::ArgumentCheck;
use crate::call::error::CallError;
use crate::run::convert::content_from_blocks;
use crate::run::session::PluginSession;
use crate::run::terminate::Terminations;
use std::sync::Arc;
use yoagent::{AgentTool, ToolContext, ToolError, ToolResult};
use yohost_contract::kind;
use yohost_contract::{CallToolArgs, ToolSpec};

/// A tool offered by a plugin for one run. Calls go to that run's instance,
/// within the plugin's `call_tool` timeout and the run's cancel, once their
/// arguments match the tool's parameters schema (or unchecked to a tool that
/// prepares its arguments and checks them itself: `prepares_arguments`).
/// A result that asks to end the run (`terminate`) is recorded in the
/// run's [`Terminations`]. The call's progress listener
/// (`ToolContext::on_progress`) goes to the engine
/// ([`CallLimits::progress`](crate::CallLimits::progress)).
pub(crate) struct PluginTool {
    session: Arc<PluginSession>,
    spec: ToolSpec,
    arguments: ArgumentCheck,
    terminations: Arc<Terminations>,
}

impl PluginTool {
    /// Why the tool is refused at load (its schema is over the host's
    /// budget), naming it and what exceeded.
    pub(crate) fn refusal(&self) -> Option<&str> {
        self.arguments.refusal()
    }

    pub(crate) fn new(
        session: Arc<PluginSession>,
        spec: ToolSpec,
        terminations: Arc<Terminations>,
    ) -> Self {
        let arguments = ArgumentCheck::new(&spec.name, &spec.parameters);
        Self {
            session,
            spec,
            arguments,
            terminations,
        }
    }
}

/// The most characters of a tool's own error the model reads.
const MAX_TOOL_ERROR_CHARS: usize = 4096;

/// `message` cut at [`MAX_TOOL_ERROR_CHARS`], saying so.
fn bounded(message: &str) -> String {
    match message.char_indices().nth(MAX_TOOL_ERROR_CHARS) {
        Some((at, _)) => format!(
            "{}… (cut at {MAX_TOOL_ERROR_CHARS} characters)",
            &message[..at]
        ),
        None => message.to_string(),
    }
}

#[async_trait::async_trait]
impl AgentTool for PluginTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn label(&self) -> &str {
        self.spec.label.as_deref().unwrap_or(&self.spec.name)
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    fn parameters_schema(&self) -> serde_json::Value {
        self.spec.parameters.clone()
    }

    async fn execute(
        &self,
        params: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolResult, ToolError> {
        // Arguments that do not match the schema never reach the plugin,
        // unless it prepares them first and then checks them itself.
        if !self.spec.prepares_arguments {
            self.arguments.check(&params).map_err(ToolError::Failed)?;
        }
        let args = CallToolArgs {
            run: self.session.run.clone(),
            tool: self.spec.name.clone(),
            call_id: ctx.tool_call_id.clone(),
            args: params,
        };
        let reply = tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            reply = self.session.call_reporting::<kind::CallTool>(args, ctx.on_progress.clone()) => reply,
        };
        match reply {
            Ok(reply) => {
                if reply.terminate {
                    self.terminations.record(&ctx.tool_call_id);
                }
                let result = ToolResult {
                    content: content_from_blocks(reply.content),
                    details: reply.details,
                };
                if reply.is_error {
                    // yoagent marks a tool error from `Err`; keep the content
                    // by folding it into the message.
                    let text = crate::run::convert::content_text(&result.content);
                    return Err(ToolError::Failed(text));
                }
                Ok(result)
            }
            // A tool's own error is its result, as pi's and MCP's tools give
            // it: the model reads the plugin's words (bounded), after fixed
            // ones that name the plugin. Any other failure (a crash, a
            // timeout) is fixed words only; the session logged the detail.
            Err(e) => Err(ToolError::Failed(match &e.error {
                CallError::Guest(message) => {
                    format!("[yohost] tool failed: {e}: {}", bounded(message))
                }
                _ => format!("[yohost] tool failed: {e}"),
            })),
        }
    }
}
