//! The commands plugins offer an app's user (`/name args`), listed and run
//! outside any model turn: [`PluginHost::commands`] and
//! [`PluginHost::run_command`].

use crate::call::error::HookError;
use crate::call::logging::RunLogs;
use crate::host::plugin_host::PluginHost;
use crate::load::loaded::LoadedPlugin;
use crate::run::invoke::call_hook_within;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use yohost_contract::kind;
use yohost_contract::{CommandArgs, Hook, RunInfo};

/// A command a loaded plugin offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCommand {
    /// The plugin that runs it.
    pub plugin: String,
    /// Its name, without the `/`.
    pub name: String,
    /// What the user reads about it.
    pub description: String,
}

/// Why a command did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// No loaded plugin offers the name.
    #[error("no plugin offers the command `/{name}` (offered: {offered})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names that are offered, or "none".
        offered: String,
    },
    /// The plugin's command failed: it threw, timed out, or crashed.
    #[error("the command `/{name}` failed: {error}")]
    Failed {
        /// The command.
        name: String,
        /// The failure, naming the plugin.
        error: HookError,
    },
}

impl PluginHost {
    /// The commands of the loaded plugins, in running order. Two plugins
    /// that offer one name: the first to run offers it, as with tools.
    pub fn commands(&self) -> Vec<PluginCommand> {
        let mut out: Vec<PluginCommand> = Vec::new();
        for plugin in self.plugins() {
            for spec in &plugin.app.commands {
                if plugin.has(Hook::Command) && !out.iter().any(|c| c.name == spec.name) {
                    out.push(PluginCommand {
                        plugin: plugin.name.clone(),
                        name: spec.name.clone(),
                        description: spec.description.clone(),
                    });
                }
            }
        }
        out
    }

    /// Run the command `name` with `args` (the rest of the user's line), in
    /// a run of its own whose `run_id` is on its log lines, within the
    /// plugin's `command` timeout (300 s unless its manifest says
    /// otherwise). The plugin may ask the host's user interface
    /// ([`PluginHostBuilder::user_interface`](crate::PluginHostBuilder::user_interface)).
    pub async fn run_command(&self, name: &str, args: &str) -> Result<(), CommandError> {
        let snapshot = self.snapshot();
        let offered = |plugin: &&Arc<LoadedPlugin>| {
            plugin.has(Hook::Command) && plugin.app.commands.iter().any(|c| c.name == name)
        };
        let Some(plugin) = snapshot.plugins.iter().find(offered) else {
            let names: Vec<String> = self.commands().into_iter().map(|c| c.name).collect();
            return Err(CommandError::Unknown {
                name: name.to_string(),
                offered: if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                },
            });
        };
        let run = RunInfo {
            run_id: command_run_id(),
            label: Some(format!("/{name}")),
            ..RunInfo::default()
        };
        let failed = |error| CommandError::Failed {
            name: name.to_string(),
            error,
        };
        let handle = plugin.plugin.open_run(&run).await.map_err(|error| {
            failed(HookError {
                plugin: plugin.name.clone(),
                hook: Hook::Command,
                error,
            })
        })?;
        let logs = RunLogs::open(&run.run_id, &plugin.name);
        let call = yohost_contract::HookCall::Command(CommandArgs {
            run: run.clone(),
            name: name.to_string(),
            args: args.trim().to_string(),
        });
        let cancel = CancellationToken::new();
        let started = std::time::Instant::now();
        let outcome = call_hook_within::<kind::Command>(
            plugin,
            handle.as_ref(),
            call,
            &cancel,
            &logs,
            self.ui(),
            None,
        )
        .await;
        handle.close().await;
        let error = outcome.as_ref().err().map(|e| &e.error);
        plugin
            .stats
            .record(Hook::Command, Some(started.elapsed()), error);
        outcome.map_err(|error| {
            tracing::warn!(run_id = %run.run_id, plugin = %plugin.name, hook = "command", error_kind = error.error.kind(), "command failed: {}", error.error);
            failed(error)
        })
    }
}

/// A run id for a command: unique in the process, and told apart from a
/// model run's by its `command-` prefix.
fn command_run_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "command-{:x}-{}",
        since_epoch.as_millis(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
