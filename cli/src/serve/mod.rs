//! `yohost serve DIR`: the plugins' tools as an MCP server, over stdio (one
//! session) or streamable HTTP (`--http`, many). Each session is a run of
//! the plugins ([`yohost::ToolRun`]): every call passes their policies and
//! filters as in an agent's run, and their log lines carry the session's
//! `run_id`.
//!
//! - [`session`]: one session, its run, and the tools list following the
//!   directory;
//! - [`mapping`]: yohost's tools and call outcomes as MCP's;
//! - [`client_logs`]: plugin log lines to the client;
//! - [`stdio`] and [`http`]: the transports;
//! - [`config`]: `--print-config`, what a client needs to start it.

mod client_logs;
mod config;
mod http;
mod mapping;
mod session;
mod stdio;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;
use yohost::adapter::logging::{DECISION_LOG_TARGET, PLUGIN_LOG_TARGET};

/// Arguments of `yohost serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// The plugin directory.
    dir: PathBuf,
    /// Print the JSON an MCP client needs to start `yohost serve DIR` over
    /// stdio, and exit.
    #[arg(long, value_enum, value_name = "CLIENT")]
    print_config: Option<config::Client>,
    /// Serve over streamable HTTP instead of stdio.
    #[arg(long)]
    http: bool,
    /// The address to listen on (HTTP).
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:8080",
        requires = "http"
    )]
    listen: SocketAddr,
    /// A file holding the bearer token every HTTP request must carry.
    #[arg(long, value_name = "PATH", requires = "http", conflicts_with_all = ["token_env", "no_auth"])]
    token_file: Option<PathBuf>,
    /// An environment variable holding the bearer token every HTTP request
    /// must carry.
    #[arg(
        long,
        value_name = "NAME",
        requires = "http",
        conflicts_with = "no_auth"
    )]
    token_env: Option<String>,
    /// Serve HTTP without a token: on a loopback address only.
    #[arg(long, requires = "http")]
    no_auth: bool,
    /// The most HTTP sessions at once; one more is refused.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "http")]
    max_sessions: usize,
    /// The largest HTTP request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024, requires = "http")]
    max_request_bytes: usize,
    /// Load only the plugins the directory's `yohost.lock` records, as it
    /// records them.
    #[arg(long)]
    locked: bool,
}

/// Serve the directory's tools until the client leaves (stdio) or the
/// process is interrupted (HTTP).
pub async fn serve(args: ServeArgs) -> Result<ExitCode, String> {
    let dir = std::path::absolute(&args.dir)
        .map_err(|e| format!("cannot resolve {}: {e}", args.dir.display()))?;
    if let Some(client) = args.print_config {
        let command = std::env::current_exe()
            .map_err(|e| format!("cannot find this command's own path: {e}"))?;
        let snippet = config::snippet(client, &command, &dir);
        println!("{}", serde_json::to_string_pretty(&snippet).expect("JSON"));
        return Ok(ExitCode::SUCCESS);
    }
    // Before anything could write to standard output.
    let protocol = match args.http {
        true => None,
        false => Some(stdio::take_stdout()?),
    };
    let http = args.http.then(|| http_options(&args)).transpose()?;
    let logs = client_logs::ClientLogs::default();
    init_logs(&logs);
    let host = crate::open_host(&dir, false, args.locked, None)?;
    for plugin in host.plugins() {
        for warning in &plugin.warnings {
            tracing::warn!(plugin = %plugin.name, "{warning}");
        }
    }
    let shared = session::Shared::new(host, logs);
    match (protocol, http) {
        (Some(protocol), _) => stdio::serve(shared, protocol).await?,
        (None, Some(options)) => http::serve(shared, options).await?,
        (None, None) => unreachable!("one transport"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The HTTP server's options, with its bearer token read.
fn http_options(args: &ServeArgs) -> Result<http::HttpOptions, String> {
    let token = match (&args.token_file, &args.token_env) {
        (Some(path), _) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?
                .trim()
                .to_string(),
        ),
        (None, Some(name)) => Some(
            std::env::var(name)
                .map_err(|_| format!("--token-env {name}: the variable is not set"))?
                .trim()
                .to_string(),
        ),
        (None, None) if args.no_auth => None,
        (None, None) => {
            return Err("serving over HTTP needs a bearer token: --token-file PATH or --token-env NAME (or --no-auth, on a loopback address only)".into())
        }
    };
    if let Some(token) = &token {
        http::check_token(token)?;
    }
    if token.is_none() && !args.listen.ip().is_loopback() {
        return Err(format!(
            "--no-auth serves on a loopback address only, not {}",
            args.listen
        ));
    }
    Ok(http::HttpOptions {
        listen: args.listen,
        token,
        max_sessions: args.max_sessions.max(1),
        max_request_bytes: args.max_request_bytes,
    })
}

/// Everything to standard error: the host's own lines as text (`RUST_LOG`
/// sets their level), and each plugin log line and decision as one JSON
/// object (its fields `run_id`, `plugin`, `level`, `message`, or the
/// decision's), as it comes; and each plugin log line to the client of its
/// run's session ([`client_logs`]).
fn init_logs(logs: &client_logs::ClientLogs) {
    let plugin_target = |m: &tracing::Metadata<'_>| {
        m.target() == PLUGIN_LOG_TARGET || m.target() == DECISION_LOG_TARGET
    };
    let host_lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(crate::output::host_filter())
        .with_filter(tracing_subscriber::filter::filter_fn(move |m| {
            !plugin_target(m)
        }));
    let plugin_lines = tracing_subscriber::fmt::layer()
        .json()
        .with_writer(std::io::stderr)
        .with_filter(tracing_subscriber::filter::filter_fn(plugin_target));
    let _ = tracing_subscriber::registry()
        .with(host_lines)
        .with(plugin_lines)
        .with(logs.layer())
        .try_init();
}
