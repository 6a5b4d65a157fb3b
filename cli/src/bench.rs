//! `yohost bench DIR`: time each plugin's hooks on synthetic calls, beside
//! an in-process plugin that answers at once on the same path, and print
//! what each plugin adds.
//!
//! Every call goes through the host's bounded call (the deadline, the span,
//! the reply checks, the engine), as in a run. Timed: `tools`,
//! `before_tool`, `after_tool`, `before_model`, `on_input`, `on_stop` and
//! `on_event`. Never called: `call_tool` (it runs the plugin's tool, which
//! may act on the world) and `finish`. A hook that crashes, runs out of
//! memory or times out is timed no further (the plugin would be unloaded
//! for the run); its own errors are counted and timing goes on.
//!
//! Calls come back to back unless `--gap-us` spaces them: the caller then
//! keeps its CPU busy for that long before each call, as an agent loop does
//! with its own work between two calls, so the plugin's engine thread has
//! time to go idle. That is what a hook costs in a run (several times its
//! back-to-back figure; see `docs/benchmarks.md`).

use crate::stats::{human, micros};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yohost::call_hook;
use yohost::contract::kind::{self, HookKind};
use yohost::contract::*;
use yohost::manifest::Manifest;
use yohost::{LoadedPlugin, NativePlugin};

/// Arguments of `yohost bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// The plugin directory.
    dir: PathBuf,
    /// Timed calls per hook (after a tenth as many untimed ones to warm up).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    calls: u32,
    /// Microseconds the caller works before each call (0: back to back).
    /// About 100 shows what a hook costs inside an agent's run.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    gap_us: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// How the calls of one hook are made.
#[derive(Clone, Copy)]
struct Pacing {
    /// Timed calls (after a tenth as many untimed ones).
    calls: u32,
    /// How long the caller works before each call.
    gap: Duration,
}

