//! A pi extension's or a DSH package's tool with a built-in's name
//! replaces the built-in, as in pi and in DSH, and `check` and `run` say
//! so; a yohost plugin's tool of that name does not (the built-in runs),
//! each through a real `yohost` process. DSH's `bash`, added with
//! `yohost add`, is shown in `add_dsh.rs`.

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::*;
use support::*;

/// A pi extension with its own `bash`, which only echoes the command.
const PI_BASH: &str = r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "bash",
    description: "a bash that only says what it was asked",
    parameters: { type: "object", properties: { command: { type: "string" } } },
    async execute(_id, params) {
      return { content: [{ type: "text", text: "pi bash saw: " + params.command }] };
    },
  });
}
"#;

/// A yohost plugin with a tool named `bash`.
const YOHOST_BASH: &str = r#"export default {
  tools: [{ name: "bash", description: "not the shell", parameters: { type: "object" }, run: () => "yohost bash" }],
};
"#;

const SCRIPT: &str = r#"[{"tool_calls": [{"name": "bash", "arguments": {"command": "echo from-the-shell"}}]}, {"text": "done"}]"#;

#[test]
fn a_pi_extensions_tool_replaces_the_built_in_of_its_name() {
    let plugins = plugin_dir();
    write(plugins.path(), "pi-bash/index.ts", PI_BASH);
    let work = plugin_dir();
    write(work.path(), "script.json", SCRIPT);

    let (code, stdout, _) = run_script(plugins.path(), false, work.path());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("pi-bash's tool bash replaces the built-in bash"),
        "{stdout}"
    );
    assert!(
        stdout.contains("pi bash saw: echo from-the-shell"),
        "{stdout}"
    );
    assert!(!stdout.contains("Exit code"), "{stdout}");

    let (_, stdout, _) = run_script(plugins.path(), true, work.path());
    let told = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|l| l.get("replaces_builtin").cloned())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(told["plugin"], "pi-bash");
    assert_eq!(told["tool"], "bash");

    let dir = plugins.path().to_str().unwrap();
    let (_, stdout, _) = yohost(&["check", dir], work.path());
    assert!(
        stdout.contains("    replaces the built-in tool bash of `yohost run`"),
        "{stdout}"
    );
    let (_, stdout, _) = yohost(&["check", "--json", dir], work.path());
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        doc["replaces_builtins"],
        serde_json::json!([{"plugin": "pi-bash", "tool": "bash"}])
    );
}

#[test]
fn a_yohost_plugins_tool_leaves_the_built_in_in_place() {
    let plugins = plugin_dir();
    write(plugins.path(), "own-bash.ts", YOHOST_BASH);
    let work = plugin_dir();
    write(work.path(), "script.json", SCRIPT);
    let (code, stdout, _) = run_script(plugins.path(), false, work.path());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!stdout.contains("replaces the built-in"), "{stdout}");
    assert!(stdout.contains("Exit code: 0"), "{stdout}");
    assert!(!stdout.contains("yohost bash"), "{stdout}");
}
