//! One plugin opened for one run: the one place the fail-closed rules are
//! enforced.
//!
//! The rules are the crate docs' fail-closed table
//! ([`crate#fail-closed`](crate#fail-closed)). Here:
//! - every call of the run goes through `PluginSession::call`, typed by
//!   its hook; a failed call is handled there once: the plugin is unloaded
//!   for the rest of the run when the error
//!   [discards the instance](CallError::discards_instance), one log line
//!   carries `run_id`, `plugin`, `hook` and `error_kind`, and a required
//!   plugin's failure that fails the run is recorded;
//! - each hook's method turns a failure into its hook's fail-closed answer,
//!   in fixed words that name the plugin and the kind of failure.

use crate::call::error::{CallError, HookError};
use crate::call::logging::RunLogs;
use crate::call::plugin::PluginRun;
use crate::call::ui::UserInterface;
use crate::load::loaded::LoadedPlugin;
use crate::model::sync::lock;
use crate::model::Mode;
use crate::run::invoke::call_hook_within;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use yoagent::extension::{InputDecision, StopDecision, TurnDecision};
use yoagent::ToolDecision;
use yohost_contract::kind::{self, HookKind};
use yohost_contract::*;

/// How long the host waits for a plugin's queued events before `finish`.
const EVENT_DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What a failed call of a hook does in the safe direction: the rows of the
/// fail-closed table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailClosed {
    /// `before_tool`: the call is denied.
    DenyCall,
    /// `on_input`: the input is rejected.
    RejectInput,
    /// `after_tool`: the output is withheld.
    WithholdOutput,
    /// `call_tool`: the tool call ends in an error.
    FailToolCall,
    /// Any other hook: an advisory plugin's hook is skipped.
    Skip,
}

impl FailClosed {
    fn of(hook: Hook) -> Self {
        match hook {
            Hook::BeforeTool => FailClosed::DenyCall,
            Hook::OnInput => FailClosed::RejectInput,
            Hook::AfterTool => FailClosed::WithholdOutput,
            Hook::CallTool => FailClosed::FailToolCall,
            // A command runs outside any run: its failure is its caller's
            // answer (`PluginHost::run_command`), never through a session.
            Hook::Tools
            | Hook::BeforeModel
            | Hook::OnStop
            | Hook::OnEvent
            | Hook::Finish
            | Hook::Command => FailClosed::Skip,
        }
    }

    /// Whether a failure of a plugin in `mode` also fails the run: a
    /// required plugin's, except where the hook guards a single call or
    /// input (denying or rejecting is the whole answer), and except a tool:
    /// a tool that fails is that call's error result, which the model
    /// reads, whatever the plugin's mode (`required` is about the hooks
    /// that guard and shape the run; a plugin unloaded for the run by its
    /// tool's crash fails its guards closed from then on).
    fn fails_run(self, mode: Mode) -> bool {
        mode == Mode::Required
            && !matches!(
                self,
                FailClosed::DenyCall | FailClosed::RejectInput | FailClosed::FailToolCall
            )
    }

    /// The `outcome` field of the failure's log line.
    fn as_str(self) -> &'static str {
        match self {
            FailClosed::DenyCall => "call_denied",
            FailClosed::RejectInput => "input_rejected",
            FailClosed::WithholdOutput => "output_withheld",
            FailClosed::FailToolCall => "tool_call_failed",
            FailClosed::Skip => "skipped",
        }
    }
}

/// Whether the failure of `hook` fails the run through the hook's own
/// decision (`Fail`), rather than through `take_failure` at the loop's next
/// boundary.
fn decides_failure(hook: Hook) -> bool {
    matches!(hook, Hook::BeforeModel | Hook::OnStop)
}

