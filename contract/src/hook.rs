//! The hooks of the contract, by name, with their default timeouts.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The hooks of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    /// Tools to offer for a run.
    Tools,
    /// Run one of the plugin's tools.
    CallTool,
    /// Judge a tool call: allow, deny or rewrite.
    BeforeTool,
    /// Filter a tool call's output.
    AfterTool,
    /// Add a note before a model request, or stop the run.
    BeforeModel,
    /// Judge a prompted run's input.
    OnInput,
    /// Verify the model's final answer.
    OnStop,
    /// Observe an event.
    OnEvent,
    /// The run ended.
    Finish,
}

impl Hook {
    /// Every hook, in contract order.
    pub const ALL: [Hook; 9] = [
        Hook::Tools,
        Hook::CallTool,
        Hook::BeforeTool,
        Hook::AfterTool,
        Hook::BeforeModel,
        Hook::OnInput,
        Hook::OnStop,
        Hook::OnEvent,
        Hook::Finish,
    ];

    /// The hook's name in the contract (`before_tool`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::Tools => "tools",
            Hook::CallTool => "call_tool",
            Hook::BeforeTool => "before_tool",
            Hook::AfterTool => "after_tool",
            Hook::BeforeModel => "before_model",
            Hook::OnInput => "on_input",
            Hook::OnStop => "on_stop",
            Hook::OnEvent => "on_event",
            Hook::Finish => "finish",
        }
    }

    /// The hook with this contract name.
    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// How long a call may take unless the plugin's manifest says otherwise:
    /// 10 s for the hooks that guard a call or a run's input and answer,
    /// 5 s for the rest, 300 s for `call_tool`.
    pub fn default_timeout(self) -> Duration {
        match self {
            Hook::BeforeTool | Hook::AfterTool | Hook::OnInput | Hook::OnStop => {
                Duration::from_secs(10)
            }
            Hook::Tools | Hook::BeforeModel | Hook::OnEvent | Hook::Finish => {
                Duration::from_secs(5)
            }
            Hook::CallTool => Duration::from_secs(300),
        }
    }
}

impl std::fmt::Display for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_names_round_trip() {
        for hook in Hook::ALL {
            assert_eq!(Hook::from_name(hook.as_str()), Some(hook));
        }
        assert_eq!(Hook::from_name("before_everything"), None);
    }
}
