//! Helpers shared by the integration tests: a real `yoagent::Agent` on a
//! scripted `MockProvider`, the events of a run, and captured log lines.
#![allow(dead_code)] // each test file uses a different part

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yoagent::provider::{
    MockProvider, ModelConfig, ProviderError, StreamConfig, StreamEvent, StreamProvider,
};
use yoagent::*;

/// A scripted tool call.
pub fn call(name: &str, args: serde_json::Value) -> MockResponse {
    MockResponse::ToolCalls(vec![MockToolCall {
        name: name.into(),
        arguments: args,
        provider_metadata: None,
    }])
}

/// A scripted text answer.
pub fn text(t: &str) -> MockResponse {
    MockResponse::Text(t.into())
}

/// Records every request's messages.
pub struct Recording {
    inner: MockProvider,
    pub requests: Arc<Mutex<Vec<Vec<Message>>>>,
}

#[async_trait::async_trait]
impl StreamProvider for Recording {
    async fn stream(
        &self,
        config: StreamConfig,
        tx: mpsc::UnboundedSender<StreamEvent>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Message, ProviderError> {
        self.requests.lock().unwrap().push(config.messages.clone());
        self.inner.stream(config, tx, cancel).await
    }
}

/// An agent on scripted responses, with the `echo` tool, and the requests
/// it sends.
pub fn scripted(responses: Vec<MockResponse>) -> (Agent, Arc<Mutex<Vec<Vec<Message>>>>) {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let provider = Recording {
        inner: MockProvider::new(responses),
        requests: requests.clone(),
    };
    let agent =
        Agent::from_provider(provider, ModelConfig::mock()).with_tools(vec![Box::new(Echo)]);
    (agent, requests)
}

/// Prompt the agent and collect every event of the run.
pub async fn run(agent: &mut Agent, prompt: &str) -> Vec<AgentEvent> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    agent.prompt_with_sender(prompt, tx).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    events
}

/// The text blocks of some content, joined by " | ".
pub fn texts(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// What each tool call answers, parsed as JSON, in one run of an agent
/// with `host`'s plugins whose model makes `calls` (name, arguments) in
/// turn and then ends. A call whose result is an error fails the test.
pub async fn json_answers(
    host: &yohost::PluginHost,
    calls: Vec<(&str, serde_json::Value)>,
) -> Vec<serde_json::Value> {
    let mut script: Vec<_> = calls.into_iter().map(|(n, a)| call(n, a)).collect();
    script.push(text("done"));
    let (agent, _) = scripted(script);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
        .into_iter()
        .map(|(name, text, is_error)| {
            assert!(!is_error, "{name}: {text}");
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"))
        })
        .collect()
}

/// Every tool result of the run: (tool name, text, is_error).
pub fn tool_results(events: &[AgentEvent]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                tool_name,
                result,
                is_error,
                ..
            } => Some((tool_name.clone(), texts(&result.content), *is_error)),
            _ => None,
        })
        .collect()
}

/// The arguments each tool ran with, from `ToolExecutionStart`.
pub fn tool_args(events: &[AgentEvent]) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionStart { args, .. } => Some(args.clone()),
            _ => None,
        })
        .collect()
}

/// The run's final messages.
pub fn end_messages(events: &[AgentEvent]) -> Vec<AgentMessage> {
    match events.last() {
        Some(AgentEvent::AgentEnd { messages, .. }) => messages.clone(),
        other => panic!("the run must end with AgentEnd, got {other:?}"),
    }
}

/// The stop reason and error message of the run's last assistant message.
pub fn final_assistant(events: &[AgentEvent]) -> (StopReason, Option<String>) {
    end_messages(events)
        .iter()
        .rev()
        .find_map(|m| match m {
            AgentMessage::Llm(Message::Assistant {
                stop_reason,
                error_message,
                ..
            }) => Some((stop_reason.clone(), error_message.clone())),
            _ => None,
        })
        .expect("an assistant message")
}

