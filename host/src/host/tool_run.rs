//! [`ToolRun`]: the plugins' tools called without a model, each call
//! through the whole policy chain, as yoagent's loop makes it.

use crate::host::plugin_host::PluginHost;
use crate::load::registry::Snapshot;
use crate::model::sync::lock;
use crate::run::extension::{HostExtension, HOST_EXTENSION_NAME};
use crate::run::runset::RunSet;
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use yoagent::extension::{
    ExtensionError, RunContext, RunEnd, RunHooks, RunOutcome, ToolOutput, FINISH_TIMEOUT,
};
use yoagent::{
    AgentEvent, AgentTool, Content, ProgressFn, ToolCallRequest, ToolContext, ToolDecision,
    ToolError, ToolResult,
};
use yohost_contract::Hook;

/// One run of a [`PluginHost`]'s plugins with no model: an app (an MCP
/// server, a test, a batch job) calls their tools by name, and every call
/// passes the same chain as in an agent's run, in the loop's order and
/// with its fail-closed rules. The plugins form one
/// [`HostExtension`](crate::HostExtension), started for the run
/// (`start_run`) with a snapshot of the plugins; then, per call:
/// `before_tool` (a deny ends the call, a rewrite runs; a hook that panics
/// denies), the tool (its arguments checked against its schema, within its
/// deadline and the call's cancel), `after_tool` (a filter that fails
/// withholds the output), and the tool events for observers (`on_event`).
/// [`finish`](Self::finish) ends the run (`finish` of every plugin).
///
/// Calls may run at once (`&self`). The run's `run_id` is on every line its
/// plugins log. There is no conversation: a policy's `user_request` and
/// `latest_user_text` are absent. A required plugin's failure fails the run, as in an agent's
/// run: no call starts after it ([`ToolCallOutcome::NotStarted`]).
pub struct ToolRun {
    extension: HostExtension,
    run_id: String,
    cancel: CancellationToken,
    /// Calls hold it shared; `finish` waits for them, exclusive.
    hooks: tokio::sync::RwLock<RunSet>,
    tools: Vec<Arc<dyn AgentTool>>,
    snapshot: Arc<Snapshot>,
    /// Why no call starts any more: the run failed, or finished.
    over: Mutex<Option<String>>,
    finished: AtomicBool,
    calls: AtomicU64,
}

/// How a call through a [`ToolRun`] ended.
#[derive(Debug)]
pub enum ToolCallOutcome {
    /// The tool ran (`is_error` when it failed), and the output filters
    /// (`after_tool`) saw its output: this is what a model would read.
    Ran(ToolOutput),
    /// A policy denied the call, with its reason (a host's fixed text when
    /// the policy failed); `policy` names the plugin, when one decided.
    Denied {
        /// The plugin that denied the call.
        policy: Option<String>,
        /// Why, as the model would read it.
        reason: String,
    },
    /// The run offers no tool of that name.
    UnknownTool,
    /// The call was cancelled before it ended; its output, if any, was
    /// dropped unseen.
    Cancelled,
    /// No call starts: the run failed (a required plugin's failure, named)
    /// or finished.
    NotStarted(String),
}

/// A future's output, or the panic it raised as text.
async fn guarded<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(|panic| {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned());
            format!("panicked: {}", text.unwrap_or_default())
        })
}

/// A tool result of one text.
fn text_result(text: String) -> ToolResult {
    ToolResult {
        content: vec![Content::Text { text }],
        details: serde_json::Value::Null,
    }
}

impl ToolRun {
    /// Start a run of `host`'s plugins as they are now, named `run_id`.
    /// Fails as an agent's run would fail to start: a required plugin was
    /// refused (the error names it and why).
    pub async fn open(
        host: &PluginHost,
        run_id: impl Into<String>,
    ) -> Result<Self, ExtensionError> {
        let (extension, run_id) = (host.extension(), run_id.into());
        let cancel = CancellationToken::new();
        let run = RunContext::new(&run_id, &[], &cancel);
        let (mut hooks, snapshot) = extension.open_run(&run).await?;
        let (tools, over) = match guarded(hooks.tools(&run)).await {
            Ok(tools) => (tools, None),
            Err(panic) => (Vec::new(), Some(format!("tools failed: {panic}"))),
        };
        Ok(Self {
            extension,
            run_id,
            cancel,
            hooks: tokio::sync::RwLock::new(hooks),
            tools,
            snapshot,
            over: Mutex::new(over),
            finished: AtomicBool::new(false),
            calls: AtomicU64::new(0),
        })
    }

