//! Test only: a host that speaks a next version of the plugin interface
//! beside the released ones, to show what adding a hook does.
//!
//! `yohost:plugin@0.2.0` (`tests/plugins/wasm/wit-next/plugin.wit`) is
//! 0.1.0 with the hook `after-model` added, as a real new hook would come:
//! a new version, bound by a module of its own, next to the frozen ones.
//! The contract has no `after_model`, so this module answers the contract's
//! hooks a 0.2.0 test guest implements (`before-tool`) and the tests call
//! `after-model` on the bindings themselves. What they show:
//! - a component built for 0.1.0 loads on that host and answers its hooks
//!   through a real `yoagent::Agent` (its tool runs, its policy is asked);
//! - a component built for 0.2.0 loads on it too, its contract hook is
//!   called through the same agent, and its new hook is called.

#[path = "../../../tests/support/wasm_guests.rs"]
mod wasm_guests;

use self::exports::yohost::plugin::guest::Guest;
use self::yohost::plugin::host::{Host, LogLevel as WitLevel};
use self::yohost::plugin::types as wit;
use super::runtime::{self, Runtime};
use super::sandbox::State;
use super::since_v0_1_0::V0_1_0;
use super::version::{VersionedGuest, VersionedPre, WitVersion};
use crate::call::error::CallError;
use crate::call::logging::{plugin_log, LogLevel};
use crate::load::adapter::Adapter;
use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::grants::Grants;
use crate::load::loaded::Loaded;
use crate::model::{Ecosystem, EngineKind};
use serde_json::{json, Value};
use std::sync::OnceLock;
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::Store;
use yohost_contract::{Hook, HookCall};

wasmtime::component::bindgen!({
    path: "../tests/plugins/wasm/wit-next",
    world: "plugin",
});

/// `yohost:plugin@0.2.0`, the test's next version.
struct V0_2_0;

/// The released versions and the next one, oldest first.
static WITH_NEXT: [&dyn WitVersion; 2] = [&V0_1_0, &V0_2_0];

impl WitVersion for V0_2_0 {
    fn version(&self) -> &'static str {
        "0.2.0"
    }

    fn add_to_linker(&self, linker: &mut Linker<State>) -> wasmtime::Result<()> {
        Plugin::add_to_linker::<State, HasSelf<State>>(linker, |state| state)
    }

    fn prepare(&self, pre: InstancePre<State>) -> wasmtime::Result<Box<dyn VersionedPre>> {
        Ok(Box::new(PluginPre::new(pre)?))
    }
}

impl wit::Host for State {}

impl Host for State {
    fn log(&mut self, level: WitLevel, message: String) {
        let level = match level {
            WitLevel::Error => LogLevel::Error,
            WitLevel::Warn => LogLevel::Warn,
            WitLevel::Info => LogLevel::Info,
            WitLevel::Debug => LogLevel::Debug,
        };
        plugin_log(&self.run_id, &self.plugin, level, &message);
    }
}

impl VersionedPre for PluginPre<State> {
    fn instantiate(&self, store: &mut Store<State>) -> wasmtime::Result<Box<dyn VersionedGuest>> {
        let plugin = PluginPre::instantiate(self, store)?;
        Ok(Box::new(plugin.yohost_plugin_guest().clone()))
    }
}

impl VersionedGuest for Guest {
    fn name(&self, store: &mut Store<State>) -> wasmtime::Result<String> {
        self.call_name(store)
    }

    /// The contract's hooks among the plugin's: `after-model` is not one.
    fn hooks(&self, store: &mut Store<State>) -> wasmtime::Result<Vec<Hook>> {
        Ok(self
            .call_hooks(store)?
            .into_iter()
            .filter_map(|hook| match hook {
                wit::Hook::Tools => Some(Hook::Tools),
                wit::Hook::CallTool => Some(Hook::CallTool),
                wit::Hook::BeforeTool => Some(Hook::BeforeTool),
                wit::Hook::AfterTool => Some(Hook::AfterTool),
                wit::Hook::BeforeModel => Some(Hook::BeforeModel),
                wit::Hook::OnInput => Some(Hook::OnInput),
                wit::Hook::OnStop => Some(Hook::OnStop),
                wit::Hook::OnEvent => Some(Hook::OnEvent),
                wit::Hook::Finish => Some(Hook::Finish),
                wit::Hook::AfterModel => None,
            })
            .collect())
    }

    /// `before-tool` only: the test guest implements no other contract hook.
    fn call(
        &self,
        store: &mut Store<State>,
        call: &HookCall,
    ) -> wasmtime::Result<Result<Value, CallError>> {
        let HookCall::BeforeTool(a) = call else {
            return Ok(Err(CallError::Guest(format!(
                "the test's 0.2.0 binding has no `{}`",
                call.hook()
            ))));
        };
        let answer = self.call_before_tool(
            store,
            &wit::BeforeToolArgs {
                run: run(&a.run),
                tool: a.tool.clone(),
                call_id: a.call_id.clone(),
                args: a.args.to_string(),
                user_request: a.user_request.clone(),
                latest_user_text: a.latest_user_text.clone(),
            },
        )?;
        Ok(match answer {
            Ok(wit::BeforeToolReply::Allow) => Ok(Value::Null),
            Ok(wit::BeforeToolReply::Deny(reason)) => Ok(json!({ "deny": reason })),
            Ok(wit::BeforeToolReply::Rewrite(args)) => {
                Ok(json!({ "args": serde_json::from_str::<Value>(&args).unwrap() }))
            }
            Err(message) => Err(CallError::Guest(message)),
        })
    }
}

