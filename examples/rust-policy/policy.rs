//! A Rust policy: denies destructive shell commands and keeps file writes
//! inside the working directory.

use yohost_sdk::*;

#[derive(Default)]
struct ShellPolicy;

const DESTRUCTIVE: [&str; 4] = ["rm -rf", "mkfs", "dd if=", ":(){"];

#[plugin]
impl Plugin for ShellPolicy {
    const NAME: &'static str = "rust-policy";

    fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        if call.tool == "bash" {
            let command = call.args["command"].as_str().unwrap_or("");
            if let Some(bad) = DESTRUCTIVE.iter().find(|d| command.contains(*d)) {
                warn(&format!("denied a bash command containing {bad:?}"));
                return Ok(BeforeToolReply::Deny(format!(
                    "rust-policy: `{bad}` is not allowed in bash commands"
                )));
            }
        }
        if call.tool == "write_file" {
            let path = call.args["path"].as_str().unwrap_or("");
            if path.starts_with('/') || path.contains("..") {
                return Ok(BeforeToolReply::Deny(format!(
                    "rust-policy: writes must stay inside the working directory, not {path}"
                )));
            }
        }
        Ok(BeforeToolReply::Allow)
    }
}

export_plugin!(ShellPolicy);