/// The text of the last user message of a request.
pub fn last_user_text(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User { content, .. } => Some(texts(content)),
            _ => None,
        })
        .unwrap_or_default()
}

/// The reason of an `InputRejected` event, if the run had one.
pub fn input_rejection(events: &[AgentEvent]) -> Option<String> {
    events.iter().find_map(|e| match e {
        AgentEvent::InputRejected { reason } => Some(reason.clone()),
        _ => None,
    })
}

/// A tool that echoes its `text` argument.
pub struct Echo;

#[async_trait::async_trait]
impl AgentTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn label(&self) -> &str {
        "Echo"
    }
    fn description(&self) -> &str {
        "Echo the text back"
    }
    fn parameters_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}})
    }
    async fn execute(
        &self,
        params: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult {
            content: vec![Content::Text {
                text: params["text"].as_str().unwrap_or("").to_string(),
            }],
            details: serde_json::Value::Null,
        })
    }
}

/// A fresh plugin directory.
pub fn plugin_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temp dir")
}

/// Write `contents` to `dir/name`, creating folders.
pub fn write(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, contents).unwrap();
    path
}

/// The directory cargo builds this test's examples into
/// (`target/<profile>/examples`).
pub fn examples_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>")
        .join("examples")
}

/// The target dir of this build (where cargo put the test executables).
pub fn target_dir() -> PathBuf {
    examples_dir()
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/examples")
        .to_path_buf()
}

/// The built cdylib of the cargo example `name`.
pub fn example_dylib(name: &str) -> PathBuf {
    let file = format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = examples_dir().join(file);
    assert!(
        path.exists(),
        "{} is not built (`cargo test --workspace` builds every package's examples)",
        path.display()
    );
    path
}

/// Log lines captured from tracing: every event, as JSON, with its span
/// fields.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Every captured line, parsed.
    pub fn lines(&self) -> Vec<serde_json::Value> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The captured plugin log lines (target `yohost::plugin`).
    pub fn plugin_lines(&self) -> Vec<serde_json::Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["target"] == "yohost::plugin")
            .collect()
    }
}

/// Where, among `lines`, the first whose message is `message` is: the
/// order of two plugins' lines shows that they overlapped without racing
/// the clock.
pub fn line_index(lines: &[serde_json::Value], message: &str) -> usize {
    lines
        .iter()
        .position(|l| l["fields"]["message"] == message)
        .unwrap_or_else(|| panic!("{message:?} in {lines:?}"))
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Capture tracing output as JSON lines for the rest of this thread's
/// scope (use a current-thread runtime so every task logs here).
pub fn capture_logs() -> (Captured, tracing::subscriber::DefaultGuard) {
    // Tests run side by side, each with a subscriber of its own. tracing
    // caches, per call site, whether any subscriber wants its events, and
    // recomputes that as subscribers come and go; a subscriber that lives as
    // long as the process and wants everything keeps an event from being
    // skipped in that window.
    static WANTS_EVERYTHING: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    WANTS_EVERYTHING.get_or_init(|| tracing::Dispatch::new(tracing_subscriber::registry()));
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::DEBUG)
        .with_current_span(true)
        .with_span_list(true)
        .with_writer(captured.clone())
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    (captured, guard)
}

/// The report line of the plugin named `name`.
pub fn reported<'a>(report: &'a [yohost::PluginReport], name: &str) -> &'a yohost::PluginReport {
    report
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{name} in {report:?}"))
}

/// The entry of the plugin named `name` in `yohost check --json` output.
pub fn checked(doc: &serde_json::Value, name: &str) -> serde_json::Value {
    doc["plugins"]
        .as_array()
        .expect("a plugin list")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name}: {doc}"))
        .clone()
}

/// A `bash` tool that runs nothing: it records each command it is asked to
/// run, so a test can tell that a denied call never ran.
#[derive(Clone, Default)]
pub struct RecordingBash(Arc<Mutex<Vec<String>>>);