    /// The run's id, as its plugins' log lines carry it.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The tools the run offers, in the plugins' running order (a name
    /// offered twice is the first plugin's).
    pub fn tools(&self) -> &[Arc<dyn AgentTool>] {
        &self.tools
    }

    /// Whether the host's plugins are no longer those this run started
    /// with (one was added, changed, removed or refused): a new run would
    /// offer other tools. May rescan the directory, which blocks: call it
    /// off the async threads.
    pub fn plugins_changed(&self) -> bool {
        let now = self.extension.snapshot();
        let same = |a: &Snapshot, b: &Snapshot| {
            a.plugins.len() == b.plugins.len()
                && a.plugins
                    .iter()
                    .zip(&b.plugins)
                    .all(|(x, y)| Arc::ptr_eq(x, y))
                && a.refused.len() == b.refused.len()
                && a.refused
                    .iter()
                    .zip(&b.refused)
                    .all(|(x, y)| x.name == y.name && x.reason.to_string() == y.reason.to_string())
        };
        !same(&now, &self.snapshot)
    }

    /// Call the tool `name` with `args`, through the policies and filters.
    /// `cancel` cancels the call; the tool's own deadline applies either
    /// way.
    pub async fn call(
        &self,
        name: &str,
        args: serde_json::Value,
        cancel: &CancellationToken,
    ) -> ToolCallOutcome {
        self.call_reporting(name, args, cancel, None).await
    }

