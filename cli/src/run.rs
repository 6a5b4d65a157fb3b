//! `yohost run DIR --prompt TEXT`.

use crate::output::{init_run_logs, EventPrinter};
use crate::script;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use yoagent::provider::{MockProvider, ModelConfig};
use yoagent::Agent;

/// Arguments of `yohost run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The plugin directory.
    dir: PathBuf,
    /// The user's prompt.
    #[arg(long)]
    prompt: String,
    /// A JSON array of assistant turns for the built-in scripted model
    /// (default: a bundled demo script).
    #[arg(long, conflicts_with = "model")]
    script: Option<PathBuf>,
    /// A real model, as PROVIDER/MODEL (e.g. anthropic/claude-sonnet-5); its
    /// API key comes from PROVIDER_API_KEY (e.g. ANTHROPIC_API_KEY).
    #[arg(long)]
    model: Option<String>,
    /// Offer only the plugins' tools, not yoagent's default tools (bash,
    /// read_file, write_file, edit_file, search, list_files).
    #[arg(long)]
    no_builtin_tools: bool,
    /// Print one JSON object per line.
    #[arg(long)]
    json: bool,
    /// After the run, print each plugin's figures: calls, failures,
    /// timeouts and latency per hook.
    #[arg(long)]
    stats: bool,
}

/// Run the agent once and print the run. Exits non-zero when the run failed
/// or its input was rejected.
pub async fn run(args: RunArgs) -> Result<ExitCode, String> {
    init_run_logs(args.json);
    let host = crate::open_host(&args.dir)?;
    for refusal in host.refused() {
        eprintln!(
            "yohost: plugin '{}' refused: {}",
            refusal.name, refusal.reason
        );
    }
    let agent = match &args.model {
        Some(spec) => real_model(spec)?,
        None => Agent::from_provider(
            MockProvider::new(script::load(args.script.as_deref())?),
            ModelConfig::mock(),
        )
        .with_api_key("scripted"),
    };
    let agent = if args.no_builtin_tools {
        agent
    } else {
        agent.with_tools(yoagent::tools::default_tools())
    };
    let last_error = Arc::new(Mutex::new(None));
    let mut agent = agent
        .with_extension(EventPrinter::new(args.json, Arc::clone(&last_error)))
        .with_tree_extension(host.extension());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    agent.prompt_with_sender(args.prompt.as_str(), tx).await;
    let _ = drain.await;
    if args.stats {
        crate::stats::print(&host.stats(), args.json);
    }
    let failed = last_error
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some();
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// An agent on a real provider, `PROVIDER/MODEL`.
fn real_model(spec: &str) -> Result<Agent, String> {
    let (provider, model) = spec
        .split_once('/')
        .ok_or_else(|| format!("--model must be PROVIDER/MODEL, got `{spec}`"))?;
    let config = ModelConfig::preset(provider, model)
        .ok_or_else(|| format!("yoagent has no preset for `{provider}/{model}`"))?;
    let key_var = format!(
        "{}_API_KEY",
        provider.to_ascii_uppercase().replace('-', "_")
    );
    let key =
        std::env::var(&key_var).map_err(|_| format!("--model {spec} needs {key_var} to be set"))?;
    Ok(Agent::from_config(config).with_api_key(key))
}
