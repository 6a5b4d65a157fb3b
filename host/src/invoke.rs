//! One hook call, bounded: the deadline, the run's cancel, the span, and the
//! checks on what comes back. Every engine's calls pass through here.

use crate::error::{CallError, HookError};
use crate::limits::check_content;
use crate::logging::hook_span;
use crate::plugin::{CallLimits, LoadedPlugin, PluginRun};
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use yohost_contract::{HookCall, HookReply, ReplyError};

/// Call `call` on `session` of `plugin` within the plugin's timeout for that
/// hook and the run's `cancel`. The reply must be the hook's own kind, and
/// images in it must be within the limits.
pub async fn call_hook(
    plugin: &LoadedPlugin,
    session: &dyn PluginRun,
    call: HookCall,
    cancel: &CancellationToken,
) -> Result<HookReply, HookError> {
    let hook = call.hook();
    let timeout = plugin.manifest.timeout(hook);
    let span = hook_span(&call.run().run_id, &plugin.name, hook);
    let limits = CallLimits {
        deadline: Instant::now() + timeout,
        cancel: cancel.clone(),
    };
    let fail = |error: CallError| HookError {
        plugin: plugin.name.clone(),
        hook,
        error,
    };
    let outcome = async {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(CallError::Cancelled),
            out = tokio::time::timeout(timeout, session.call(call, limits)) => match out {
                Ok(reply) => reply,
                Err(_) => Err(CallError::Timeout(timeout)),
            },
        }
    }
    .instrument(span)
    .await;
    let reply = outcome.map_err(fail)?;
    check_reply(hook, &reply).map_err(fail)?;
    Ok(reply)
}

/// The reply belongs to the hook, and its images are allowed.
fn check_reply(hook: yohost_contract::Hook, reply: &HookReply) -> Result<(), CallError> {
    use yohost_contract::Hook as H;
    let bad = |problem: String| CallError::BadReply(ReplyError { hook, problem });
    let matches = matches!(
        (hook, reply),
        (H::Tools, HookReply::Tools(_))
            | (H::CallTool, HookReply::CallTool(_))
            | (H::BeforeTool, HookReply::BeforeTool(_))
            | (H::AfterTool, HookReply::AfterTool(_))
            | (H::BeforeModel, HookReply::BeforeModel(_))
            | (H::OnInput, HookReply::OnInput(_))
            | (H::OnStop, HookReply::OnStop(_))
            | (H::OnEvent | H::Finish, HookReply::Ignored)
    );
    if !matches {
        return Err(bad("the engine returned another hook's reply".into()));
    }
    match reply {
        HookReply::CallTool(r) => check_content(&r.content).map_err(bad),
        HookReply::AfterTool(r) => r
            .content
            .as_deref()
            .map_or(Ok(()), check_content)
            .map_err(bad),
        _ => Ok(()),
    }
}
