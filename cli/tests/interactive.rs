//! `yohost run --interactive` under a pseudo-terminal (`script`): `/help`
//! lists the plugins' commands, `/greet` runs one that asks its questions
//! on the terminal, a permission gate's `select` is answered there (the
//! call runs when the person chooses Yes, and is blocked when they choose
//! No), and a message a plugin sends as the user's runs as the next prompt.

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use std::path::Path;
use support::*;

/// A pi extension with a command that asks, a gate on dangerous commands
/// (as pi's permission-gate example), and a tool that sends the user's
/// next message.
const ASKER: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("greet", {
    description: "Greet someone",
    handler: async (args, ctx) => {
      const name = await ctx.ui.input("Whom?", "a name");
      const sure = await ctx.ui.confirm("Greet?", `Greet ${name} and ${args}?`);
      ctx.ui.notify(sure ? `hello ${name} and ${args}` : "not greeted", "info");
    },
  });
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash" || !/\brm\s+-rf/.test(event.input.command)) return undefined;
    if (!ctx.hasUI) return { block: true, reason: "no UI to ask" };
    const choice = await ctx.ui.select(`Dangerous command: ${event.input.command}`, ["Yes", "No"]);
    return choice === "Yes" ? undefined : { block: true, reason: "Blocked by user" };
  });
  pi.registerTool({
    name: "follow_up",
    description: "Sends the user's next message",
    parameters: { type: "object", properties: {} },
    async execute() {
      pi.sendUserMessage("what next?");
      return { content: [{ type: "text", text: "queued" }] };
    },
  });
}
"#;

/// The model: a dangerous command twice, then a follow-up, then answers.
const SCRIPT: &str = r#"[
  {"tool_calls": [{"name": "bash", "arguments": {"command": "echo rm -rf nothing-here"}}]},
  {"text": "ran it"},
  {"tool_calls": [{"name": "bash", "arguments": {"command": "echo rm -rf again"}}]},
  {"text": "asked again"},
  {"tool_calls": [{"name": "follow_up", "arguments": {}}]},
  {"text": "followed up"},
  {"text": "answered the follow-up"}
]"#;

/// Run `yohost run DIR --interactive` under a pseudo-terminal, with `input`
/// typed: its output, as the terminal shows it.
fn session(dir: &Path, cwd: &Path, input: &str) -> String {
    let command = format!("run {} --interactive --script script.json", dir.display());
    let (code, shown, stderr) = common::on_terminal(&command, cwd, input);
    assert_eq!(code, Some(0), "{shown}\n{stderr}");
    shown
}

#[test]
fn an_interactive_session_runs_commands_and_answers_questions_on_the_terminal() {
    let dir = plugin_dir();
    write(dir.path(), "asker.ts", ASKER);
    let cwd = tempfile::tempdir().unwrap();
    write(cwd.path(), "script.json", SCRIPT);
    let typed = [
        "/help",
        "/greet the world",
        "Ada",
        "y",
        "/nope",
        "clean up",
        "1",
        "clean up again",
        "2",
        "follow up",
    ];
    let shown = session(dir.path(), cwd.path(), &(typed.join("\n") + "\n"));
    let order = [
        // `/help`
        "/greet (asker): Greet someone",
        // `/greet` asks, then says hello
        "[asker] Whom? (a name): ",
        "[asker] Greet?\nGreet Ada and the world?\n[y/N] ",
        "[asker] info: hello Ada and the world",
        "no plugin offers the command `/nope` (offered: greet)",
        // The gate asks; Yes lets the command run.
        "[asker] Dangerous command: echo rm -rf nothing-here\n  1. Yes\n  2. No\nchoose 1-2: ",
        "<- bash [ok] Exit code: 0 ⏎ rm -rf nothing-here",
        "ran it",
        // No blocks it.
        "[asker] Dangerous command: echo rm -rf again",
        "<- bash [error] Tool call denied: Blocked by user",
        "asked again",
        // The tool's message runs next, as the user's.
        "[asker] queued as your next message: what next?",
        "> what next?",
        "answered the follow-up",
    ];
    let mut from = 0;
    for wanted in order {
        match shown[from..].find(wanted) {
            Some(at) => from += at + wanted.len(),
            None => panic!("`{wanted}` is not shown after byte {from}:\n{shown}"),
        }
    }
    assert!(
        !shown.contains("rm -rf again ⏎"),
        "the blocked command did not run:\n{shown}"
    );
}
