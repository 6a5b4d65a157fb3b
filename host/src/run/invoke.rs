//! One typed hook call, bounded: the deadline, the run's cancel, the span,
//! and the checks on what comes back. Every engine's calls pass through
//! here, and only here:
//!
//! - the deadline is enforced once, here. Engines get it in
//!   [`CallLimits`] to interrupt running code (epochs, interrupt handlers,
//!   async exceptions), never to time the call themselves; a call still
//!   unanswered at its deadline is [`CallError::Timeout`] with the plugin's
//!   timeout for the hook, whichever side noticed first;
//! - the reply is read once, strictly, into the hook's own type, by
//!   [`HookKind::parse_reply`] (a deny gives a reason: the contract's rule,
//!   [`BeforeToolReply::check`](yohost_contract::BeforeToolReply::check));
//! - a plugin's log lines during the call are bounded
//!   ([`crate::call::logging`]: lines over the call's bound are dropped, and
//!   counted when it ends);
//! - the content a reply shows the model ([`HookKind::content`]) is
//!   checked against the limits.

use crate::call::error::{CallError, HookError};
use crate::call::logging::{hook_span, RunLogs};
use crate::call::plugin::{CallLimits, PluginRun};
use crate::call::ui::UserInterface;
use crate::load::loaded::LoadedPlugin;
use crate::model::limits::check_content;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use yohost_contract::{HookCall, HookKind, ReplyError};

/// Call hook `K` with `args` on `run` of `plugin`, within the plugin's
/// timeout for `K` and the run's `cancel`. The reply is `K`'s own, and its
/// images are within the limits. The plugin's log lines during the call are
/// bounded as in a run of its own (in a run, the plugin's session holds one
/// bound for all its calls). The call is headless: a plugin that asks the
/// user gets the headless answers ([`crate::Headless`]).
pub async fn call_hook<K: HookKind>(
    plugin: &LoadedPlugin,
    run: &dyn PluginRun,
    args: K::Args,
    cancel: &CancellationToken,
) -> Result<K::Reply, HookError> {
    let call = K::call(args);
    let logs = RunLogs::open(&call.run().run_id, &plugin.name);
    call_hook_within::<K>(plugin, run, call, cancel, &logs, None, None).await
}

/// [`call_hook`] with the plugin's log bounds for the run, `logs`, which
/// its session holds, the app's user interface, `ui`, the call may ask,
/// and where it may report progress, `progress` ([`CallLimits::progress`]).
pub(crate) async fn call_hook_within<K: HookKind>(
    plugin: &LoadedPlugin,
    run: &dyn PluginRun,
    call: HookCall,
    cancel: &CancellationToken,
    logs: &RunLogs,
    ui: Option<Arc<dyn UserInterface>>,
    progress: Option<yoagent::ProgressFn>,
) -> Result<K::Reply, HookError> {
    let timeout = plugin.manifest.timeout(K::HOOK);
    let span = hook_span(&call, &plugin.name);
    // The call's log bound, until the call ends or is abandoned.
    let _logs = logs.begin(span.clone());
    let deadline = Instant::now() + timeout;
    let limits = CallLimits {
        deadline,
        cancel: cancel.clone(),
        ui,
        progress,
    };
    let fail = |error: CallError| HookError {
        plugin: plugin.name.clone(),
        hook: K::HOOK,
        error,
    };
    let outcome = async {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(CallError::Cancelled),
            out = tokio::time::timeout_at(deadline.into(), run.call(call, limits)) => match out {
                // An engine that interrupted the code at the deadline says so
                // as a timeout too; the host's timeout is the one reported.
                Ok(Err(CallError::Timeout(_))) | Err(_) => Err(CallError::Timeout(timeout)),
                Ok(reply) => reply,
            },
        }
    }
    .instrument(span)
    .await;
    let reply = K::parse_reply(outcome.map_err(fail)?).map_err(|e| fail(CallError::BadReply(e)))?;
    if let Some(content) = K::content(&reply) {
        check_content(content)
            .map_err(|problem| fail(CallError::BadReply(ReplyError::new(K::HOOK, problem))))?;
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::manifest::Manifest;
    use crate::NativePlugin;
    use yohost_contract::{BeforeToolArgs, BeforeToolReply, Hook, HookReply, RunInfo};

    async fn deny_with(reason: &'static str) -> Result<BeforeToolReply, HookError> {
        let plugin = NativePlugin::loaded(
            "guard",
            &[Hook::BeforeTool],
            Manifest::default(),
            move |_| Ok(HookReply::BeforeTool(BeforeToolReply::Deny(reason.into()))),
        );
        let run = plugin.plugin.open_run(&RunInfo::default()).await.unwrap();
        let args = BeforeToolArgs {
            run: RunInfo::default(),
            tool: "bash".into(),
            call_id: "c1".into(),
            args: serde_json::json!({}),
            user_request: None,
            latest_user_text: None,
        };
        call_hook::<yohost_contract::kind::BeforeTool>(
            &plugin,
            run.as_ref(),
            args,
            &CancellationToken::new(),
        )
        .await
    }

    #[tokio::test]
    async fn a_deny_without_a_reason_is_a_bad_reply() {
        for blank in ["", " \n\t"] {
            let error = deny_with(blank).await.unwrap_err();
            assert_eq!(error.error.kind(), "bad_reply", "{blank:?}");
        }
        assert_eq!(
            deny_with("no").await.unwrap(),
            BeforeToolReply::Deny("no".into())
        );
    }
}
