//! The Wasm component side: the exports of the `yohost:plugin` world
//! (`wit/plugin.wit`), backed by a [`Plugin`]. Used through
//! [`export_plugin!`](crate::export_plugin); not called directly.
//!
//! Each instance the host creates (one per run) holds one plugin value. A
//! panic aborts the instance: the host sees a trap and fails closed; the
//! panic message is logged through the host first.

use crate::{instance, Plugin};
use exports::yohost::plugin::guest::Guest;
use serde_json::Value;
use std::marker::PhantomData;
use yohost::plugin::types as wit;

wit_bindgen::generate!({
    path: "wit",
    world: "plugin",
    pub_export_macro: true,
    export_macro_name: "export_component",
    default_bindings_module: "yohost_sdk::wasm",
    runtime_path: "yohost_sdk::__wit_bindgen::rt",
});

/// The component's exports for the plugin type `P`.
pub struct Component<P>(PhantomData<P>);

/// The plugin value of this instance; the first use also routes panic
/// messages to the host's log.
fn plugin<P: Plugin>() -> &'static P {
    static PANIC_HOOK: std::sync::Once = std::sync::Once::new();
    PANIC_HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| crate::error(&format!("panicked: {info}"))));
    });
    instance::<P>()
}

/// Send one log line to the host.
pub(crate) fn log(level: u32, message: &str) {
    use yohost::plugin::host::{log, LogLevel};
    let level = match level {
        yohost_contract::abi::LOG_ERROR => LogLevel::Error,
        yohost_contract::abi::LOG_WARN => LogLevel::Warn,
        yohost_contract::abi::LOG_DEBUG => LogLevel::Debug,
        _ => LogLevel::Info,
    };
    log(level, message);
}

fn json(field: &str, text: &str) -> Result<Value, String> {
    serde_json::from_str(text)
        .map_err(|e| format!("the host sent `{field}` this plugin cannot read: {e}"))
}

fn run(run: wit::RunInfo) -> crate::RunInfo {
    crate::RunInfo {
        run_id: run.run_id,
        label: run.label,
        depth: run.depth as usize,
        parent_run_id: run.parent_run_id,
        delegated_by: run.delegated_by,
    }
}

/// The hook in the WIT package the SDK builds against; `None` for an app
/// hook ([`crate::Hook::APP`]), which the SDK's `Plugin` does not offer.
fn hook(hook: crate::Hook) -> Option<wit::Hook> {
    use crate::Hook as H;
    Some(match hook {
        H::Tools => wit::Hook::Tools,
        H::CallTool => wit::Hook::CallTool,
        H::BeforeTool => wit::Hook::BeforeTool,
        H::AfterTool => wit::Hook::AfterTool,
        H::BeforeModel => wit::Hook::BeforeModel,
        H::OnInput => wit::Hook::OnInput,
        H::OnStop => wit::Hook::OnStop,
        H::OnEvent => wit::Hook::OnEvent,
        H::Finish => wit::Hook::Finish,
        H::Command => return None,
    })
}

fn block_out(block: crate::ContentBlock) -> wit::ContentBlock {
    match block {
        crate::ContentBlock::Text { text } => wit::ContentBlock::Text(text),
        crate::ContentBlock::Image { data, mime_type } => {
            wit::ContentBlock::Image(wit::Image { data, mime_type })
        }
    }
}

fn block_in(block: wit::ContentBlock) -> crate::ContentBlock {
    match block {
        wit::ContentBlock::Text(text) => crate::ContentBlock::Text { text },
        wit::ContentBlock::Image(image) => crate::ContentBlock::Image {
            data: image.data,
            mime_type: image.mime_type,
        },
    }
}

fn blocks_out(blocks: Vec<crate::ContentBlock>) -> Vec<wit::ContentBlock> {
    blocks.into_iter().map(block_out).collect()
}

impl<P: Plugin> Guest for Component<P> {
    fn name() -> String {
        P::NAME.to_string()
    }

    fn hooks() -> Vec<wit::Hook> {
        P::DERIVED_HOOKS
            .as_slice()
            .iter()
            .copied()
            .filter_map(hook)
            .collect()
    }

