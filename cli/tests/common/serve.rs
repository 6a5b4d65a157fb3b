//! `yohost serve` driven through rmcp's client, shared by its tests
//! (`serve.rs`, `serve_soak.rs`) and its bench (`benches/serve.rs`): the
//! command as a child process, over stdio or HTTP, its standard error as it
//! comes, and the calls' arguments and results.
// Each test binary and the bench use a part of these.
#![allow(dead_code)]

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, Implementation, ProgressNotificationParam,
    ProgressToken,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::Notify;

/// A client that says it speaks the newest protocol with sessions, counts
/// the server's `tools/list_changed`, and keeps its log lines.
#[derive(Clone, Default)]
pub struct Client {
    /// Notified at each `tools/list_changed`.
    pub list_changed: Arc<Notify>,
    /// Each `notifications/message`: its logger and its data's `message`.
    pub logs: Arc<Mutex<Vec<(String, String)>>>,
    /// Each `notifications/progress`.
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl Client {
    /// The messages of the log lines of `logger` received so far.
    pub fn logged(&self, logger: &str) -> Vec<String> {
        let logs = self.logs.lock().unwrap();
        logs.iter()
            .filter(|(from, _)| from == logger)
            .map(|(_, message)| message.clone())
            .collect()
    }

    /// The `progress` and `message` of the progress received for `token`
    /// once `count` have come (within 60 s), in `progress` order: the
    /// client's handler gets each on a task of its own.
    pub async fn progress_of(&self, token: &ProgressToken, count: usize) -> Vec<(f64, String)> {
        let received = || {
            let progress = self.progress.lock().unwrap();
            let mut of: Vec<(f64, String)> = progress
                .iter()
                .filter(|p| p.progress_token == *token)
                .map(|p| (p.progress, p.message.clone().unwrap_or_default()))
                .collect();
            of.sort_by(|a, b| a.0.total_cmp(&b.0));
            of
        };
        for _ in 0..600 {
            if received().len() >= count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        received()
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(Default::default(), Implementation::new("test", "0"))
            .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    #[allow(deprecated)] // MCP's logging, which `yohost serve` sends.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let message = params.data["message"].as_str().unwrap_or("").to_string();
        let logger = params.logger.unwrap_or_default();
        self.logs.lock().unwrap().push((logger, message));
    }
}

/// A client's session with the server.
pub type Session = RunningService<RoleClient, Client>;

/// Standard error of the server, as it comes.
#[derive(Clone, Default)]
pub struct Stderr(Arc<Mutex<String>>);

impl Stderr {
    /// Read `from` line by line into this, in the background.
    pub fn collect(&self, from: impl AsyncRead + Unpin + Send + 'static) {
        let text = Arc::clone(&self.0);
        tokio::spawn(async move {
            let mut lines = BufReader::new(from).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut text = text.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
    }

    /// What has come so far.
    pub fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    /// The run ids of plugin `plugin`'s log lines.
    pub fn run_ids(&self, plugin: &str) -> Vec<String> {
        self.run_ids_of(plugin, "")
    }

    /// The run ids of plugin `plugin`'s log lines that say `message` (any
    /// when empty).
    pub fn run_ids_of(&self, plugin: &str, message: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| line["target"] == "yohost::plugin" && line["fields"]["plugin"] == plugin)
            .filter(|line| message.is_empty() || line["fields"]["message"] == message)
            .map(|line| line["fields"]["run_id"].as_str().unwrap_or("").to_string())
            .collect()
    }

    /// The run ids of plugin `plugin`'s log lines that say `message`, once
    /// there are at least `count` of them (at most `limit` later: then as
    /// many as there are).
    pub async fn until_run_ids_of(
        &self,
        plugin: &str,
        message: &str,
        count: usize,
        limit: Duration,
    ) -> Vec<String> {
        let start = std::time::Instant::now();
        loop {
            let ids = self.run_ids_of(plugin, message);
            if ids.len() >= count || start.elapsed() > limit {
                return ids;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Wait until this holds `wanted`, at most 30 s.
    pub async fn until_logged(&self, wanted: &str) {
        for _ in 0..300 {
            if self.text().contains(wanted) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no `{wanted}` in:\n{}", self.text());
    }
}

/// `yohost serve ARGS` as a command, logging its sessions' cancelled
/// calls.
pub fn serve_command(args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_yohost"));
    command
        .arg("serve")
        .args(args)
        .env(
            "RUST_LOG",
            "warn,yohost::load=error,rmcp=off,yohost::serve=info",
        )
        .kill_on_drop(true);
    command
}

/// A `tools/call` of `name` with `args` (an object).
pub fn call(name: &str, args: Value) -> CallToolRequestParams {
    let args = args.as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

/// The text of a result's text blocks.
pub fn text(result: &CallToolResult) -> String {
    let json = serde_json::to_value(result).unwrap();
    json["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A session of `client` over stdio of `yohost serve DIR`, with the
/// server's standard error.
pub async fn stdio_session(dir: &Path, client: Client) -> (Session, Stderr) {
    stdio_session_with(dir, &[], client).await
}

/// [`stdio_session`] of `yohost serve DIR FLAGS`.
pub async fn stdio_session_with(dir: &Path, flags: &[&str], client: Client) -> (Session, Stderr) {
    let mut args = vec![dir.to_str().unwrap()];
    args.extend(flags);
    let command = serve_command(&args);
    let (transport, err) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = Stderr::default();
    stderr.collect(err.unwrap());
    (client.serve(transport).await.unwrap(), stderr)
}

/// A server over HTTP on a free port, with the token `secret`.
pub struct HttpServer {
    /// The `yohost serve` process.
    pub child: tokio::process::Child,
    /// Where it serves MCP.
    pub url: String,
    /// Its standard error.
    pub stderr: Stderr,
}

/// `yohost serve DIR --http` on a free loopback port, with the token
/// `secret` and the flags `extra`, once it says where it listens.
pub async fn http_server(dir: &Path, extra: &[&str]) -> HttpServer {
    let mut args = vec![
        dir.to_str().unwrap(),
        "--http",
        "--listen",
        "127.0.0.1:0",
        "--token-env",
        "SERVE_TOKEN",
    ];
    args.extend_from_slice(extra);
    let mut child = serve_command(&args)
        .env("SERVE_TOKEN", "secret")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the server starts")
            .unwrap()
            .expect("the server says where it listens");
        if let Some(url) = line.strip_prefix("yohost: serving MCP at ") {
            break url.to_string();
        }
    };
    let stderr = Stderr::default();
    stderr.collect(lines.into_inner());
    HttpServer { child, url, stderr }
}

/// A session with the HTTP server at `url` (token `secret`), or why not.
pub async fn http_session(url: &str) -> Result<Session, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header("secret");
    let transport = StreamableHttpClientTransport::from_config(config);
    Client::default()
        .serve(transport)
        .await
        .map_err(|e| e.to_string())
}

/// `name` under `<target>/tmp`, where `.ci/run` installs it.
pub fn installed(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    assert!(
        path.exists(),
        "{} is missing: run .ci/run first",
        path.display()
    );
    path
}
