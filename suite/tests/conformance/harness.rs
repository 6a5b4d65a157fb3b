//! Driving a fixture through a real `yoagent::Agent`: the recording `run`
//! tool, the run's id, and what the logs say about a run.

use crate::engines::Engine;
use crate::support::{self, Captured, Echo};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use yoagent::extension::{Extension, ExtensionError, RunContext, RunHooks};
use yoagent::provider::mock::MockResponse;
use yoagent::*;
use yohost::PluginHost;

/// Put in every error a fixture raises itself; the model must never see it.
pub const SECRET: &str = "fx-secret-7f3a";

/// A `before_tool` timeout short enough for `hang` and `spin` to be quick.
pub const SHORT_TIMEOUTS: &str = "[timeouts]\nbefore_tool = 300\ncall_tool = 300\n";

/// One engine's fixture in a plugin directory of its own, opened by a host.
pub struct Fixture {
    /// The row.
    pub engine: Engine,
    /// The fixture's plugin name, `fx-<row>`.
    pub name: String,
    /// The plugin directory (removed on drop).
    _dir: tempfile::TempDir,
    /// The host over it.
    pub host: PluginHost,
}

/// A host over `dir` with the adapter crates of the table's rows
/// registered.
pub fn open(dir: &std::path::Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .adapter(yohost_adapter_pi::node_adapter())
        .adapter(yohost_adapter_dsh::adapter())
        .adapter(yohost_adapter_dsh::node_adapter())
        .adapter(yohost_adapter_rutis_agent::adapter())
        .adapter(yohost_adapter_mcp::adapter())
        .open()
        .unwrap()
}

impl Fixture {
    /// The fixture of `engine`, with these extra `plugin.toml` lines.
    pub fn install(engine: Engine, manifest: &str) -> Fixture {
        let dir = support::plugin_dir();
        let name = format!("fx-{}", engine.name);
        (engine.install)(dir.path(), &name, manifest);
        let host = open(dir.path());
        let loaded = host.plugins();
        assert!(
            loaded.iter().any(|p| p.name == name),
            "{name} loads: {:?}",
            host.refused()
        );
        Fixture {
            engine,
            name,
            _dir: dir,
            host,
        }
    }

    /// One run of the host's extension on `script`.
    pub async fn run(&self, script: Vec<MockResponse>, prompt: &str) -> Outcome {
        drive(vec![Arc::new(self.host.extension())], script, prompt).await
    }
}

/// What one run did.
pub struct Outcome {
    /// Every event, in order.
    pub events: Vec<AgentEvent>,
    /// The `cmd` of every `run` call that actually ran, in order.
    pub ran: Vec<String>,
    /// Every request sent to the model.
    pub requests: Vec<Vec<Message>>,
    /// The run's id.
    pub run_id: String,
}

impl Outcome {
    /// Every tool result: (tool, text, is_error).
    pub fn results(&self) -> Vec<(String, String, bool)> {
        support::tool_results(&self.events)
    }

    /// The one tool result of the run.
    pub fn only_result(&self) -> (String, String, bool) {
        let results = self.results();
        assert_eq!(results.len(), 1, "{results:?}");
        results[0].clone()
    }

    /// The content of the tool result with this call's index.
    pub fn result_content(&self, index: usize) -> Vec<Content> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolExecutionEnd { result, .. } => Some(result.content.clone()),
                _ => None,
            })
            .nth(index)
            .expect("the tool result")
    }
}

/// A scripted `run` call.
pub fn run_call(cmd: &str) -> MockResponse {
    support::call("run", json!({ "cmd": cmd }))
}

/// Run an agent with `extensions`, the `echo` and recording `run` tools, on
/// `script`.
pub async fn drive(
    extensions: Vec<Arc<dyn Extension>>,
    script: Vec<MockResponse>,
    prompt: &str,
) -> Outcome {
    let (agent, requests) = support::scripted(script);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let run_id = Arc::new(Mutex::new(String::new()));
    let mut agent = agent.with_tools(vec![
        Box::new(Echo),
        Box::new(RunTool {
            ran: Arc::clone(&ran),
        }),
    ]);
    for extension in extensions {
        agent = agent.with_extension(extension);
    }
    agent = agent.with_extension(RunIdOf(Arc::clone(&run_id)));
    let events = support::run(&mut agent, prompt).await;
    let ran = ran.lock().unwrap().clone();
    let requests = requests.lock().unwrap().clone();
    let run_id = run_id.lock().unwrap().clone();
    assert!(!run_id.is_empty(), "the run started");
    Outcome {
        events,
        ran,
        requests,
        run_id,
    }
}

/// The recording tool: records the `cmd` it actually ran with.
struct RunTool {
    ran: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl AgentTool for RunTool {
    fn name(&self) -> &str {
        "run"
    }
    fn label(&self) -> &str {
        "Run"
    }
    fn description(&self) -> &str {
        "Run a command (recorded, not run)"
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]})
    }
    async fn execute(&self, params: Value, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let cmd = params["cmd"].as_str().unwrap_or("").to_string();
        self.ran.lock().unwrap().push(cmd.clone());
        Ok(ToolResult {
            content: vec![Content::Text {
                text: format!("ran {cmd}"),
            }],
            details: Value::Null,
        })
    }
}

/// An extension that only notes the id of the run it is started for.
struct RunIdOf(Arc<Mutex<String>>);

struct NoHooks;

#[async_trait::async_trait]
impl RunHooks for NoHooks {}

#[async_trait::async_trait]
impl Extension for RunIdOf {
    fn name(&self) -> &str {
        "run-id-of"
    }
    async fn start_run(&self, run: &RunContext<'_>) -> Result<Box<dyn RunHooks>, ExtensionError> {
        *self.0.lock().unwrap() = run.run_id.to_string();
        Ok(Box::new(NoHooks))
    }
}

/// A structured field of a log line: the event's own, else its span's.
pub fn field<'a>(line: &'a Value, name: &str) -> &'a Value {
    let own = &line["fields"][name];
    if !own.is_null() {
        return own;
    }
    &line["span"][name]
}

/// The host's lines about a failed hook (`error_kind` set) of `plugin` in
/// run `run_id`.
pub fn failures(logs: &Captured, run_id: &str, plugin: &str) -> Vec<Value> {
    logs.lines()
        .into_iter()
        .filter(|l| {
            !field(l, "error_kind").is_null()
                && field(l, "plugin") == plugin
                && field(l, "run_id") == run_id
        })
        .collect()
}

/// The `error_kind`s logged for `plugin`'s `hook` in run `run_id`, in order.
pub fn error_kinds(logs: &Captured, run_id: &str, plugin: &str, hook: &str) -> Vec<String> {
    failures(logs, run_id, plugin)
        .iter()
        .filter(|l| field(l, "hook") == hook)
        .map(|l| field(l, "error_kind").as_str().unwrap_or("").to_string())
        .collect()
}

/// The messages `plugin` logged in run `run_id`, in order.
pub fn plugin_messages(logs: &Captured, run_id: &str, plugin: &str) -> Vec<String> {
    logs.plugin_lines()
        .iter()
        .filter(|l| l["fields"]["plugin"] == plugin && l["fields"]["run_id"] == run_id)
        .map(|l| l["fields"]["message"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Wait (up to 5 s) until `plugin` logged `message` in run `run_id`:
/// `on_event` lines may arrive after the run returns.
pub async fn logged(logs: &Captured, run_id: &str, plugin: &str, message: &str) -> bool {
    for _ in 0..100 {
        if plugin_messages(logs, run_id, plugin)
            .iter()
            .any(|m| m == message)
        {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}
