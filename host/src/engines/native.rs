//! Plugins written as Rust closures in the host's own process: for hosts
//! that embed yohost, and the in-process baseline of the benchmarks.

use crate::call::error::CallError;
use crate::call::plugin::{CallLimits, Plugin, PluginRun};
use crate::call::stats::PluginStats;
use crate::load::loaded::LoadedPlugin;
use crate::load::manifest::Manifest;
use crate::model::EngineKind;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use yohost_contract::{Hook, HookCall, HookReply, RunInfo};

type Handler = dyn Fn(HookCall) -> Result<HookReply, CallError> + Send + Sync;

/// A plugin whose hooks are one Rust closure, called inline.
pub struct NativePlugin {
    handler: Arc<Handler>,
}

impl NativePlugin {
    /// A plugin named `name` implementing `hooks` with `handler`, ready to
    /// go into [`PluginHost::from_plugins`](crate::PluginHost::from_plugins).
    /// The manifest sets its mode, priority and timeouts.
    pub fn loaded(
        name: &str,
        hooks: &[Hook],
        manifest: Manifest,
        handler: impl Fn(HookCall) -> Result<HookReply, CallError> + Send + Sync + 'static,
    ) -> LoadedPlugin {
        LoadedPlugin {
            name: name.to_string(),
            file: PathBuf::from(format!("<native:{name}>")),
            engine: EngineKind::Native,
            routed: None,
            ecosystem: crate::model::Ecosystem::Yohost,
            manifest,
            hooks: hooks.iter().copied().collect::<BTreeSet<_>>(),
            warnings: Vec::new(),
            processes: None,
            plugin: Arc::new(NativePlugin {
                handler: Arc::new(handler),
            }),
            stats: PluginStats::default(),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for NativePlugin {
    async fn open_run(&self, _run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(NativeRun {
            handler: Arc::clone(&self.handler),
        }))
    }
}

struct NativeRun {
    handler: Arc<Handler>,
}

#[async_trait::async_trait]
impl PluginRun for NativeRun {
    async fn call(&self, call: HookCall, _limits: CallLimits) -> Result<HookReply, CallError> {
        (self.handler)(call)
    }
}
