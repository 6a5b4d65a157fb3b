//! What the MCP adapter's tests share: where `.ci/run` installed the
//! servers, a host with the adapter, and a run through a real Agent.

#![allow(dead_code)] // Each test binary uses its own part.

use crate::support::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use yohost::PluginHost;

/// The folder `name` under `<target>/tmp`, where `.ci/run` installs what
/// the tests need; `marker` must be in it.
pub fn installed(name: &str, marker: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("<target>/<profile>/deps/<exe>");
    let dir = target.join("tmp").join(name);
    assert!(
        dir.join(marker).exists(),
        "{} lacks {marker}: run .ci/run (or its MCP block) first",
        dir.display()
    );
    dir
}

/// Where `.ci/run` installed the servers the tests start by their paths.
pub fn servers() -> PathBuf {
    installed("mcp-servers", "venv/bin/mcp-server-time")
}

/// The npm server `name` (`server-everything`) among [`servers`].
pub fn npm_server(name: &str) -> PathBuf {
    servers().join("npm/@modelcontextprotocol").join(name)
}

/// A host of `dir` with the MCP adapter.
pub fn host(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_mcp::adapter())
        .open()
        .expect("the directory opens")
}

/// The tool results of a run of a real Agent, scripted with `turns`,
/// with `host`'s extension and no tool of its own.
pub async fn run_with(
    host: &PluginHost,
    turns: Vec<yoagent::provider::mock::MockResponse>,
) -> Vec<(String, String, bool)> {
    let (agent, _) = scripted(turns);
    // No tool of the agent's own (the support's `echo`) shadows the servers'.
    let mut agent = agent
        .with_tools(Vec::new())
        .with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)
}

/// A folder `name` with `mcp.json` holding `servers` and a `plugin.toml`.
pub fn folder(dir: &Path, name: &str, servers: serde_json::Value, manifest: &str) {
    write(
        dir,
        &format!("{name}/mcp.json"),
        &json!({ "mcpServers": servers }).to_string(),
    );
    write(dir, &format!("{name}/plugin.toml"), manifest);
}

/// The everything server over streamable HTTP, ended when dropped.
pub struct HttpServer(pub std::process::Child, pub u16);

impl HttpServer {
    /// The everything server over streamable HTTP.
    pub fn start() -> HttpServer {
        HttpServer::node(|node, port| {
            node.arg(npm_server("server-everything").join("dist/index.js"))
                .arg("streamableHttp")
                .env("PORT", port.to_string());
        })
    }

    /// A Node HTTP server on a free port of 127.0.0.1, as `configure` sets
    /// it up for that port, once it says on stderr that it is listening.
    pub fn node(configure: impl FnOnce(&mut std::process::Command, u16)) -> HttpServer {
        use std::io::BufRead;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut node = std::process::Command::new("node");
        configure(&mut node, port);
        let mut child = node
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("node starts the server");
        let stderr = child.stderr.take().unwrap();
        let mut lines = std::io::BufReader::new(stderr).lines();
        let listening = lines.any(|l| l.is_ok_and(|l| l.contains("listening")));
        assert!(listening, "the HTTP server started");
        std::thread::spawn(move || lines.for_each(drop));
        HttpServer(child, port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