    /// [`call`](Self::call), with `progress` getting the messages the tool
    /// reports while it runs (yoagent's `ToolContext::on_progress`), bounded
    /// by the host ([`progress`](crate::adapter::progress)); the engines that
    /// have no way to report progress (dylib, Wasm) send none. None comes
    /// after the call returns. While a plugin of the run filters tool
    /// output (`after_tool`), none comes at all, as in yoagent's loop: the
    /// filter sees only the final result, so a message could carry what it
    /// would withhold.
    pub async fn call_reporting(
        &self,
        name: &str,
        args: serde_json::Value,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
    ) -> ToolCallOutcome {
        let token = self.cancel.child_token();
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => ToolCallOutcome::Cancelled,
            outcome = self.call_within(name, args, &token, progress) => outcome,
        };
        token.cancel();
        outcome
    }

    async fn call_within(
        &self,
        name: &str,
        args: serde_json::Value,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
    ) -> ToolCallOutcome {
        let hooks = self.hooks.read().await;
        if let Some(why) = self.not_started(&hooks) {
            return ToolCallOutcome::NotStarted(why);
        }
        let id = format!("call-{}", self.calls.fetch_add(1, Ordering::Relaxed) + 1);
        let request = ToolCallRequest::new(&id, name, &args);
        let args = match guarded(hooks.judge(&request)).await {
            Ok(verdict) => match verdict.decision {
                ToolDecision::Allow => args,
                ToolDecision::Modify(rewritten) => rewritten,
                ToolDecision::Deny(reason) => {
                    return self.denied(&hooks, &id, name, &args, verdict.by, reason)
                }
            },
            Err(panic) => {
                tracing::warn!(run_id = %self.run_id, tool_call_id = %id, "before_tool failed; denying the call: {panic}");
                let reason = format!("extension '{HOST_EXTENSION_NAME}' failed to check the call");
                return self.denied(&hooks, &id, name, &args, None, reason);
            }
        };
        if cancel.is_cancelled() {
            return ToolCallOutcome::Cancelled;
        }
        if let Some(why) = self.not_started(&hooks) {
            return ToolCallOutcome::NotStarted(why);
        }
        let Some(tool) = self.tools.iter().find(|t| t.name() == name) else {
            return ToolCallOutcome::UnknownTool;
        };
        hooks.on_event(&AgentEvent::ToolExecutionStart {
            tool_call_id: id.clone(),
            tool_name: name.to_string(),
            args: args.clone(),
        });
        let mut ctx = ToolContext::new(id.as_str(), name).with_cancel(cancel.clone());
        let filtered = self.snapshot.plugins.iter().any(|p| p.has(Hook::AfterTool));
        ctx.on_progress = progress.filter(|_| !filtered);
        let (result, is_error) = match guarded(tool.execute(args.clone(), ctx)).await {
            Ok(Ok(result)) => (result, false),
            Ok(Err(ToolError::Cancelled)) => return ToolCallOutcome::Cancelled,
            Ok(Err(e)) => (text_result(e.to_string()), true),
            Err(panic) => (text_result(format!("tool '{name}' {panic}")), true),
        };
        if cancel.is_cancelled() {
            return ToolCallOutcome::Cancelled;
        }
        let mut output = ToolOutput::new(result, is_error);
        let request = ToolCallRequest::new(&id, name, &args);
        let filtered = match guarded(hooks.after_tool(&request, &mut output)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(panic) => Err(panic),
        };
        if let Err(why) = filtered {
            // As the loop does: withheld, and the required extension's
            // failure fails the run.
            output = ToolOutput::new(
                text_result(format!(
                    "Tool result withheld: extension '{HOST_EXTENSION_NAME}' did not finish processing it."
                )),
                true,
            );
            self.fail(format!("after_tool failed: {why}"));
        }
        hooks.on_event(&AgentEvent::ToolExecutionEnd {
            tool_call_id: id,
            tool_name: name.to_string(),
            result: output.result.clone(),
            is_error: output.is_error,
        });
        ToolCallOutcome::Ran(output)
    }

    /// The outcome of a denied call, with its events.
    fn denied(
        &self,
        hooks: &RunSet,
        id: &str,
        name: &str,
        args: &serde_json::Value,
        policy: Option<String>,
        reason: String,
    ) -> ToolCallOutcome {
        hooks.on_event(&AgentEvent::ToolExecutionStart {
            tool_call_id: id.to_string(),
            tool_name: name.to_string(),
            args: args.clone(),
        });
        hooks.on_event(&AgentEvent::ToolExecutionEnd {
            tool_call_id: id.to_string(),
            tool_name: name.to_string(),
            result: text_result(format!("Tool call denied: {reason}")),
            is_error: true,
        });
        ToolCallOutcome::Denied { policy, reason }
    }

    /// Why no call starts, if so: the run finished, or failed (a failure
    /// the plugins recorded is taken now, once, and kept).
    fn not_started(&self, hooks: &RunSet) -> Option<String> {
        if let Some(failure) = hooks.take_failure() {
            self.fail(failure);
        }
        lock(&self.over).clone()
    }

    /// The run failed: no call starts after this.
    fn fail(&self, why: String) {
        tracing::error!(run_id = %self.run_id, extension = HOST_EXTENSION_NAME, "required extension failed: {why}");
        lock(&self.over).get_or_insert(format!("the run failed: {why}"));
    }

    /// End the run once the calls under way have ended: every plugin's
    /// `finish` runs (bounded as in yoagent's loop), with the run's end
    /// (`failed` after a required plugin's failure, else `completed`).
    /// Later calls do not start; a second `finish` does nothing.
    pub async fn finish(&self) {
        let mut hooks = self.hooks.write().await;
        if self.finished.swap(true, Ordering::SeqCst) {
            return;
        }
        let failure = hooks.take_failure().or_else(|| lock(&self.over).clone());
        let end = match failure {
            Some(error) => RunEnd::Failed {
                error,
                extension: Some(HOST_EXTENSION_NAME.into()),
            },
            None => RunEnd::Completed,
        };
        lock(&self.over).get_or_insert_with(|| "the run has finished".into());
        let outcome = RunOutcome::new(end, None);
        match tokio::time::timeout(FINISH_TIMEOUT, guarded(hooks.finish(&outcome))).await {
            Ok(Ok(())) => {}
            Ok(Err(panic)) => tracing::error!(run_id = %self.run_id, "finish failed: {panic}"),
            Err(_) => {
                tracing::error!(run_id = %self.run_id, "finish did not end within {FINISH_TIMEOUT:?}")
            }
        }
        // What the plugins' sessions still hold of the run ends now.
        self.cancel.cancel();
    }
}