impl RecordingBash {
    /// The commands it was asked to run, in order.
    pub fn commands(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl AgentTool for RecordingBash {
    fn name(&self) -> &str {
        "bash"
    }
    fn label(&self) -> &str {
        "Bash"
    }
    fn description(&self) -> &str {
        "Run a shell command (recorded, never run)"
    }
    fn parameters_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": {"command": {"type": "string"}}})
    }
    async fn execute(
        &self,
        params: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolResult, ToolError> {
        let command = params["command"].as_str().unwrap_or("").to_string();
        self.0.lock().unwrap().push(command.clone());
        Ok(ToolResult {
            content: vec![Content::Text {
                text: format!("ran {command}"),
            }],
            details: serde_json::Value::Null,
        })
    }
}

/// An agent on scripted responses with the recording `bash` tool.
pub fn scripted_bash(responses: Vec<MockResponse>) -> (Agent, RecordingBash) {
    let bash = RecordingBash::default();
    let agent = Agent::from_provider(MockProvider::new(responses), ModelConfig::mock())
        .with_tools(vec![Box::new(bash.clone())]);
    (agent, bash)
}

/// The captured log lines that carry field `field` equal to `value`.
pub fn lines_with(logs: &Captured, field: &str, value: &str) -> Vec<serde_json::Value> {
    logs.lines()
        .into_iter()
        .filter(|l| l["fields"][field] == value)
        .collect()
}

/// Why the tests that need Node cannot run here (no `node` on PATH that
/// answers `--version`), or `None` when they can.
pub fn node_missing() -> Option<String> {
    match std::process::Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => None,
        _ => Some(
            "no `node` on PATH: install Node.js 20 or newer to run the Node engine's tests".into(),
        ),
    }
}

/// What `node` prints as JSON when it runs the ES module `script` with
/// `arg` as its argument, or why it cannot run (no `node`). A script that
/// fails fails the test.
pub fn node_module_json(script: &str, arg: &Path) -> Result<serde_json::Value, String> {
    if let Some(why) = node_missing() {
        return Err(why);
    }
    let out = std::process::Command::new("node")
        .args(["--input-type=module", "-e", script])
        .arg(arg)
        .output()
        .map_err(|e| format!("node did not run: {e}"))?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

/// Beside single-file plugins in `dir`: a package `tiny` in the
/// directory's `node_modules` (exporting `word = "tiny-word"`), and
/// `uses.ts`, a plugin that imports it and notes the word before every
/// model request.
pub fn single_file_with_a_package(dir: &Path) {
    write(
        dir,
        "node_modules/tiny/package.json",
        r#"{"name": "tiny", "version": "1.0.0", "type": "module", "exports": "./index.js"}"#,
    );
    write(
        dir,
        "node_modules/tiny/index.js",
        "export const word = \"tiny-word\";\n",
    );
    write(
        dir,
        "uses.ts",
        r#"import { definePlugin } from "yohost";
import { word } from "tiny";
export default definePlugin({ before_model: () => ({ note: word }) });
"#,
    );
}

/// The host's pids of the live processes (zombies left out) whose command
/// line holds `marker`, this test process excepted. A pid that a plugin
/// process reports is its own PID namespace's, not the host's, so tests
/// find a plugin's processes by what they run.
pub fn running(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            (!is_gone(pid) && String::from_utf8_lossy(&cmdline).contains(marker)).then_some(pid)
        })
        .filter(|pid| *pid != std::process::id())
        .collect()
}

/// Whether the host's process `pid` is gone (a zombie counts as gone).
pub fn is_gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

/// Wait up to `limit` for every process running `marker` to be gone;
/// fail the test naming `what` and the pids left otherwise.
pub fn assert_all_end(marker: &str, limit: std::time::Duration, what: &str) {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = running(marker);
        if left.is_empty() {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: {left:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
