//! The host side of the `yohost:plugin@0.1.0` world
//! (`contract/wit/since_v0.1.0/plugin.wit`, frozen), and the conversions
//! between its types and the contract's.
//!
//! Arguments go out typed; free-form JSON (`args`, `parameters`, `details`,
//! `event`) goes as JSON text. Replies come back typed, are turned into the
//! contract's JSON form, which the host reads with the one strict parser
//! ([`HookKind::parse_reply`](yohost_contract::HookKind::parse_reply)), so a
//! Wasm reply is held to exactly the rules of every other engine.

use self::exports::yohost::plugin::guest::Guest;
use self::yohost::plugin::host::{Host, LogLevel as WitLevel};
use self::yohost::plugin::types as wit;
use super::sandbox::State;
use super::version::{VersionedGuest, VersionedPre, WitVersion};
use crate::call::codec::check_size;
use crate::call::error::CallError;
use crate::call::logging::{plugin_log, LogLevel};
use serde_json::{json, Map, Value};
use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::Store;
use yohost_contract::{ContentBlock, Hook, HookCall, ReplyError, RunInfo};

wasmtime::component::bindgen!({
    path: "../contract/wit/since_v0.1.0",
    world: "plugin",
});

/// `yohost:plugin@0.1.0`: every hook of the contract's first release.
pub(super) struct V0_1_0;

impl WitVersion for V0_1_0 {
    fn version(&self) -> &'static str {
        "0.1.0"
    }

    fn add_to_linker(&self, linker: &mut Linker<State>) -> wasmtime::Result<()> {
        Plugin::add_to_linker::<State, HasSelf<State>>(linker, |state| state)
    }

    fn prepare(&self, pre: InstancePre<State>) -> wasmtime::Result<Box<dyn VersionedPre>> {
        Ok(Box::new(PluginPre::new(pre)?))
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

    fn hooks(&self, store: &mut Store<State>) -> wasmtime::Result<Vec<Hook>> {
        Ok(self.call_hooks(store)?.into_iter().map(hook).collect())
    }

    fn call(
        &self,
        store: &mut Store<State>,
        call: &HookCall,
    ) -> wasmtime::Result<Result<Value, CallError>> {
        Ok(match invoke(self, store, call)? {
            Ok(answer) => reply(call, answer),
            Err(message) => Err(CallError::Guest(message)),
        })
    }
}

/// `types` holds only types; the guest imports it for them.
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

/// The contract hook of a WIT hook.
fn hook(hook: wit::Hook) -> Hook {
    match hook {
        wit::Hook::Tools => Hook::Tools,
        wit::Hook::CallTool => Hook::CallTool,
        wit::Hook::BeforeTool => Hook::BeforeTool,
        wit::Hook::AfterTool => Hook::AfterTool,
        wit::Hook::BeforeModel => Hook::BeforeModel,
        wit::Hook::OnInput => Hook::OnInput,
        wit::Hook::OnStop => Hook::OnStop,
        wit::Hook::OnEvent => Hook::OnEvent,
        wit::Hook::Finish => Hook::Finish,
    }
}

/// What a guest's hook returned, before it is checked.
enum WitReply {
    Tools(Vec<wit::ToolSpec>),
    CallTool(wit::ToolOutput),
    BeforeTool(wit::BeforeToolReply),
    AfterTool(wit::AfterToolReply),
    BeforeModel(wit::BeforeModelReply),
    OnInput(wit::OnInputReply),
    OnStop(wit::OnStopReply),
    Ignored,
}

/// Call the guest's export for `call`. The outer error is a trap; the inner
/// one is the plugin's own error.
fn invoke(
    guest: &Guest,
    store: &mut Store<State>,
    call: &HookCall,
) -> wasmtime::Result<Result<WitReply, String>> {
    let text = |value: &Value| value.to_string();
    Ok(match call {
        HookCall::Tools(r) => guest.call_tools(store, &run(r))?.map(WitReply::Tools),
        HookCall::CallTool(a) => guest
            .call_call_tool(
                store,
                &wit::CallToolArgs {
                    run: run(&a.run),
                    tool: a.tool.clone(),
                    call_id: a.call_id.clone(),
                    args: text(&a.args),
                },
            )?
            .map(WitReply::CallTool),
        HookCall::BeforeTool(a) => guest
            .call_before_tool(
                store,
                &wit::BeforeToolArgs {
                    run: run(&a.run),
                    tool: a.tool.clone(),
                    call_id: a.call_id.clone(),
                    args: text(&a.args),
                    user_request: a.user_request.clone(),
                    latest_user_text: a.latest_user_text.clone(),
                },
            )?
            .map(WitReply::BeforeTool),
        HookCall::AfterTool(a) => guest
            .call_after_tool(
                store,
                &wit::AfterToolArgs {
                    run: run(&a.run),
                    tool: a.tool.clone(),
                    call_id: a.call_id.clone(),
                    args: text(&a.args),
                    output: wit::ToolOutput {
                        content: a.output.content.iter().cloned().map(block_out).collect(),
                        details: text(&a.output.details),
                        is_error: a.output.is_error,
                    },
                },
            )?
            .map(WitReply::AfterTool),
        HookCall::BeforeModel(a) => guest
            .call_before_model(
                store,
                &wit::BeforeModelArgs {
                    run: run(&a.run),
                    model: a.model.clone(),
                    tools: a.tools.clone(),
                    user_request: a.user_request.clone(),
                },
            )?
            .map(WitReply::BeforeModel),
        HookCall::OnInput(a) => guest
            .call_on_input(
                store,
                &wit::OnInputArgs {
                    run: run(&a.run),
                    text: a.text.clone(),
                },
            )?
            .map(WitReply::OnInput),
        HookCall::OnStop(a) => guest
            .call_on_stop(
                store,
                &wit::OnStopArgs {
                    run: run(&a.run),
                    answer: a.answer.clone(),
                    continues: u32::try_from(a.continues).unwrap_or(u32::MAX),
                },
            )?
            .map(WitReply::OnStop),
        HookCall::OnEvent(a) => guest
            .call_on_event(
                store,
                &wit::OnEventArgs {
                    run: run(&a.run),
                    event: text(&a.event),
                },
            )?
            .map(|()| WitReply::Ignored),
        HookCall::Finish(a) => guest
            .call_finish(
                store,
                &wit::FinishArgs {
                    run: run(&a.run),
                    end: a.end.clone(),
                    reason: a.reason.clone(),
                    error: a.error.clone(),
                },
            )?
            .map(|()| WitReply::Ignored),
        // An app hook, in no WIT version: a component never declares it, and
        // the host calls no hook a plugin did not declare.
        HookCall::Command(_) => Err(format!("`{}` is not in yohost:plugin@0.1.0", call.hook())),
    })
}

