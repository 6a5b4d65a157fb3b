//! `yohost run DIR --prompt TEXT`, and `--interactive` for a session on
//! the terminal.

use crate::builtins;
use crate::demo::DemoFolder;
use crate::interactive;
use crate::output::init_run_logs;
use crate::printer::EventPrinter;
use crate::script;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use yoagent::provider::ModelConfig;
use yoagent::Agent;

/// Arguments of `yohost run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// The plugin directory.
    dir: PathBuf,
    /// The user's prompt (with --interactive, the session's first).
    #[arg(long, required_unless_present = "interactive")]
    prompt: Option<String>,
    /// A session on the terminal: each line is a prompt, or a plugin's
    /// command (`/name args`; `/help` lists them). Plugins' questions
    /// (confirm, select, input, editor) are asked there, and a message a
    /// plugin sends as the user's runs next. The session ends at the end of
    /// input.
    #[arg(long)]
    interactive: bool,
    /// A JSON array of assistant turns for the built-in scripted model.
    ///
    /// Each turn is `{"text": "..."}` (the model answers and the run ends),
    /// `{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}},
    /// ...]}` (the model calls tools; their results come back to it) or
    /// `{"list_tools": true}` (the model answers with the tools it was
    /// offered, one a line). A turn has exactly one of these keys; unknown
    /// keys are an error. The tools run in the current directory.
    ///
    /// Without --script (and without --model) the bundled demo script runs
    /// inside a temporary folder that the command makes and removes: its
    /// working directory is that folder, and the file tools refuse any path
    /// outside it, so the demo is harmless whatever plugins are loaded.
    #[arg(long, conflicts_with = "model", verbatim_doc_comment)]
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
    /// Load only the plugins the directory's `yohost.lock` records, as it
    /// records them.
    #[arg(long)]
    locked: bool,
    /// After the run, print each plugin's figures: calls, failures,
    /// timeouts and latency per hook.
    #[arg(long)]
    stats: bool,
}

/// Run the agent once and print the run. Exits non-zero when the run failed
/// or its input was rejected.
pub async fn run(args: RunArgs) -> Result<ExitCode, String> {
    let held = init_run_logs(args.json);
    let dir = std::path::absolute(&args.dir)
        .map_err(|e| format!("cannot resolve {}: {e}", args.dir.display()))?;
    let terminal = args.interactive.then(interactive::terminal);
    let ui = terminal
        .clone()
        .map(|terminal| terminal as Arc<dyn yohost::UserInterface>);
    let host = crate::open_host(&dir, false, args.locked, ui)?;
    crate::output::print_load_warnings(&host.plugins(), args.json);
    let agent = match &args.model {
        Some(spec) => real_model(spec)?,
        None => Agent::from_provider(
            script::Scripted::new(script::load(args.script.as_deref())?),
            ModelConfig::mock(),
        )
        .with_api_key("scripted"),
    };
    // The bundled script acts only inside a folder of its own.
    let demo = match (&args.script, &args.model) {
        (None, None) => Some(enter_demo_folder(args.json)?),
        _ => None,
    };
    let agent = match (args.no_builtin_tools, &demo) {
        (true, _) => agent,
        (false, demo) => {
            let tools = match demo {
                Some(demo) => demo.tools(),
                None => yoagent::tools::default_tools(),
            };
            let replaced = builtins::replaced_in(&host, tools.iter().map(|t| t.name())).await;
            for one in &replaced {
                println!("{}", builtins::describe(one, args.json));
            }
            agent.with_tools(builtins::without(tools, &replaced))
        }
    };
    let last_error = Arc::new(Mutex::new(None));
    let mut agent = agent
        .with_extension(EventPrinter::new(
            args.json,
            held.clone(),
            Arc::clone(&last_error),
        ))
        .with_tree_extension(host.extension());
    if let Some(prompt) = &args.prompt {
        prompt_once(&mut agent, prompt).await;
    }
    if let Some(terminal) = terminal {
        session(&mut agent, &host, &terminal, &held).await;
    }
    // Lines of calls abandoned at their deadline may come after the run.
    held.flush();
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

/// Run the agent on `prompt`, to the end of its run (the printer shows it).
async fn prompt_once(agent: &mut Agent, prompt: &str) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    agent.prompt_with_sender(prompt, tx).await;
    let _ = drain.await;
}

/// The interactive session: line by line until the end of input.
async fn session(
    agent: &mut Agent,
    host: &yohost::PluginHost,
    terminal: &Arc<interactive::Terminal>,
    held: &crate::output::Held,
) {
    loop {
        held.flush();
        let reader = Arc::clone(terminal);
        let Ok(Some(line)) = tokio::task::spawn_blocking(move || reader.next_line()).await else {
            return;
        };
        match interactive::Line::read(&line) {
            interactive::Line::Help => interactive::print_commands(host),
            interactive::Line::Command { name, args } => {
                if let Err(e) = host.run_command(name, args).await {
                    println!("{e}");
                }
            }
            interactive::Line::Blank => {}
            interactive::Line::Prompt(prompt) => prompt_once(agent, prompt).await,
        }
    }
}

/// Make the demo's folder and make its working directory the process's.
fn enter_demo_folder(json: bool) -> Result<DemoFolder, String> {
    let demo = DemoFolder::create()?;
    std::env::set_current_dir(demo.work())
        .map_err(|e| format!("cannot enter the demo folder: {e}"))?;
    if !json {
        println!(
            "the demo acts in {} (made for this run, removed at its end)",
            demo.work().display()
        );
    }
    Ok(demo)
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
