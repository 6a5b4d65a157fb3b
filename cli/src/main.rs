//! The `yohost` command: check a plugin directory, or run an agent with it.

mod add;
mod authorize;
mod bench;
mod builtins;
mod check;
mod demo;
mod interactive;
mod lock;
mod new;
mod output;
mod printer;
mod progress;
mod run;
mod script;
mod serve;
mod stats;

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use yohost::adapter::{Adapter, Adapters};
use yohost::PluginHost;
use yohost_adapter_mcp::McpAdapter;

/// Every adapter crate of this repository: pi extensions and DSH tool
/// plugins (each on the embedded engine and on Node), rutis-agent tool
/// libraries and MCP servers (a server that asks for OAuth is authorized
/// through the terminal: [`authorize::TerminalAuthorizer`]).
fn foreign_adapters() -> [Arc<dyn Adapter>; 6] {
    [
        yohost_adapter_pi::adapter(),
        yohost_adapter_pi::node_adapter(),
        yohost_adapter_dsh::adapter(),
        yohost_adapter_dsh::node_adapter(),
        yohost_adapter_rutis_agent::adapter(),
        Arc::new(McpAdapter::default().with_authorizer(Arc::new(authorize::TerminalAuthorizer))),
    ]
}

/// The table the command reads a plugin directory with: the built-in set
/// (yohost's own plugins) plus [`foreign_adapters`], as [`open_host`] loads
/// it.
fn adapter_table() -> Adapters {
    let mut table = Adapters::default();
    for adapter in foreign_adapters() {
        table.register(adapter);
    }
    table
}

/// Open a plugin directory with every adapter crate of this repository
/// registered ([`adapter_table`]); for a check (no side effects, see
/// `PluginHostBuilder::dry_run`) when `dry_run`; loading only what the
/// directory's `yohost.lock` records when `locked`. A load that takes over
/// a second shows a spinner on the terminal ([`progress::Step`]).
fn open_host(
    dir: &Path,
    dry_run: bool,
    locked: bool,
    ui: Option<Arc<dyn yohost::UserInterface>>,
) -> Result<PluginHost, String> {
    let dir_shown = output::escaped(&dir.display().to_string()).into_owned();
    let _loading = progress::Step::start(if locked {
        format!("loading plugins from {dir_shown} as yohost.lock records them")
    } else {
        format!("loading plugins from {dir_shown}")
    });
    let builder = foreign_adapters()
        .into_iter()
        .fold(PluginHost::builder(dir), |builder, adapter| {
            builder.adapter(adapter)
        })
        .dry_run(dry_run)
        .locked(locked);
    match ui {
        Some(ui) => builder.user_interface(ui),
        None => builder,
    }
    .open()
    .map_err(|e| e.to_string())
}

/// A plugin host for the yoagent agent loop.
#[derive(Parser)]
#[command(name = "yohost", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every plugin of a directory: loaded or refused, with its hooks,
    /// tools, and the reason or warnings.
    Check {
        /// The plugin directory.
        dir: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Refuse every plugin that is not in the directory's `yohost.lock`
        /// or whose files differ from it, naming each file.
        #[arg(long)]
        locked: bool,
    },
    /// Run an agent with the plugins of a directory and print the run as it
    /// happens.
    Run(run::RunArgs),
    /// Time each plugin's hooks on synthetic calls and print what each
    /// plugin adds over the host's own path.
    Bench(bench::BenchArgs),
    /// Make a plugin to start from: a `before_tool` policy in a folder of
    /// its own, with a plugin.toml naming its grants.
    New(new::NewArgs),
    /// Install a plugin into a plugin directory: `npm:NAME[@VERSION]`, a
    /// package's `.tgz`, or a folder; with the grants it needs, and locked.
    Add(add::AddArgs),
    /// Import every MCP server another client's file lists (Claude
    /// Desktop's, Cursor's, VS Code's, Zed's), each into a plugin folder of
    /// its own, with the grants it needs and its package installed.
    Import(add::ImportArgs),
    /// Remove a plugin that `add` installed, and its lock entry.
    Remove(add::RemoveArgs),
    /// Record every plugin of a directory in its `yohost.lock` as it is now.
    Lock(lock::LockArgs),
    /// Serve the plugins' tools over MCP (stdio, or streamable HTTP), each
    /// call through their policies and filters.
    Serve(serve::ServeArgs),
}

/// Parse the command line and run it.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("yohost: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Check { dir, json, locked } => check::check(&dir, json, locked).await,
            Command::Run(args) => run::run(args).await,
            Command::Bench(args) => bench::bench(args).await,
            Command::New(args) => new::new(args),
            Command::Add(args) => add::add(args).await,
            Command::Import(args) => add::import(args).await,
            Command::Remove(args) => add::remove(args),
            Command::Lock(args) => lock::lock(args),
            Command::Serve(args) => serve::serve(args).await,
        }
    });
    // Abandoned plugin calls may still hold threads; do not wait for them.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => code,
        Err(message) => {
            eprintln!("yohost: {}", output::escaped_lines(&message));
            ExitCode::FAILURE
        }
    }
}