/// A guest's reply to `call` in the contract's JSON form: its JSON text
/// must parse, and its size must be within
/// [`MAX_REPLY_BYTES`](crate::model::limits::MAX_REPLY_BYTES).
fn reply(call: &HookCall, reply: WitReply) -> Result<Value, CallError> {
    let hook = call.hook();
    let parse = |field: &str, text: &str| -> Result<Value, CallError> {
        check_size(text.len())?;
        serde_json::from_str(text).map_err(|e| {
            CallError::BadReply(ReplyError {
                hook,
                problem: format!("`{field}` is not JSON: {e}"),
            })
        })
    };
    let value = match reply {
        WitReply::Tools(tools) => Value::Array(
            tools
                .into_iter()
                .map(|t| {
                    let mut spec = json!({
                        "name": t.name,
                        "description": t.description,
                        "parameters": parse("parameters", &t.parameters)?,
                    });
                    if let Some(label) = t.label {
                        spec["label"] = Value::String(label);
                    }
                    Ok(spec)
                })
                .collect::<Result<_, CallError>>()?,
        ),
        WitReply::CallTool(out) => json!({
            "content": blocks_in(out.content)?,
            "details": parse("details", &out.details)?,
            "is_error": out.is_error,
        }),
        WitReply::BeforeTool(wit::BeforeToolReply::Allow) => Value::Null,
        WitReply::BeforeTool(wit::BeforeToolReply::Deny(reason)) => json!({ "deny": reason }),
        WitReply::BeforeTool(wit::BeforeToolReply::Rewrite(args)) => {
            json!({ "args": parse("args", &args)? })
        }
        WitReply::AfterTool(edit) => {
            let mut map = Map::new();
            if let Some(content) = edit.content {
                map.insert("content".into(), blocks_in(content)?);
            }
            if let Some(details) = edit.details {
                map.insert("details".into(), parse("details", &details)?);
            }
            if let Some(is_error) = edit.is_error {
                map.insert("is_error".into(), Value::Bool(is_error));
            }
            if map.is_empty() {
                Value::Null
            } else {
                Value::Object(map)
            }
        }
        WitReply::BeforeModel(wit::BeforeModelReply::Proceed) => Value::Null,
        WitReply::BeforeModel(wit::BeforeModelReply::Note(note)) => json!({ "note": note }),
        WitReply::BeforeModel(wit::BeforeModelReply::Stop(reason)) => json!({ "stop": reason }),
        WitReply::OnInput(wit::OnInputReply::Pass) => Value::Null,
        WitReply::OnInput(wit::OnInputReply::Reject(reason)) => json!({ "reject": reason }),
        WitReply::OnStop(wit::OnStopReply::Accept) => Value::Null,
        WitReply::OnStop(wit::OnStopReply::Continue(message)) => json!({ "continue": message }),
        WitReply::OnStop(wit::OnStopReply::Fail(reason)) => json!({ "fail": reason }),
        WitReply::Ignored => Value::Null,
    };
    check_size(text_bytes(&value))?;
    Ok(value)
}

/// About how many bytes a reply takes: its text, keys and a few bytes for
/// each other value. Every engine holds replies to the same limit; this one
/// counts the typed reply rather than its encoding.
fn text_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(text_bytes).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + text_bytes(v)).sum(),
        _ => 8,
    }
}

fn run(run: &RunInfo) -> wit::RunInfo {
    wit::RunInfo {
        run_id: run.run_id.clone(),
        label: run.label.clone(),
        depth: u32::try_from(run.depth).unwrap_or(u32::MAX),
        parent_run_id: run.parent_run_id.clone(),
        delegated_by: run.delegated_by.clone(),
    }
}

fn block_out(block: ContentBlock) -> wit::ContentBlock {
    match block {
        ContentBlock::Text { text } => wit::ContentBlock::Text(text),
        ContentBlock::Image { data, mime_type } => {
            wit::ContentBlock::Image(wit::Image { data, mime_type })
        }
    }
}

/// Content blocks in the contract's JSON form, refused past the reply limit.
fn blocks_in(blocks: Vec<wit::ContentBlock>) -> Result<Value, CallError> {
    let size: usize = blocks
        .iter()
        .map(|b| match b {
            wit::ContentBlock::Text(text) => text.len(),
            wit::ContentBlock::Image(image) => image.data.len() + image.mime_type.len(),
        })
        .sum();
    check_size(size)?;
    Ok(Value::Array(
        blocks
            .into_iter()
            .map(|b| match b {
                wit::ContentBlock::Text(text) => json!({"type": "text", "text": text}),
                wit::ContentBlock::Image(image) => {
                    json!({"type": "image", "data": image.data, "mimeType": image.mime_type})
                }
            })
            .collect(),
    ))
}