    fn tools(r: wit::RunInfo) -> Result<Vec<wit::ToolSpec>, String> {
        let tools = plugin::<P>().tools(&run(r))?;
        Ok(tools
            .into_iter()
            .map(|t| wit::ToolSpec {
                name: t.name,
                description: t.description,
                parameters: t.parameters.to_string(),
                label: t.label,
            })
            .collect())
    }

    fn call_tool(a: wit::CallToolArgs) -> Result<wit::ToolOutput, String> {
        let reply = plugin::<P>().call_tool(crate::CallToolArgs {
            run: run(a.run),
            tool: a.tool,
            call_id: a.call_id,
            args: json("args", &a.args)?,
        })?;
        Ok(wit::ToolOutput {
            content: blocks_out(reply.content),
            details: reply.details.to_string(),
            is_error: reply.is_error,
        })
    }

    fn before_tool(a: wit::BeforeToolArgs) -> Result<wit::BeforeToolReply, String> {
        let reply = plugin::<P>().before_tool(crate::BeforeToolArgs {
            run: run(a.run),
            tool: a.tool,
            call_id: a.call_id,
            args: json("args", &a.args)?,
            user_request: a.user_request,
            latest_user_text: a.latest_user_text,
        })?;
        Ok(match reply {
            crate::BeforeToolReply::Allow => wit::BeforeToolReply::Allow,
            crate::BeforeToolReply::Deny(reason) => wit::BeforeToolReply::Deny(reason),
            crate::BeforeToolReply::Rewrite(args) => {
                wit::BeforeToolReply::Rewrite(args.to_string())
            }
        })
    }

    fn after_tool(a: wit::AfterToolArgs) -> Result<wit::AfterToolReply, String> {
        let reply = plugin::<P>().after_tool(crate::AfterToolArgs {
            run: run(a.run),
            tool: a.tool,
            call_id: a.call_id,
            args: json("args", &a.args)?,
            output: crate::ToolOutputData {
                content: a.output.content.into_iter().map(block_in).collect(),
                details: json("details", &a.output.details)?,
                is_error: a.output.is_error,
            },
        })?;
        Ok(wit::AfterToolReply {
            content: reply.content.map(blocks_out),
            details: reply.details.map(|d| d.to_string()),
            is_error: reply.is_error,
        })
    }

    fn before_model(a: wit::BeforeModelArgs) -> Result<wit::BeforeModelReply, String> {
        let reply = plugin::<P>().before_model(crate::BeforeModelArgs {
            run: run(a.run),
            model: a.model,
            tools: a.tools,
            user_request: a.user_request,
        })?;
        Ok(match reply {
            crate::BeforeModelReply::Continue => wit::BeforeModelReply::Proceed,
            crate::BeforeModelReply::Note(note) => wit::BeforeModelReply::Note(note),
            crate::BeforeModelReply::Stop(reason) => wit::BeforeModelReply::Stop(reason),
        })
    }

    fn on_input(a: wit::OnInputArgs) -> Result<wit::OnInputReply, String> {
        let reply = plugin::<P>().on_input(crate::OnInputArgs {
            run: run(a.run),
            text: a.text,
        })?;
        Ok(match reply {
            crate::OnInputReply::Pass => wit::OnInputReply::Pass,
            crate::OnInputReply::Reject(reason) => wit::OnInputReply::Reject(reason),
        })
    }

    fn on_stop(a: wit::OnStopArgs) -> Result<wit::OnStopReply, String> {
        let reply = plugin::<P>().on_stop(crate::OnStopArgs {
            run: run(a.run),
            answer: a.answer,
            continues: a.continues as usize,
        })?;
        Ok(match reply {
            crate::OnStopReply::Accept => wit::OnStopReply::Accept,
            crate::OnStopReply::Continue(message) => wit::OnStopReply::Continue(message),
            crate::OnStopReply::Fail(reason) => wit::OnStopReply::Fail(reason),
        })
    }

    fn on_event(a: wit::OnEventArgs) -> Result<(), String> {
        plugin::<P>().on_event(crate::OnEventArgs {
            run: run(a.run),
            event: json("event", &a.event)?,
        })
    }

    fn finish(a: wit::FinishArgs) -> Result<(), String> {
        plugin::<P>().finish(crate::FinishArgs {
            run: run(a.run),
            end: a.end,
            reason: a.reason,
            error: a.error,
        })
    }
}
