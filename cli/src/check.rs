//! `yohost check DIR`.

use crate::builtins::{self, Replaced};
use crate::output::escaped;
use std::path::Path;
use std::process::ExitCode;
use yohost::{Mode, PluginReport, Status};

/// Print every plugin of `dir` (only as its lock records them when
/// `locked`) as a table, or as JSON
/// (`{"plugins": [...], "replaces_builtins": [...]}`, the built-in tools of
/// `yohost run` that a pi extension replaces). Exits 1 when any plugin is refused (a required
/// one fails every run until it is fixed), 0 otherwise.
pub async fn check(dir: &Path, json: bool, locked: bool) -> Result<ExitCode, String> {
    crate::output::init_stderr_logs();
    // A check has no side effects: what plugins would run or write is
    // reported as their warnings.
    let host = crate::open_host(dir, true, locked, None)?;
    let report = host.report().await;
    let names = builtins::names();
    let replaced = builtins::replaced(names.iter().map(String::as_str), &report);
    if json {
        let replaced: Vec<_> = replaced
            .iter()
            .map(|r| serde_json::json!({"plugin": r.plugin, "tool": r.tool}))
            .collect();
        let doc = serde_json::json!({ "plugins": report, "replaces_builtins": replaced });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?
        );
    } else {
        print_table(&report, &replaced);
    }
    if report.iter().any(|p| p.status == Status::Refused) {
        Ok(ExitCode::FAILURE)
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

fn print_table(report: &[PluginReport], replaced: &[Replaced]) {
    println!(
        "{:<24} {:<7} {:<11} {:<8} {:<9} {:<40} TOOLS",
        "NAME", "ENGINE", "ECOSYSTEM", "STATUS", "MODE", "HOOKS"
    );
    for plugin in report {
        let status = match plugin.status {
            Status::Loaded => "loaded",
            Status::Refused => "refused",
        };
        let mode = match plugin.mode {
            Mode::Advisory => "advisory",
            Mode::Required => "required",
        };
        println!(
            "{:<24} {:<7} {:<11} {:<8} {:<9} {:<40} {}",
            escaped(&plugin.name),
            plugin.engine.as_deref().unwrap_or("-"),
            plugin.ecosystem.as_deref().unwrap_or("-"),
            status,
            mode,
            plugin.hooks.join(","),
            escaped(&plugin.tools.join(",")),
        );
        if !plugin.grants.is_empty() {
            println!("    grants: {}", escaped(&plugin.grants.join(", ")));
        }
        if let Some(why) = &plugin.routed {
            let engine = plugin.engine.as_deref().unwrap_or("-");
            println!("    on {engine}: {}", escaped(why));
        }
        if let Some(processes) = plugin.processes {
            println!("    processes: {processes}");
        }
        if let Some(data) = &plugin.data_dir {
            println!("    data: {}", escaped(&data.to_string_lossy()));
        }
        if let Some(reason) = &plugin.reason {
            println!("    reason: {}", escaped(reason));
        }
        for warning in &plugin.warnings {
            println!("    warning: {}", escaped(warning));
        }
        for one in replaced.iter().filter(|r| r.plugin == plugin.name) {
            println!(
                "    replaces the built-in tool {} of `yohost run`",
                escaped(&one.tool)
            );
        }
    }
    let loaded = report.iter().filter(|p| p.status == Status::Loaded).count();
    println!("{loaded} loaded, {} refused", report.len() - loaded);
}