fn run(run: &yohost_contract::RunInfo) -> wit::RunInfo {
    wit::RunInfo {
        run_id: run.run_id.clone(),
        label: run.label.clone(),
        depth: u32::try_from(run.depth).unwrap(),
        parent_run_id: run.parent_run_id.clone(),
        delegated_by: run.delegated_by.clone(),
    }
}

/// The runtime that speaks [`WITH_NEXT`].
fn next_runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| runtime::build(&WITH_NEXT).expect("the Wasm engine starts"))
}

/// yohost's own Wasm plugins, loaded on [`next_runtime`].
struct WasmWithNext;

impl Adapter for WasmWithNext {
    fn engine(&self) -> EngineKind {
        EngineKind::WASM
    }

    fn ecosystem(&self) -> Ecosystem {
        Ecosystem::YOHOST
    }

    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        super::load_in(next_runtime(), candidate, &grants)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::plugin_host::PluginHost;
    use std::sync::Arc;

    /// A plugin directory holding the guest components `guests` (name, guest),
    /// opened by a host whose Wasm engine speaks 0.1.0 and 0.2.0.
    fn host_with_next(guests: &[(&str, &str)]) -> (tempfile::TempDir, PluginHost) {
        let dir = tempfile::tempdir().unwrap();
        for (name, guest) in guests {
            let folder = dir.path().join(name);
            std::fs::create_dir(&folder).unwrap();
            let entry = wasm_guests::guest(guest);
            std::fs::write(
                folder.join("plugin.toml"),
                format!(
                    "name = \"{name}\"\nentry = {:?}\n",
                    entry.display().to_string()
                ),
            )
            .unwrap();
        }
        let host = PluginHost::builder(dir.path())
            .adapter(Arc::new(WasmWithNext))
            .open()
            .unwrap();
        (dir, host)
    }

    /// One run of a real agent with `host`'s plugins, whose model calls
    /// `pixel` once and then answers `done`: each tool result (text, is_error).
    async fn call_pixel(host: &PluginHost) -> Vec<(String, bool)> {
        use yoagent::provider::mock::{MockResponse, MockToolCall};
        use yoagent::provider::{MockProvider, ModelConfig};
        let provider = MockProvider::new(vec![
            MockResponse::ToolCalls(vec![MockToolCall {
                name: "pixel".into(),
                arguments: json!({}),
                provider_metadata: None,
            }]),
            MockResponse::Text("done".into()),
        ]);
        let mut agent = yoagent::Agent::from_provider(provider, ModelConfig::mock())
            .with_extension(host.extension());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        agent.prompt_with_sender("go", tx).await;
        let mut results = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let yoagent::AgentEvent::ToolExecutionEnd {
                result, is_error, ..
            } = event
            {
                let text = result
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        yoagent::Content::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(" | ");
                results.push((text, is_error));
            }
        }
        results
    }

    #[tokio::test]
    async fn a_component_built_for_0_1_0_loads_and_runs_when_the_host_also_speaks_0_2_0() {
        let (_dir, host) = host_with_next(&[("policy", "guest_policy")]);
        assert!(host.refused().is_empty(), "{:?}", host.refused());
        let policy = &host.plugins()[0];
        assert_eq!(
            policy.hooks.iter().copied().collect::<Vec<_>>(),
            [Hook::Tools, Hook::CallTool, Hook::BeforeTool]
        );
        // `tools` offered `pixel`, `before_tool` allowed it, `call_tool` ran it.
        assert_eq!(call_pixel(&host).await, [("one pixel".to_string(), false)]);
    }

    #[tokio::test]
    async fn a_component_built_for_0_2_0_has_its_contract_hooks_and_its_new_hook_called() {
        let (_dir, host) =
            host_with_next(&[("policy", "guest_policy"), ("next", "guest_next_wit")]);
        assert!(host.refused().is_empty(), "{:?}", host.refused());
        let next = host
            .plugins()
            .into_iter()
            .find(|p| p.name == "next")
            .unwrap();
        assert_eq!(
            next.hooks.iter().copied().collect::<Vec<_>>(),
            [Hook::BeforeTool]
        );
        // The 0.2.0 policy denies the 0.1.0 plugin's tool through the agent.
        let results = call_pixel(&host).await;
        assert_eq!(results.len(), 1, "{results:?}");
        assert!(
            results[0].1 && results[0].0.contains("next denies pixel"),
            "{results:?}"
        );

        // Its new hook, on an instance of the 0.2.0 bindings.
        let runtime = next_runtime();
        let component = wasmtime::component::Component::from_file(
            &runtime.engine,
            wasm_guests::guest("guest_next_wit"),
        )
        .unwrap();
        let pre = PluginPre::new(runtime.linker.instantiate_pre(&component).unwrap()).unwrap();
        let state = State::new(
            &crate::engines::wasm::sandbox::Grants::none(),
            "next",
            "run-1",
        )
        .unwrap();
        let mut store = Store::new(&runtime.engine, state);
        store.set_epoch_deadline(u64::MAX / 2);
        let guest = pre.instantiate(&mut store).unwrap();
        let guest = guest.yohost_plugin_guest();
        assert!(guest
            .call_hooks(&mut store)
            .unwrap()
            .contains(&wit::Hook::AfterModel));
        let reply = guest
            .call_after_model(
                &mut store,
                &wit::AfterModelArgs {
                    run: run(&yohost_contract::RunInfo::default()),
                    model: "mock".into(),
                    answer: "done".into(),
                },
            )
            .unwrap();
        assert_eq!(
            format!("{reply:?}"),
            format!(
                "{:?}",
                Ok::<_, String>(wit::AfterModelReply::Note(
                    "after-model saw mock say \"done\"".into()
                ))
            )
        );
    }
}
