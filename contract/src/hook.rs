//! The hooks of the contract, by name, with their default timeouts.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The hooks of the contract.
///
/// Each has a stable number in the dylib ABI, its discriminant
/// ([`Hook::abi_number`]): a number once given is never changed or reused,
/// and a new hook takes the next free one, so that a dylib built against an
/// older contract keeps meaning the same hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u32)]
pub enum Hook {
    /// Tools to offer for a run.
    Tools = 0,
    /// Run one of the plugin's tools.
    CallTool = 1,
    /// Judge a tool call: allow, deny or rewrite.
    BeforeTool = 2,
    /// Filter a tool call's output.
    AfterTool = 3,
    /// Add a note before a model request, or stop the run.
    BeforeModel = 4,
    /// Judge a prompted run's input.
    OnInput = 5,
    /// Verify the model's final answer.
    OnStop = 6,
    /// Observe an event.
    OnEvent = 7,
    /// The run ended.
    Finish = 8,
    /// Run one of the plugin's commands (an app's `/name`), outside any
    /// model turn: asked for by the embedding app's user.
    Command = 9,
}

impl Hook {
    /// The hook's number in the dylib ABI: its bit (`1 << n`) in
    /// [`PluginEntry::hooks`](crate::abi::PluginEntry::hooks) and the `hook`
    /// argument of [`PluginEntry::call`](crate::abi::PluginEntry::call).
    /// Stable across contract versions.
    pub const fn abi_number(self) -> u32 {
        self as u32
    }

    /// The hook of the dylib ABI number `n`, if this contract has it (a
    /// newer plugin may name a hook an older host does not know).
    pub fn from_abi_number(n: u32) -> Option<Hook> {
        Hook::ALL.into_iter().find(|hook| hook.abi_number() == n)
    }

    /// Every hook, in contract order.
    pub const ALL: [Hook; 10] = [
        Hook::Tools,
        Hook::CallTool,
        Hook::BeforeTool,
        Hook::AfterTool,
        Hook::BeforeModel,
        Hook::OnInput,
        Hook::OnStop,
        Hook::OnEvent,
        Hook::Finish,
        Hook::Command,
    ];

    /// The app's hooks: an embedding app asks for them outside any run
    /// (`command`, through the host's `PluginHost::run_command`), and a
    /// plugin declares what they serve when it loads (its commands).
    /// Adapters' flavors offer them; they are not in the WIT package
    /// ([`WIT_PACKAGE`](crate::WIT_PACKAGE)) or the SDKs, whose plugins
    /// serve the loop.
    pub const APP: [Hook; 1] = [Hook::Command];

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
            Hook::Command => "command",
        }
    }

    /// The hook with this contract name.
    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// How long a call may take unless the plugin's manifest says otherwise:
    /// 10 s for the hooks that guard a call or a run's input and answer,
    /// 5 s for the rest, 300 s for `call_tool` and `command` (which may wait
    /// for a person's answers).
    pub fn default_timeout(self) -> Duration {
        match self {
            Hook::BeforeTool | Hook::AfterTool | Hook::OnInput | Hook::OnStop => {
                Duration::from_secs(10)
            }
            Hook::Tools | Hook::BeforeModel | Hook::OnEvent | Hook::Finish => {
                Duration::from_secs(5)
            }
            Hook::CallTool | Hook::Command => Duration::from_secs(300),
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

    /// Changing a number here changes what every built dylib means: a new
    /// hook takes the next number, and these stay.
    #[test]
    fn abi_numbers_are_the_ones_released() {
        let released = [
            (Hook::Tools, 0),
            (Hook::CallTool, 1),
            (Hook::BeforeTool, 2),
            (Hook::AfterTool, 3),
            (Hook::BeforeModel, 4),
            (Hook::OnInput, 5),
            (Hook::OnStop, 6),
            (Hook::OnEvent, 7),
            (Hook::Finish, 8),
            (Hook::Command, 9),
        ];
        for (hook, number) in released {
            assert_eq!(hook.abi_number(), number, "{hook:?}");
            assert_eq!(Hook::from_abi_number(number), Some(hook));
        }
        assert_eq!(Hook::from_abi_number(31), None);
    }
}