impl Pacing {
    /// Keep this thread busy for the gap, as a loop's own work would.
    fn work_before_a_call(&self) {
        let until = Instant::now() + self.gap;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}

/// The hooks `bench` times, in the order it prints them.
const TIMED: [Hook; 7] = [
    Hook::Tools,
    Hook::BeforeTool,
    Hook::AfterTool,
    Hook::BeforeModel,
    Hook::OnInput,
    Hook::OnStop,
    Hook::OnEvent,
];

/// The name the baseline is printed under.
const BASELINE: &str = "(in-process baseline)";

/// How one hook of one plugin did.
struct HookTiming {
    hook: Hook,
    /// Timed calls made.
    calls: u32,
    /// Calls that failed (the plugin's own error, a bad reply, …).
    failures: u32,
    /// Why timing stopped early: the kind of the failure that would unload
    /// the plugin for a run.
    stopped: Option<&'static str>,
    median: Option<Duration>,
    p99: Option<Duration>,
}

/// One plugin's timings.
struct PluginTiming {
    plugin: String,
    engine: &'static str,
    hooks: Vec<HookTiming>,
}

/// Time every plugin of the directory and print the result. Exits 1 when a
/// plugin was refused or a hook failed, so a script sees that the figures
/// are not all there.
pub async fn bench(args: BenchArgs) -> Result<ExitCode, String> {
    crate::output::init_stderr_logs();
    let host = crate::open_host(&args.dir, false, false, None)?;
    let refused = host.refused();
    for refusal in &refused {
        eprintln!(
            "yohost: plugin '{}' refused: {}",
            refusal.name, refusal.reason
        );
    }
    let pacing = Pacing {
        calls: args.calls,
        gap: Duration::from_micros(args.gap_us),
    };
    let baseline = time_plugin(&baseline(), pacing).await;
    let mut timings = Vec::new();
    for plugin in host.plugins() {
        timings.push(time_plugin(&plugin, pacing).await);
    }
    if args.json {
        print_json(&baseline, &timings, pacing);
    } else {
        print_table(&baseline, &timings, pacing);
    }
    let failed = timings
        .iter()
        .flat_map(|p| &p.hooks)
        .any(|h| h.failures > 0 || h.stopped.is_some());
    Ok(if failed || !refused.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// A plugin with every timed hook, answering at once in the host's
/// process: what the host's own path costs.
fn baseline() -> LoadedPlugin {
    NativePlugin::loaded(BASELINE, &TIMED, Manifest::default(), |call| {
        Ok(match call.hook() {
            Hook::Tools => HookReply::Tools(Vec::new()),
            Hook::BeforeTool => HookReply::BeforeTool(BeforeToolReply::Allow),
            Hook::AfterTool => HookReply::AfterTool(AfterToolReply::default()),
            Hook::BeforeModel => HookReply::BeforeModel(BeforeModelReply::Continue),
            Hook::OnInput => HookReply::OnInput(OnInputReply::Pass),
            Hook::OnStop => HookReply::OnStop(OnStopReply::Accept),
            Hook::CallTool | Hook::OnEvent | Hook::Finish | Hook::Command => HookReply::Ignored,
        })
    })
}

/// Time each timed hook `plugin` has, in one run of its own.
async fn time_plugin(plugin: &LoadedPlugin, pacing: Pacing) -> PluginTiming {
    let run = RunInfo {
        run_id: format!("bench-{}", plugin.name),
        label: None,
        depth: 0,
        parent_run_id: None,
        delegated_by: None,
    };
    let mut hooks = Vec::new();
    for hook in TIMED.into_iter().filter(|h| plugin.has(*h)) {
        // A fresh run per hook: a failure of one hook leaves the others'
        // timings whole.
        let opened = match plugin.plugin.open_run(&run).await {
            Ok(opened) => opened,
            Err(e) => {
                hooks.push(HookTiming {
                    hook,
                    calls: 0,
                    failures: 1,
                    stopped: Some(e.kind()),
                    median: None,
                    p99: None,
                });
                continue;
            }
        };
        let timing = match hook {
            Hook::Tools => time_hook::<kind::Tools>(plugin, &opened, pacing, || run.clone()).await,
            Hook::BeforeTool => {
                time_hook::<kind::BeforeTool>(plugin, &opened, pacing, || before_tool(&run)).await
            }
            Hook::AfterTool => {
                time_hook::<kind::AfterTool>(plugin, &opened, pacing, || after_tool(&run)).await
            }
            Hook::BeforeModel => {
                time_hook::<kind::BeforeModel>(plugin, &opened, pacing, || BeforeModelArgs {
                    run: run.clone(),
                    model: "mock".into(),
                    tools: vec!["bash".into(), "read_file".into()],
                    user_request: Some(REQUEST.into()),
                })
                .await
            }
            Hook::OnInput => {
                time_hook::<kind::OnInput>(plugin, &opened, pacing, || OnInputArgs {
                    run: run.clone(),
                    text: REQUEST.into(),
                })
                .await
            }
            Hook::OnStop => {
                time_hook::<kind::OnStop>(plugin, &opened, pacing, || OnStopArgs {
                    run: run.clone(),
                    answer: "The project has three files.".into(),
                    continues: 0,
                })
                .await
            }
            Hook::OnEvent => {
                time_hook::<kind::OnEvent>(plugin, &opened, pacing, || OnEventArgs {
                    run: run.clone(),
                    event: serde_json::json!({"type": "turnStart"}),
                })
                .await
            }
            Hook::CallTool | Hook::Finish | Hook::Command => unreachable!("not in TIMED"),
        };
        opened.close().await;
        hooks.push(timing);
    }
    PluginTiming {
        plugin: plugin.name.clone(),
        engine: plugin.engine.as_str(),
        hooks,
    }
}

const REQUEST: &str = "please list the files of the project";

fn before_tool(run: &RunInfo) -> BeforeToolArgs {
    BeforeToolArgs {
        run: run.clone(),
        tool: "bash".into(),
        call_id: "call-1".into(),
        args: serde_json::json!({"command": "ls"}),
        user_request: Some(REQUEST.into()),
        latest_user_text: Some(REQUEST.into()),
    }
}

fn after_tool(run: &RunInfo) -> AfterToolArgs {
    AfterToolArgs {
        run: run.clone(),
        tool: "bash".into(),
        call_id: "call-1".into(),
        args: serde_json::json!({"command": "ls"}),
        output: ToolOutputData {
            content: vec![ContentBlock::text("Cargo.toml\nREADME.md\nsrc\n")],
            details: serde_json::Value::Null,
            is_error: false,
        },
    }
}

/// Call hook `K` of `plugin` as `pacing` says, each time with fresh
/// arguments from `args`, and time each call.
async fn time_hook<K: HookKind>(
    plugin: &LoadedPlugin,
    run: &Arc<dyn yohost::PluginRun>,
    pacing: Pacing,
    args: impl Fn() -> K::Args,
) -> HookTiming {
    let cancel = CancellationToken::new();
    let warm_up = pacing.calls / 10;
    let mut times = Vec::with_capacity(pacing.calls as usize);
    let mut failures = 0;
    let mut stopped = None;
    for i in 0..warm_up + pacing.calls {
        let args = args();
        pacing.work_before_a_call();
        let started = Instant::now();
        let outcome = call_hook::<K>(plugin, run.as_ref(), args, &cancel).await;
        let took = started.elapsed();
        if i >= warm_up {
            times.push(took);
        }
        if let Err(e) = outcome {
            failures += 1;
            if e.error.discards_instance() {
                stopped = Some(e.error.kind());
                break;
            }
        }
    }
    times.sort_unstable();
    let at = |q: f64| {
        let last = times.len().checked_sub(1)?;
        times
            .get(((q * last as f64).round() as usize).min(last))
            .copied()
    };
    HookTiming {
        hook: K::HOOK,
        calls: times.len() as u32,
        failures,
        stopped,
        median: at(0.5),
        p99: at(0.99),
    }
}

/// What `timing` adds over the baseline's timing of the same hook.
fn added(baseline: &PluginTiming, timing: &HookTiming) -> Option<Duration> {
    let base = baseline
        .hooks
        .iter()
        .find(|b| b.hook == timing.hook)?
        .median?;
    Some(timing.median?.saturating_sub(base))
}

/// What a plugin adds to each tool call: its `before_tool` and
/// `after_tool`, over the baseline's.
fn per_tool_call(baseline: &PluginTiming, plugin: &PluginTiming) -> Option<Duration> {
    let mut total = None;
    for timing in &plugin.hooks {
        if matches!(timing.hook, Hook::BeforeTool | Hook::AfterTool) {
            let add = added(baseline, timing)?;
            total = Some(total.unwrap_or_default() + add);
        }
    }
    total
}

fn print_table(baseline: &PluginTiming, timings: &[PluginTiming], pacing: Pacing) {
    if pacing.gap.is_zero() {
        println!("Calls back to back (--gap-us spaces them as in an agent's run).");
    } else {
        println!(
            "Calls spaced {} apart, the caller working in between, as in an agent's run.",
            human(pacing.gap)
        );
    }
    println!(
        "{:<24} {:<7} {:<13} {:>7} {:>7} {:>10} {:>10} {:>10}",
        "PLUGIN", "ENGINE", "HOOK", "CALLS", "FAILED", "MEDIAN", "P99", "ADDED"
    );
    let time = |d: Option<Duration>| d.map_or_else(|| "-".to_string(), human);
    for plugin in std::iter::once(baseline).chain(timings) {
        if plugin.hooks.is_empty() {
            println!(
                "{:<24} {:<7} (no timed hooks)",
                plugin.plugin, plugin.engine
            );
        }
        for h in &plugin.hooks {
            let added = if std::ptr::eq(plugin, baseline) {
                "-".to_string()
            } else {
                added(baseline, h).map_or_else(|| "-".into(), |d| format!("+{}", human(d)))
            };
            println!(
                "{:<24} {:<7} {:<13} {:>7} {:>7} {:>10} {:>10} {:>10}",
                plugin.plugin,
                plugin.engine,
                h.hook.as_str(),
                h.calls,
                h.failures,
                time(h.median),
                time(h.p99),
                added,
            );
            if let Some(kind) = h.stopped {
                println!("    stopped: {kind} (a run would unload the plugin)");
            }
        }
    }
    for plugin in timings {
        if let Some(cost) = per_tool_call(baseline, plugin) {
            println!(
                "{} adds {} to each tool call (before_tool + after_tool)",
                plugin.plugin,
                human(cost)
            );
        }
    }
}

fn print_json(baseline: &PluginTiming, timings: &[PluginTiming], pacing: Pacing) {
    let plugin_json = |p: &PluginTiming| {
        let hooks: Vec<serde_json::Value> = p
            .hooks
            .iter()
            .map(|h| {
                serde_json::json!({
                    "hook": h.hook.as_str(),
                    "calls": h.calls,
                    "failures": h.failures,
                    "stopped": h.stopped,
                    "median_us": h.median.map(micros),
                    "p99_us": h.p99.map(micros),
                    "added_us": added(baseline, h).map(micros),
                })
            })
            .collect();
        serde_json::json!({
            "plugin": p.plugin,
            "engine": p.engine,
            "hooks": hooks,
            "per_tool_call_us": per_tool_call(baseline, p).map(micros),
        })
    };
    let doc = serde_json::json!({
        "calls": pacing.calls,
        "gap_us": micros(pacing.gap),
        "baseline": plugin_json(baseline),
        "plugins": timings.iter().map(plugin_json).collect::<Vec<_>>(),
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| e.to_string())
    );
}