/// One plugin opened for one run.
pub struct PluginSession {
    pub(crate) plugin: Arc<LoadedPlugin>,
    run_handle: Option<Arc<dyn PluginRun>>,
    pub(crate) run: RunInfo,
    cancel: CancellationToken,
    /// The app's user interface its calls may ask (`None`: headless).
    ui: Option<Arc<dyn UserInterface>>,
    /// The plugin's log bounds in the run, shared by its calls.
    logs: RunLogs,
    /// Why the plugin is unloaded for the rest of the run (it crashed, ran
    /// out of memory or time, or never opened).
    unloaded: Mutex<Option<String>>,
    /// A required plugin's failure, for the loop to act on.
    failure: Mutex<Option<String>>,
    events: Mutex<Option<mpsc::UnboundedSender<Arc<serde_json::Value>>>>,
    event_worker: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl PluginSession {
    /// Open `plugin` for `run`, its calls able to ask `ui`. A plugin that
    /// cannot open still gets a session, whose every call fails closed.
    pub(crate) async fn open(
        plugin: Arc<LoadedPlugin>,
        run: RunInfo,
        cancel: CancellationToken,
        ui: Option<Arc<dyn UserInterface>>,
    ) -> Arc<Self> {
        let (run_handle, unloaded) = match plugin.plugin.open_run(&run).await {
            Ok(handle) => (Some(handle), None),
            Err(error) => {
                tracing::error!(run_id = %run.run_id, plugin = %plugin.name, error_kind = error.kind(), "plugin could not open for the run; its calls fail closed: {error}");
                (
                    None,
                    Some(format!("it could not open for this run: {error}")),
                )
            }
        };
        let logs = RunLogs::open(&run.run_id, &plugin.name);
        let this = Arc::new(Self {
            plugin,
            run_handle,
            run,
            cancel,
            ui,
            logs,
            unloaded: Mutex::new(unloaded),
            failure: Mutex::new(None),
            events: Mutex::new(None),
            event_worker: Mutex::new(None),
        });
        if this.plugin.has(Hook::OnEvent) {
            let (tx, mut rx) = mpsc::unbounded_channel::<Arc<serde_json::Value>>();
            let worker = Arc::clone(&this);
            let handle = tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    let args = OnEventArgs {
                        run: worker.run.clone(),
                        event: (*event).clone(),
                    };
                    // A failure is handled (logged, recorded) by `call`.
                    let _ = worker.call::<kind::OnEvent>(args).await;
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

    /// Call hook `K`, or fail closed without reaching the plugin if it is
    /// unloaded for the rest of the run. Every call is counted in the
    /// plugin's [figures](crate::call::stats). A failure is handled here, once
    /// (see the module docs), and returned for the hook's own answer.
    pub(crate) async fn call<K: HookKind>(&self, args: K::Args) -> Result<K::Reply, HookError> {
        self.call_reporting::<K>(args, None).await
    }

    /// [`call`](Self::call), with where the call may report progress
    /// (a tool call's [`CallLimits::progress`](crate::CallLimits::progress)).
    pub(crate) async fn call_reporting<K: HookKind>(
        &self,
        args: K::Args,
        progress: Option<yoagent::ProgressFn>,
    ) -> Result<K::Reply, HookError> {
        let unloaded = lock(&self.unloaded).clone();
        let (result, latency) = match (&self.run_handle, unloaded) {
            (Some(handle), None) => {
                let started = Instant::now();
                let call = K::call(args);
                let result = call_hook_within::<K>(
                    &self.plugin,
                    handle.as_ref(),
                    call,
                    &self.cancel,
                    &self.logs,
                    self.ui.clone(),
                    progress,
                )
                .await;
                (result, Some(started.elapsed()))
            }
            (_, why) => (
                Err(HookError {
                    plugin: self.plugin.name.clone(),
                    hook: K::HOOK,
                    error: CallError::Unloaded(why.unwrap_or_else(|| "it never opened".into())),
                }),
                None,
            ),
        };
        let error = result.as_ref().err().map(|e| &e.error);
        let latency = latency.filter(|_| !matches!(error, Some(CallError::Cancelled)));
        self.plugin.stats.record(K::HOOK, latency, error);
        if let Err(error) = &result {
            self.failed(error);
        }
        result
    }

    /// Handle a failed call: unload the plugin for the run if the error
    /// discards it, log the one line, and record a failure that fails the
    /// run at the loop's next boundary.
    fn failed(&self, error: &HookError) {
        let unloads = error.error.discards_instance();
        if unloads {
            lock(&self.unloaded).get_or_insert_with(|| format!("it {}", error.error));
        }
        let rule = FailClosed::of(error.hook);
        let cancelled = matches!(error.error, CallError::Cancelled);
        let fails_run = !cancelled && rule.fails_run(self.plugin.mode());
        let (run_id, plugin, hook, kind) = (
            self.run.run_id.as_str(),
            self.name(),
            error.hook.as_str(),
            error.error.kind(),
        );
        let outcome = rule.as_str();
        let detail = &error.error;
        if cancelled {
            tracing::debug!(
                run_id,
                plugin,
                hook,
                error_kind = kind,
                outcome,
                "hook abandoned: {detail}"
            );
        } else if fails_run {
            tracing::error!(
                run_id,
                plugin,
                hook,
                error_kind = kind,
                outcome,
                unloaded = unloads,
                fails_run,
                "required plugin's hook failed; the run fails: {detail}"
            );
        } else {
            tracing::warn!(
                run_id,
                plugin,
                hook,
                error_kind = kind,
                outcome,
                unloaded = unloads,
                fails_run,
                "plugin hook failed: {detail}"
            );
        }
        if fails_run && !decides_failure(error.hook) {
            lock(&self.failure).get_or_insert_with(|| error.to_string());
        }
    }

    /// Whether `error` fails the run (a required plugin's, as the table
    /// says), for the hooks whose decision carries the failure.
    fn fails_run(&self, error: &HookError) -> bool {
        !matches!(error.error, CallError::Cancelled)
            && FailClosed::of(error.hook).fails_run(self.plugin.mode())
    }

    /// An event could not be given to the plugin's `on_event` (the host
    /// could not encode it): the hook's rule applies, an advisory plugin
    /// misses it, a required one fails the run.
    pub(crate) fn event_lost(&self, why: &str) {
        let (run_id, plugin, hook) = (self.run.run_id.as_str(), self.name(), "on_event");
        if FailClosed::Skip.fails_run(self.plugin.mode()) {
            tracing::error!(
                run_id,
                plugin,
                hook,
                "an event could not be encoded for a required plugin; the run fails: {why}"
            );
            lock(&self.failure).get_or_insert_with(|| {
                format!(
                    "plugin '{}' missed an event the host could not encode (on_event)",
                    self.name()
                )
            });
        } else {
            tracing::warn!(
                run_id,
                plugin,
                hook,
                "an event could not be encoded; the plugin misses it: {why}"
            );
        }
    }

    /// A required plugin's failure, once.
    pub(crate) fn take_failure(&self) -> Option<String> {
        lock(&self.failure).take()
    }

    /// The tools this plugin offers for the run (none if `tools` failed).
    pub(crate) async fn tools(&self) -> Vec<ToolSpec> {
        self.call::<kind::Tools>(self.run.clone())
            .await
            .unwrap_or_default()
    }

    /// `before_tool`: a failure denies the call.
    pub(crate) async fn before_tool(&self, args: BeforeToolArgs) -> ToolDecision {
        match self.call::<kind::BeforeTool>(args).await {
            Ok(BeforeToolReply::Allow) => ToolDecision::Allow,
            Ok(BeforeToolReply::Deny(reason)) => ToolDecision::Deny(reason),
            Ok(BeforeToolReply::Rewrite(args)) => ToolDecision::Modify(args),
            Err(e) => ToolDecision::Deny(format!("[yohost] call denied: {e}")),
        }
    }

    /// `after_tool`: edits `output` in place; a failure withholds it.
    pub(crate) async fn after_tool(
        &self,
        mut args: AfterToolArgs,
        output: &mut ToolOutputData,
    ) -> Result<(), HookError> {
        args.output = output.clone();
        match self.call::<kind::AfterTool>(args).await {
            Ok(edit) => {
                edit.apply(output);
                Ok(())
            }
            Err(e) => {
                *output = ToolOutputData {
                    content: vec![ContentBlock::text(format!("[yohost] output withheld: {e}"))],
                    details: serde_json::Value::Null,
                    is_error: true,
                };
                Err(e)
            }
        }
    }

    /// `before_model`.
    pub(crate) async fn before_model(&self, args: BeforeModelArgs) -> TurnDecision {
        match self.call::<kind::BeforeModel>(args).await {
            Ok(BeforeModelReply::Note(note)) => TurnDecision::Note(note),
            Ok(BeforeModelReply::Stop(reason)) => TurnDecision::Stop(reason),
            Ok(BeforeModelReply::Continue) => TurnDecision::Continue,
            Err(e) if self.fails_run(&e) => TurnDecision::Fail(e.to_string()),
            Err(_) => TurnDecision::Continue,
        }
    }

    /// `on_input`: a failure rejects the input.
    pub(crate) async fn on_input(&self, args: OnInputArgs) -> InputDecision {
        match self.call::<kind::OnInput>(args).await {
            Ok(OnInputReply::Reject(reason)) => InputDecision::Reject(reason),
            Ok(OnInputReply::Pass) => InputDecision::Pass,
            Err(e) => InputDecision::Reject(format!("[yohost] input rejected: {e}")),
        }
    }

    /// `on_stop`.
    pub(crate) async fn on_stop(&self, args: OnStopArgs) -> StopDecision {
        match self.call::<kind::OnStop>(args).await {
            Ok(OnStopReply::Continue(message)) => StopDecision::Continue(message),
            Ok(OnStopReply::Fail(reason)) => StopDecision::Fail(reason),
            Ok(OnStopReply::Accept) => StopDecision::Accept,
            Err(e) if self.fails_run(&e) => StopDecision::Fail(e.to_string()),
            Err(_) => StopDecision::Accept,
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
            // A failure is handled (logged, recorded) by `call`.
            let _ = self.call::<kind::Finish>(args).await;
        }
        if let Some(handle) = &self.run_handle {
            handle.close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fail_closed_table_guards_calls_in_both_modes_and_fails_runs_for_required_plugins_but_not_for_tools(
    ) {
        for hook in Hook::ALL {
            let rule = FailClosed::of(hook);
            let single_call = matches!(hook, Hook::BeforeTool | Hook::OnInput | Hook::CallTool);
            assert!(!rule.fails_run(Mode::Advisory), "{hook}");
            assert_eq!(rule.fails_run(Mode::Required), !single_call, "{hook}");
        }
        assert_eq!(FailClosed::of(Hook::BeforeTool), FailClosed::DenyCall);
        assert_eq!(FailClosed::of(Hook::OnInput), FailClosed::RejectInput);
        assert_eq!(FailClosed::of(Hook::AfterTool), FailClosed::WithholdOutput);
        assert_eq!(FailClosed::of(Hook::CallTool), FailClosed::FailToolCall);
    }

    async fn observer(mode: &str) -> Arc<PluginSession> {
        let manifest =
            crate::load::manifest::Manifest::parse(&format!("mode = \"{mode}\"")).unwrap();
        let plugin = crate::NativePlugin::loaded("observer", &[Hook::OnEvent], manifest, |_| {
            Ok(HookReply::Ignored)
        });
        let run = RunInfo {
            run_id: "r1".into(),
            ..RunInfo::default()
        };
        PluginSession::open(Arc::new(plugin), run, CancellationToken::new(), None).await
    }

    #[tokio::test]
    async fn an_event_that_cannot_be_encoded_fails_the_run_of_a_required_observer_only() {
        let required = observer("required").await;
        required.event_lost("a map key is not a string");
        let failure = required.take_failure().expect("the run fails");
        assert!(failure.contains("plugin 'observer'"), "{failure}");
        let advisory = observer("advisory").await;
        advisory.event_lost("a map key is not a string");
        assert_eq!(advisory.take_failure(), None);
    }
}
