//! `yohost run --stats`: the host's figures for each plugin after the run.

use std::time::Duration;
use yohost::{HookFigures, PluginFigures};

/// A duration for a person: microseconds below a millisecond, then
/// milliseconds below a second, then seconds.
pub fn human(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.1} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A duration in microseconds, for JSON.
pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Print the figures of every plugin: a table, or one JSON line
/// `{"stats": [{plugin, engine, hooks: [{hook, calls, failures, timeouts,
/// timed, mean_us, p50_us, p99_us, max_us, total_us}]}]}`. TOTAL is the
/// time the plugin took in that hook, all runs together: the column to
/// sort by to find the plugin that slows an agent.
pub fn print(stats: &[PluginFigures], json: bool) {
    if json {
        let plugins: Vec<serde_json::Value> = stats
            .iter()
            .map(|p| {
                serde_json::json!({
                    "plugin": p.plugin,
                    "engine": p.engine.as_str(),
                    "hooks": p.hooks.iter().map(hook_json).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", serde_json::json!({ "stats": plugins }));
        return;
    }
    println!(
        "{:<24} {:<7} {:<13} {:>7} {:>7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "PLUGIN",
        "ENGINE",
        "HOOK",
        "CALLS",
        "FAILED",
        "TIMEOUTS",
        "MEAN",
        "P50",
        "P99",
        "MAX",
        "TOTAL"
    );
    let time = |d: Option<Duration>| d.map_or_else(|| "-".to_string(), human);
    for plugin in stats {
        if plugin.hooks.is_empty() {
            println!(
                "{:<24} {:<7} (not called)",
                plugin.plugin,
                plugin.engine.as_str()
            );
        }
        for h in &plugin.hooks {
            println!(
                "{:<24} {:<7} {:<13} {:>7} {:>7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}",
                plugin.plugin,
                plugin.engine.as_str(),
                h.hook.as_str(),
                h.calls,
                h.failures,
                h.timeouts,
                time(h.mean()),
                time(h.p50),
                time(h.p99),
                time(h.max),
                time((h.timed > 0).then_some(h.total)),
            );
        }
    }
}

fn hook_json(h: &HookFigures) -> serde_json::Value {
    serde_json::json!({
        "hook": h.hook.as_str(),
        "calls": h.calls,
        "failures": h.failures,
        "timeouts": h.timeouts,
        "timed": h.timed,
        "mean_us": h.mean().map(micros),
        "p50_us": h.p50.map(micros),
        "p99_us": h.p99.map(micros),
        "max_us": h.max.map(micros),
        "total_us": micros(h.total),
    })
}
