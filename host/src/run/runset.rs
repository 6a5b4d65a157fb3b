//! The hooks of one run over a set of plugin sessions: the one place the
//! combination rules are enforced, once per call. The rules, with the
//! rechecks of rewritten calls, are the crate docs' combination table
//! ([`crate#how-several-plugins-combine`](crate#how-several-plugins-combine)).
//!
//! What the user asked (`user_request`, `latest_user_text`) is derived once
//! per turn, not per call per plugin.

use crate::call::decisions::{decision, CallRef, Decision};
use crate::model::sync::lock;
use crate::run::convert::{content_from_blocks, finish_args, message_text, output_data};
use crate::run::session::PluginSession;
use crate::run::terminate::Terminations;
use crate::run::tool::PluginTool;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use yoagent::extension::{
    ExtensionError, InputContext, InputDecision, RunContext, RunHooks, RunOutcome, StopContext,
    StopDecision, ToolOutput, TurnDecision,
};
use yoagent::{AgentEvent, AgentTool, ToolCallRequest, ToolDecision, TurnContext};
use yohost_contract::*;

/// What the user asked, derived from a conversation of a given length.
#[derive(Clone, Default)]
struct Derived {
    messages: usize,
    user_request: Option<String>,
    latest_user_text: Option<String>,
}

/// How a deny the host itself decides starts (the fixed text of R3).
const DENIED: &str = "[yohost] call denied: ";

/// Why a run stops when its tools asked it (`terminate`).
const TERMINATED: &str = "the turn's tools ended the run";

/// The plugin sessions of one run, in the order they run.
pub(crate) struct RunSet {
    sessions: Vec<Arc<PluginSession>>,
    run: RunInfo,
    derived: Mutex<Option<Derived>>,
    terminations: Arc<Terminations>,
}

/// A `before_tool` verdict over the run's policies, and the plugin that
/// gave it: the one that denied the call, or made the last rewrite (none
/// for an allowed call).
pub(crate) struct Verdict {
    pub(crate) decision: ToolDecision,
    pub(crate) by: Option<String>,
}

impl Verdict {
    fn of(decision: ToolDecision, by: Option<String>) -> Self {
        Self { decision, by }
    }
}

/// Log `session`'s deny of the call `at` and pass it on.
fn denied(at: &CallRef<'_>, session: &PluginSession, deny: ToolDecision) -> ToolDecision {
    if let ToolDecision::Deny(reason) = &deny {
        decision(at, session.name(), Hook::BeforeTool, Decision::Deny, reason);
    }
    deny
}

impl RunSet {
    pub(crate) fn new(sessions: Vec<Arc<PluginSession>>, run: RunInfo) -> Self {
        Self {
            sessions,
            run,
            derived: Mutex::new(None),
            terminations: Arc::default(),
        }
    }

    fn with(&self, hook: Hook) -> impl Iterator<Item = &Arc<PluginSession>> {
        self.sessions.iter().filter(move |s| s.has(hook))
    }

    /// `user_request` and `latest_user_text` of the call's conversation,
    /// computed once for each length of the conversation (once per turn).
    fn derived(&self, call: &ToolCallRequest<'_>) -> Derived {
        let mut cache = lock(&self.derived);
        match cache.as_ref() {
            Some(d) if d.messages == call.messages.len() => d.clone(),
            _ => {
                let d = Derived {
                    messages: call.messages.len(),
                    user_request: call.user_request(),
                    latest_user_text: call.latest_user_text(),
                };
                *cache = Some(d.clone());
                d
            }
        }
    }

