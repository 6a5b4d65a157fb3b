//! One plugin opened for one run, and the fail-closed rules for its hooks.
//!
//! | Hook that failed | Result |
//! | --- | --- |
//! | `before_tool` | the call is denied |
//! | `on_input` | the input is rejected |
//! | `after_tool` | the output is withheld and replaced by an error naming the plugin (a required plugin also fails the run) |
//! | any other | advisory: logged and skipped; required: the run fails, naming the plugin |
//!
//! After a crash or trap the plugin's instance is discarded and every later
//! call in the run fails closed without reaching the plugin.

use crate::error::{CallError, HookError};
use crate::invoke::call_hook;
use crate::manifest::Mode;
use crate::plugin::{LoadedPlugin, PluginRun};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yoagent::extension::{InputDecision, StopDecision, TurnDecision};
use yoagent::ToolDecision;
use yohost_contract::*;

/// How long the host waits for a plugin's queued events before `finish`.
const EVENT_DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// One plugin opened for one run.
pub struct PluginSession {
    pub(crate) plugin: Arc<LoadedPlugin>,
    session: Option<Arc<dyn PluginRun>>,
    pub(crate) run: RunInfo,
    cancel: CancellationToken,
    /// Why the instance is gone (it crashed, or never opened).
    discarded: Mutex<Option<String>>,
    /// A required plugin's failure, for the loop to act on.
    failure: Mutex<Option<String>>,
    events: Mutex<Option<mpsc::UnboundedSender<Arc<serde_json::Value>>>>,
    event_worker: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl PluginSession {
    /// Open `plugin` for `run`. A plugin that cannot open still gets a
    /// session, whose every call fails closed.
    pub(crate) async fn open(
        plugin: Arc<LoadedPlugin>,
        run: RunInfo,
        cancel: CancellationToken,
    ) -> Arc<Self> {
        let opened = plugin.plugin.open_run(&run).await;
        let (session, discarded) = match opened {
            Ok(session) => (Some(session), None),
            Err(error) => {
                tracing::error!(run_id = %run.run_id, plugin = %plugin.name, "plugin could not open for the run: {error}");
                (None, Some(format!("could not open for this run: {error}")))
            }
        };
        let this = Arc::new(Self {
            plugin,
            session,
            run,
            cancel,
            discarded: Mutex::new(discarded),
            failure: Mutex::new(None),
            events: Mutex::new(None),
            event_worker: Mutex::new(None),
        });
        if this.plugin.has(Hook::OnEvent) {
            let (tx, mut rx) = mpsc::unbounded_channel::<Arc<serde_json::Value>>();
            let worker = Arc::clone(&this);
            let handle = tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    let call = HookCall::OnEvent(OnEventArgs {
                        run: worker.run.clone(),
                        event: (*event).clone(),
                    });
                    if let Err(e) = worker.call(call).await {
                        worker.failed(&e);
                    }
                }
            });
            *lock(&this.events) = Some(tx);
            *lock(&this.event_worker) = Some(handle);
        }
        this
    }

    /// The plugin's name.
    pub(crate) fn name(&self) -> &str {
        &self.plugin.name
    }

    /// Whether the plugin implements `hook`.
    pub(crate) fn has(&self, hook: Hook) -> bool {
        self.plugin.has(hook)
    }

    /// Call the plugin, or fail closed if its instance is gone.
    pub(crate) async fn call(&self, call: HookCall) -> Result<HookReply, HookError> {
        let hook = call.hook();
        let gone = lock(&self.discarded).clone();
        let session = match (&self.session, gone) {
            (Some(session), None) => session,
            (_, why) => {
                return Err(HookError {
                    plugin: self.plugin.name.clone(),
                    hook,
                    error: CallError::Unloaded(
                        why.unwrap_or_else(|| "its instance is gone".into()),
                    ),
                })
            }
        };
        let result = call_hook(&self.plugin, session.as_ref(), call, &self.cancel).await;
        if let Err(e) = &result {
            if e.error.discards_instance() {
                tracing::error!(run_id = %self.run.run_id, plugin = %self.plugin.name, "plugin instance discarded for the rest of the run: {}", e.error);
                lock(&self.discarded).get_or_insert_with(|| e.error.to_string());
            }
        }
        result
    }

    /// Record a failure of a hook with no fail-closed answer of its own:
    /// logged, and for a required plugin kept to fail the run.
    pub(crate) fn failed(&self, error: &HookError) {
        if matches!(error.error, CallError::Cancelled) {
            return;
        }
        match self.plugin.mode() {
            Mode::Required => {
                tracing::error!(run_id = %self.run.run_id, plugin = %self.plugin.name, hook = %error.hook, "required plugin failed: {error}");
                lock(&self.failure).get_or_insert_with(|| error.to_string());
            }
            Mode::Advisory => {
                tracing::warn!(run_id = %self.run.run_id, plugin = %self.plugin.name, hook = %error.hook, "plugin hook failed and was skipped: {error}");
            }
        }
    }

    /// A required plugin's failure, once.
    pub(crate) fn take_failure(&self) -> Option<String> {
        lock(&self.failure).take()
    }

    /// The tools this plugin offers for the run.
    pub(crate) async fn tools(&self) -> Vec<ToolSpec> {
        match self.call(HookCall::Tools(self.run.clone())).await {
            Ok(HookReply::Tools(tools)) => tools,
            Ok(_) => Vec::new(),
            Err(e) => {
                self.failed(&e);
                Vec::new()
            }
        }
    }

    /// `before_tool`: a failure denies the call.
    pub(crate) async fn before_tool(&self, args: BeforeToolArgs) -> ToolDecision {
        match self.call(HookCall::BeforeTool(args)).await {
            Ok(HookReply::BeforeTool(BeforeToolReply::Allow)) => ToolDecision::Allow,
            Ok(HookReply::BeforeTool(BeforeToolReply::Deny(reason))) => ToolDecision::Deny(reason),
            Ok(HookReply::BeforeTool(BeforeToolReply::Rewrite(args))) => ToolDecision::Modify(args),
            Ok(_) => {
                ToolDecision::Deny(format!("[yohost] plugin '{}' gave no verdict", self.name()))
            }
            Err(e) => {
                tracing::warn!(run_id = %self.run.run_id, plugin = %self.name(), "before_tool failed; denying the call: {e}");
                ToolDecision::Deny(format!("[yohost] call denied: {e}"))
            }
        }
    }

    /// `after_tool`: edits `output` in place; a failure withholds it.
    pub(crate) async fn after_tool(&self, mut args: AfterToolArgs, output: &mut ToolOutputData) {
        args.output = output.clone();
        let failure = match self.call(HookCall::AfterTool(args)).await {
            Ok(HookReply::AfterTool(edit)) => {
                edit.apply(output);
                return;
            }
            Ok(_) => None,
            Err(e) => Some(e),
        };
        let why = failure.as_ref().map_or_else(
            || format!("plugin '{}' gave no reply", self.name()),
            |e| e.to_string(),
        );
        tracing::warn!(run_id = %self.run.run_id, plugin = %self.name(), "after_tool failed; withholding the output: {why}");
        *output = ToolOutputData {
            content: vec![ContentBlock::text(format!(
                "[yohost] output withheld: the output filter failed: {why}"
            ))],
            details: serde_json::Value::Null,
            is_error: true,
        };
        if let Some(e) = failure {
            if self.plugin.mode() == Mode::Required {
                self.failed(&e);
            }
        }
    }

    /// `before_model`.
    pub(crate) async fn before_model(&self, args: BeforeModelArgs) -> TurnDecision {
        match self.call(HookCall::BeforeModel(args)).await {
            Ok(HookReply::BeforeModel(BeforeModelReply::Note(note))) => TurnDecision::Note(note),
            Ok(HookReply::BeforeModel(BeforeModelReply::Stop(reason))) => {
                TurnDecision::Stop(reason)
            }
            Ok(_) => TurnDecision::Continue,
            Err(e) => self.skip_or_fail(e, TurnDecision::Continue, TurnDecision::Fail),
        }
    }

    /// `on_input`: a failure rejects the input.
    pub(crate) async fn on_input(&self, args: OnInputArgs) -> InputDecision {
        match self.call(HookCall::OnInput(args)).await {
            Ok(HookReply::OnInput(OnInputReply::Reject(reason))) => InputDecision::Reject(reason),
            Ok(_) => InputDecision::Pass,
            Err(e) => {
                tracing::warn!(run_id = %self.run.run_id, plugin = %self.name(), "on_input failed; rejecting the input: {e}");
                InputDecision::Reject(format!("[yohost] input rejected: {e}"))
            }
        }
    }

    /// `on_stop`.
    pub(crate) async fn on_stop(&self, args: OnStopArgs) -> StopDecision {
        match self.call(HookCall::OnStop(args)).await {
            Ok(HookReply::OnStop(OnStopReply::Continue(message))) => {
                StopDecision::Continue(message)
            }
            Ok(HookReply::OnStop(OnStopReply::Fail(reason))) => StopDecision::Fail(reason),
            Ok(_) => StopDecision::Accept,
            Err(e) => self.skip_or_fail(e, StopDecision::Accept, StopDecision::Fail),
        }
    }

    /// Queue an event for the plugin's `on_event`, in order, without waiting.
    pub(crate) fn on_event(&self, event: &Arc<serde_json::Value>) {
        if let Some(tx) = lock(&self.events).as_ref() {
            let _ = tx.send(Arc::clone(event));
        }
    }

    /// Drain queued events, call `finish`, and close the instance.
    pub(crate) async fn finish(&self, args: FinishArgs) {
        lock(&self.events).take();
        let worker = lock(&self.event_worker).take();
        if let Some(worker) = worker {
            if tokio::time::timeout(EVENT_DRAIN_TIMEOUT, worker)
                .await
                .is_err()
            {
                tracing::warn!(run_id = %self.run.run_id, plugin = %self.name(), "on_event did not catch up before finish");
            }
        }
        if self.has(Hook::Finish) {
            if let Err(e) = self.call(HookCall::Finish(args)).await {
                self.failed(&e);
            }
        }
        if let Some(session) = &self.session {
            session.close().await;
        }
    }

    /// A failed advisory hook is skipped; a required one's failure is the
    /// decision `fail` builds, naming the plugin.
    fn skip_or_fail<T>(&self, error: HookError, skip: T, fail: impl FnOnce(String) -> T) -> T {
        match self.plugin.mode() {
            Mode::Required if !matches!(error.error, CallError::Cancelled) => {
                tracing::error!(run_id = %self.run.run_id, plugin = %self.name(), "required plugin failed: {error}");
                fail(error.to_string())
            }
            _ => {
                self.failed(&error);
                skip
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
