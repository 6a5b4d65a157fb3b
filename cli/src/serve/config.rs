//! `yohost serve --print-config CLIENT`: the JSON each MCP client reads to
//! start `yohost serve DIR` over stdio, with the absolute paths of this
//! command and of DIR.

use serde_json::{json, Value};
use std::path::Path;

/// The MCP clients whose configuration `--print-config` prints.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Client {
    /// Claude Desktop's `claude_desktop_config.json` (and Claude Code's
    /// `.mcp.json`).
    Claude,
    /// Cursor's `.cursor/mcp.json`.
    Cursor,
    /// VS Code's `.vscode/mcp.json`.
    Vscode,
    /// Zed's `settings.json`.
    Zed,
}

/// The snippet `client` needs to start `command serve dir` (both absolute),
/// under the server name `yohost`.
pub fn snippet(client: Client, command: &Path, dir: &Path) -> Value {
    let (command, args) = (
        command.display().to_string(),
        json!(["serve", dir.display().to_string()]),
    );
    match client {
        Client::Claude | Client::Cursor => {
            json!({"mcpServers": {"yohost": {"command": command, "args": args}}})
        }
        Client::Vscode => {
            json!({"servers": {"yohost": {"type": "stdio", "command": command, "args": args}}})
        }
        Client::Zed => json!({"context_servers": {"yohost": {
            "source": "custom", "command": command, "args": args, "env": {}
        }}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_gets_the_command_and_the_directory() {
        let (command, dir) = (Path::new("/bin/yohost"), Path::new("/p"));
        let claude = snippet(Client::Claude, command, dir);
        assert_eq!(claude["mcpServers"]["yohost"]["command"], "/bin/yohost");
        assert_eq!(
            claude["mcpServers"]["yohost"]["args"],
            json!(["serve", "/p"])
        );
        assert_eq!(
            snippet(Client::Vscode, command, dir)["servers"]["yohost"]["type"],
            "stdio"
        );
        assert_eq!(
            snippet(Client::Zed, command, dir)["context_servers"]["yohost"]["args"][1],
            "/p"
        );
    }
}