    /// `before_tool` over the run's policies, with the policy that denied
    /// the call or last rewrote it: what [`RunHooks::before_tool`] answers.
    pub(crate) async fn judge(&self, call: &ToolCallRequest<'_>) -> Verdict {
        let policies: Vec<&Arc<PluginSession>> = self.with(Hook::BeforeTool).collect();
        let by = |session: &PluginSession| Some(session.name().to_string());
        if policies.is_empty() {
            return Verdict::of(ToolDecision::Allow, None);
        }
        let derived = self.derived(call);
        let request = |args: &serde_json::Value| BeforeToolArgs {
            run: self.run.clone(),
            tool: call.tool_name.to_string(),
            call_id: call.tool_call_id.to_string(),
            args: args.clone(),
            user_request: derived.user_request.clone(),
            latest_user_text: derived.latest_user_text.clone(),
        };
        let at = CallRef {
            run_id: &self.run.run_id,
            tool: call.tool_name,
            call_id: call.tool_call_id,
        };
        // The arguments as the last rewrite left them; until then, the
        // call's own (borrowed, not copied).
        let mut rewritten: Option<serde_json::Value> = None;
        // The position of the last policy that rewrote the arguments.
        let mut last_rewrite = None;
        for (i, session) in policies.iter().enumerate() {
            match session
                .before_tool(request(rewritten.as_ref().unwrap_or(call.args)))
                .await
            {
                ToolDecision::Allow => {}
                ToolDecision::Modify(new_args) => {
                    decision(
                        &at,
                        session.name(),
                        Hook::BeforeTool,
                        Decision::Rewrite,
                        &new_args,
                    );
                    rewritten = Some(new_args);
                    last_rewrite = Some(i);
                }
                deny => return Verdict::of(denied(&at, session, deny), by(session)),
            }
        }
        let (Some(last), Some(args)) = (last_rewrite, rewritten) else {
            return Verdict::of(ToolDecision::Allow, None);
        };
        // Every policy that judged arguments a later one rewrote judges the
        // final ones. Rechecks converge or deny: a deny wins, and so does a
        // rewrite (the policy would change the arguments again, so the later
        // rewrite undid or overrode its own), as a deny naming both plugins.
        for session in &policies[..last] {
            match session.before_tool(request(&args)).await {
                ToolDecision::Allow => {}
                ToolDecision::Modify(again) if again == args => {}
                ToolDecision::Modify(_) => {
                    let reason = format!(
                        "{}plugin '{}' would rewrite the call again after plugin '{}' rewrote it: rewrites must converge",
                        DENIED,
                        session.name(),
                        policies[last].name()
                    );
                    let deny = denied(&at, session, ToolDecision::Deny(reason));
                    return Verdict::of(deny, by(session));
                }
                deny => return Verdict::of(denied(&at, session, deny), by(session)),
            }
        }
        Verdict::of(ToolDecision::Modify(args), by(policies[last]))
    }
}

#[async_trait::async_trait]
impl RunHooks for RunSet {
    async fn tools(&mut self, _run: &RunContext<'_>) -> Vec<Arc<dyn AgentTool>> {
        let mut seen = HashSet::new();
        let mut tools: Vec<Arc<dyn AgentTool>> = Vec::new();
        for session in self.with(Hook::Tools) {
            for spec in session.tools().await {
                if seen.insert(spec.name.clone()) {
                    let tool =
                        PluginTool::new(Arc::clone(session), spec, Arc::clone(&self.terminations));
                    // A schema over the host's budget: the tool is not
                    // offered (its name stays taken, so no later plugin's
                    // tool takes its place).
                    if let Some(why) = tool.refusal() {
                        tracing::warn!(run_id = %self.run.run_id, plugin = %session.name(), tool = %tool.name(), "{why}");
                        continue;
                    }
                    tools.push(Arc::new(tool));
                } else {
                    tracing::warn!(run_id = %self.run.run_id, plugin = %session.name(), tool = %spec.name, "tool name already offered by a plugin that runs earlier; ignored");
                }
            }
        }
        tools
    }

    async fn on_input(&mut self, input: &InputContext<'_>) -> InputDecision {
        for session in self.with(Hook::OnInput) {
            let args = OnInputArgs {
                run: self.run.clone(),
                text: input.text.to_string(),
            };
            if let InputDecision::Reject(reason) = session.on_input(args).await {
                return InputDecision::Reject(reason);
            }
        }
        InputDecision::Pass
    }

