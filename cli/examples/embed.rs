//! Embedding yohost in your own agent, in full: a yoagent `Agent` on a
//! scripted model, the plugins of a directory as a tree extension, a tracing
//! subscriber for the logs, and the plugin report.
//!
//! ```sh
//! cargo run -p yohost-cli --example embed -- [PLUGIN_DIR]   # default: examples
//! ```
//!
//! docs/embedding.md shows this file whole (a test keeps the two the same).
//!
//! What an embedding program needs besides this file:
//! - a tracing subscriber: plugins' log lines (target `yohost::plugin`,
//!   with `run_id` and `plugin`) and the host's own go through `tracing`,
//!   and are lost without one;
//! - with yohost's `python` feature, the libpython rpath: one line in its
//!   `build.rs` (see this package's `build.rs`), so the binary loads the
//!   Python it was built against and not the system's.
//!
//! The scripted model asks for `rm -rf ./build` through a `bash` tool that
//! only says what it would run, so the example is harmless with or without
//! a policy; the example plugins deny the call.

use std::error::Error;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yoagent::provider::{MockProvider, ModelConfig};
use yoagent::types::{AgentTool, Content, ToolContext, ToolError, ToolResult};
use yoagent::{Agent, AgentEvent};

/// A `bash` that runs nothing: it answers with the command it was given.
struct DryRunBash;

#[async_trait::async_trait]
impl AgentTool for DryRunBash {
    fn name(&self) -> &str {
        "bash"
    }
    fn label(&self) -> &str {
        "Bash (dry run)"
    }
    fn description(&self) -> &str {
        "Say which shell command would run"
    }
    fn parameters_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {"command": {"type": "string"}}})
    }
    async fn execute(
        &self,
        params: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolResult, ToolError> {
        let command = params["command"].as_str().unwrap_or_default();
        Ok(ToolResult {
            content: vec![Content::Text {
                text: format!("would run: {command}"),
            }],
            details: serde_json::Value::Null,
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // 1. Logs: plugin lines and host warnings, on standard error.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();

    // 2. The plugins: loaded now, watched for changes; each run snapshots
    //    them. Every adapter is registered, so pi extensions and DSH tool
    //    plugins (embedded and on Node), rutis-agent tool libraries and MCP
    //    servers load too; a plugin whose ecosystem no registered adapter
    //    serves is refused, naming the adapter crate. Keep `host` alive as
    //    long as the agent runs: dropping it stops watching the directory.
    let dir = std::env::args().nth(1).unwrap_or_else(|| "examples".into());
    let host = yohost::PluginHost::builder(&dir)
        .adapter(yohost_adapter_pi::adapter())
        .adapter(yohost_adapter_pi::node_adapter())
        .adapter(yohost_adapter_dsh::adapter())
        .adapter(yohost_adapter_dsh::node_adapter())
        .adapter(yohost_adapter_rutis_agent::adapter())
        .adapter(yohost_adapter_mcp::adapter())
        .open()?;
    for plugin in host.report().await {
        println!("{plugin}");
    }

    // 3. An agent on a scripted model, with the plugins as a tree extension
    //    (sub-agents are gated too).
    let model = MockProvider::new(vec![
        MockResponse::ToolCalls(vec![MockToolCall {
            name: "bash".into(),
            arguments: serde_json::json!({"command": "rm -rf ./build"}),
            provider_metadata: None,
        }]),
        MockResponse::Text("done".into()),
    ]);
    let mut agent = Agent::from_provider(model, ModelConfig::mock())
        .with_api_key("unused by the scripted model")
        .with_tools(vec![Box::new(DryRunBash)])
        .with_tree_extension(host.extension());

    // 4. One run, and what came of each tool call.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    agent.prompt_with_sender("clean the build folder", tx).await;
    while let Ok(event) = rx.try_recv() {
        if let AgentEvent::ToolExecutionEnd {
            tool_name, result, ..
        } = event
        {
            for content in result.content {
                if let Content::Text { text } = content {
                    println!("{tool_name}: {text}");
                }
            }
        }
    }
    // 5. What each plugin's hooks cost so far.
    for plugin in host.stats() {
        for hook in plugin.hooks {
            println!(
                "{} {}: {} calls, {} failed, p50 {:?}",
                plugin.plugin, hook.hook, hook.calls, hook.failures, hook.p50
            );
        }
    }
    Ok(())
}
