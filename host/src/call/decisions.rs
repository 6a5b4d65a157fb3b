//! What each plugin decided about a tool call (a deny, a rewrite, an edit
//! of the output, a failure that withheld it), logged at one target,
//! naming the plugin: what a program needs to say which plugin did what.

/// The tracing target of every decision a plugin makes about a tool call,
/// at info level, with fields `run_id`, `plugin`, `hook`, `tool`, `call_id`
/// and `decision` (a [`Decision`] name); a deny and a failure have `reason`
/// too (a failure's says what failed, with the reply's expected and actual
/// shape when the reply did not fit), a rewrite `args` (the arguments it
/// asked for, as JSON).
pub const DECISION_LOG_TARGET: &str = "yohost::decision";

/// What a plugin decided about one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// `before_tool` denied the call (or failed, which denies it).
    Deny,
    /// `before_tool` rewrote the call's arguments.
    Rewrite,
    /// `after_tool` changed the call's output (a redaction, say).
    EditOutput,
    /// `after_tool` failed (it threw, timed out, or its reply did not fit
    /// the contract), which withholds the call's output.
    Fail,
}

impl Decision {
    /// The decision's name in the `decision` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Deny => "deny",
            Decision::Rewrite => "rewrite",
            Decision::EditOutput => "edit_output",
            Decision::Fail => "fail",
        }
    }
}

/// The tool call a decision is about.
pub struct CallRef<'a> {
    /// The run's id.
    pub run_id: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The call's id.
    pub call_id: &'a str,
}

/// Log one decision of `plugin` about `call`, at target
/// [`DECISION_LOG_TARGET`]. `detail` is a deny's or a failure's reason, or a
/// rewrite's arguments (as JSON): written out only by a subscriber that
/// records the line, never encoded for nothing.
pub(crate) fn decision(
    call: &CallRef<'_>,
    plugin: &str,
    hook: yohost_contract::Hook,
    decision: Decision,
    detail: &dyn std::fmt::Display,
) {
    let (run_id, tool, call_id) = (call.run_id, call.tool, call.call_id);
    let (hook, name) = (hook.as_str(), decision.as_str());
    match decision {
        Decision::Deny => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, reason = %detail, "{plugin} denied {tool}")
        }
        Decision::Rewrite => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, args = %detail, "{plugin} rewrote {tool}")
        }
        Decision::EditOutput => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, "{plugin} edited the output of {tool}")
        }
        Decision::Fail => {
            tracing::info!(target: DECISION_LOG_TARGET, run_id, plugin, hook, tool, call_id, decision = name, reason = %detail, "{plugin} failed in {hook}, so the output of {tool} was withheld")
        }
    }
}