    async fn before_model(&mut self, turn: &TurnContext<'_>) -> TurnDecision {
        if self.terminations.ends_before(turn.messages) {
            tracing::debug!(run_id = %self.run.run_id, "every tool result of the turn asked to end the run");
            return TurnDecision::Stop(TERMINATED.into());
        }
        let mut plugins = self.with(Hook::BeforeModel).peekable();
        if plugins.peek().is_none() {
            return TurnDecision::Continue;
        }
        let args = BeforeModelArgs {
            run: self.run.clone(),
            model: turn.model.to_string(),
            tools: turn.tools.iter().map(|t| t.name.clone()).collect(),
            user_request: turn.user_request(),
        };
        let mut notes = Vec::new();
        for session in plugins {
            match session.before_model(args.clone()).await {
                TurnDecision::Note(note) if !note.trim().is_empty() => notes.push(note),
                TurnDecision::Stop(reason) => return TurnDecision::Stop(reason),
                TurnDecision::Fail(reason) => return TurnDecision::Fail(reason),
                _ => {}
            }
        }
        if notes.is_empty() {
            TurnDecision::Continue
        } else {
            TurnDecision::Note(notes.join("\n"))
        }
    }

    async fn before_tool(&self, call: &ToolCallRequest<'_>) -> ToolDecision {
        self.judge(call).await.decision
    }

    async fn after_tool(
        &self,
        call: &ToolCallRequest<'_>,
        output: &mut ToolOutput,
    ) -> Result<(), ExtensionError> {
        let mut plugins = self.with(Hook::AfterTool).peekable();
        if plugins.peek().is_none() {
            return Ok(());
        }
        let original = output_data(&output.result, output.is_error);
        let mut data = original.clone();
        for session in plugins {
            let args = AfterToolArgs {
                run: self.run.clone(),
                tool: call.tool_name.to_string(),
                call_id: call.tool_call_id.to_string(),
                args: call.args.clone(),
                output: data.clone(),
            };
            let before = data.clone();
            let at = CallRef {
                run_id: &self.run.run_id,
                tool: call.tool_name,
                call_id: call.tool_call_id,
            };
            let name = session.name();
            match session.after_tool(args, &mut data).await {
                Err(e) => {
                    decision(&at, name, Hook::AfterTool, Decision::Fail, &e.error);
                }
                Ok(()) if data != before => {
                    decision(&at, name, Hook::AfterTool, Decision::EditOutput, &"");
                }
                Ok(()) => {}
            }
        }
        if data != original {
            output.result.content = content_from_blocks(data.content);
            output.result.details = data.details;
            output.is_error = data.is_error;
        }
        Ok(())
    }

    async fn on_stop(&mut self, stop: &StopContext<'_>) -> StopDecision {
        let mut continues = Vec::new();
        for session in self.with(Hook::OnStop) {
            let args = OnStopArgs {
                run: self.run.clone(),
                answer: message_text(stop.answer),
                continues: stop.continues,
            };
            match session.on_stop(args).await {
                StopDecision::Continue(message) => continues.push(message),
                StopDecision::Fail(reason) => return StopDecision::Fail(reason),
                _ => {}
            }
        }
        if continues.is_empty() {
            StopDecision::Accept
        } else {
            StopDecision::Continue(continues.join("\n"))
        }
    }

    fn on_event(&self, event: &AgentEvent) {
        let mut observers = self.with(Hook::OnEvent).peekable();
        if observers.peek().is_none() {
            return;
        }
        match serde_json::to_value(event) {
            Ok(json) => {
                let json = Arc::new(json);
                for session in observers {
                    session.on_event(&json);
                }
            }
            Err(e) => {
                for session in observers {
                    session.event_lost(&e.to_string());
                }
            }
        }
    }

    fn take_failure(&self) -> Option<String> {
        self.sessions.iter().find_map(|s| s.take_failure())
    }

    async fn finish(&mut self, outcome: &RunOutcome) {
        let args = finish_args(self.run.clone(), outcome);
        for session in &self.sessions {
            session.finish(args.clone()).await;
        }
    }
}
