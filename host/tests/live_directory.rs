//! The plugin directory is live:
//! - a plugin added to the directory takes effect at the next run;
//! - a plugin removed stops at the next run, while a run already going keeps
//!   the plugins it started with;
//! - a plugin whose manifest breaks is refused at the next run, and (as it
//!   may be a required policy's) every run fails, naming the plugin and the
//!   file, until the manifest is fixed.

mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use support::*;
use yoagent::{AgentTool, Content, ToolContext, ToolError, ToolResult};
use yohost::PluginHost;

fn install_tagger(dir: &Path) -> PathBuf {
    let lib = example_dylib("fixture_tagger");
    write(
        dir,
        "tagger/plugin.toml",
        &format!("entry = {:?}", lib.display().to_string()),
    );
    dir.join("tagger")
}

async fn echo_once(host: &PluginHost) -> String {
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)[0].1.clone()
}

#[tokio::test]
async fn a_plugin_added_takes_effect_at_the_next_run() {
    let dir = plugin_dir();
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(echo_once(&host).await, "hi");
    install_tagger(dir.path());
    assert_eq!(echo_once(&host).await, "hi +tag");
}

/// A tool that removes a folder when called.
struct Remove(PathBuf);

#[async_trait::async_trait]
impl AgentTool for Remove {
    fn name(&self) -> &str {
        "remove_plugin"
    }
    fn label(&self) -> &str {
        "Remove plugin"
    }
    fn description(&self) -> &str {
        "Removes the plugin folder"
    }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _: serde_json::Value, _: ToolContext) -> Result<ToolResult, ToolError> {
        std::fs::remove_dir_all(&self.0).map_err(|e| ToolError::Failed(e.to_string()))?;
        Ok(ToolResult {
            content: vec![Content::Text {
                text: "removed".into(),
            }],
            details: json!(null),
        })
    }
}

#[tokio::test]
async fn a_running_run_keeps_its_plugins_and_the_next_run_sees_the_removal() {
    let dir = plugin_dir();
    let folder = install_tagger(dir.path());
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![
        call("remove_plugin", json!({})),
        call("echo", json!({"text": "hi"})),
        text("done"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(Echo), Box::new(Remove(folder.clone()))])
        .with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(!folder.exists());
    assert_eq!(results[1].1, "hi +tag", "the run keeps its snapshot");
    assert_eq!(
        echo_once(&host).await,
        "hi",
        "the next run no longer has it"
    );
}

#[tokio::test]
async fn a_manifest_broken_while_live_fails_every_run_until_it_is_fixed() {
    let dir = plugin_dir();
    install_tagger(dir.path());
    write(
        dir.path(),
        "other/plugin.toml",
        &format!(
            "entry = {:?}",
            example_dylib("example_policy").display().to_string()
        ),
    );
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 2);
    let fixed = std::fs::read_to_string(dir.path().join("tagger/plugin.toml")).unwrap();
    write(dir.path(), "tagger/plugin.toml", "entry = [broken");
    host.reload();
    // A manifest that cannot be parsed may be a required policy's: every
    // run fails, naming the plugin and the file, until it is fixed.
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    assert!(tool_results(&events).is_empty(), "no tool runs");
    let error = final_assistant(&events).1.unwrap();
    assert!(
        error.contains("required plugin 'tagger' was refused")
            && error.contains("tagger/plugin.toml"),
        "{error}"
    );
    assert_eq!(host.refused().len(), 1);
    assert_eq!(host.plugins().len(), 1);
    write(dir.path(), "tagger/plugin.toml", &fixed);
    host.reload();
    assert_eq!(echo_once(&host).await, "hi +tag", "fixed, it works again");
}
