//! Plugins written as Rust closures in the host's own process: for hosts
//! that embed yohost, and the in-process baseline of the benchmarks.

use crate::call::error::CallError;
use crate::call::plugin::{CallLimits, Plugin, PluginRun};
use crate::load::loaded::LoadedPlugin;
use crate::load::manifest::Manifest;
use crate::model::EngineKind;
use serde_json::Value;
use std::sync::Arc;
use yohost_contract::{Hook, HookCall, HookReply, ReplyError, RunInfo};

type Handler = dyn Fn(HookCall) -> Result<HookReply, CallError> + Send + Sync;

/// A plugin whose hooks are one Rust closure, called inline.
pub struct NativePlugin {
    handler: Arc<Handler>,
}

impl NativePlugin {
    /// A plugin named `name` implementing `hooks` with `handler`, ready to
    /// go into [`PluginHost::from_plugins`](crate::PluginHost::from_plugins).
    /// The manifest sets its mode, priority and timeouts. The handler's
    /// reply crosses as the contract's JSON form and is read by the same
    /// strict reader as every engine's (a blank deny is a bad reply); a
    /// reply of another hook than the one called is a bad reply too.
    pub fn loaded(
        name: &str,
        hooks: &[Hook],
        manifest: Manifest,
        handler: impl Fn(HookCall) -> Result<HookReply, CallError> + Send + Sync + 'static,
    ) -> LoadedPlugin {
        let plugin = Arc::new(NativePlugin {
            handler: Arc::new(handler),
        });
        let mut loaded = LoadedPlugin::new(name, EngineKind::NATIVE, plugin, hooks.iter().copied());
        loaded.manifest = manifest;
        loaded
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
    async fn call(&self, call: HookCall, _limits: CallLimits) -> Result<Value, CallError> {
        let hook = call.hook();
        let reply = (self.handler)(call)?;
        if !reply.answers(hook) {
            return Err(CallError::BadReply(ReplyError::new(
                hook,
                format!("got the reply of another hook: {reply:?}"),
            )));
        }
        Ok(reply.to_json())
    }
}
