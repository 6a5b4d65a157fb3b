//! A component built against `yohost:plugin@0.2.0` (`wit-next`), the
//! test-only next version that adds the `after-model` hook. The released
//! host does not speak 0.2.0 and refuses it at load, naming both versions;
//! the host's tests that bind 0.2.0 beside 0.1.0 call its hooks:
//! - `before-tool` denies every call, naming the tool;
//! - `after-model` answers a note that quotes the answer it was given.

wit_bindgen::generate!({ path: "wit-next", world: "plugin" });

use exports::yohost::plugin::guest::Guest;
use yohost::plugin::types::*;

struct Next;

impl Guest for Next {
    fn name() -> String {
        "next".into()
    }

    fn hooks() -> Vec<Hook> {
        vec![Hook::BeforeTool, Hook::AfterModel]
    }

    fn tools(_: RunInfo) -> Result<Vec<ToolSpec>, String> {
        Err("not a hook of this plugin".into())
    }

    fn call_tool(_: CallToolArgs) -> Result<ToolOutput, String> {
        Err("not a hook of this plugin".into())
    }

    fn before_tool(args: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        Ok(BeforeToolReply::Deny(format!("next denies {}", args.tool)))
    }

    fn after_tool(_: AfterToolArgs) -> Result<AfterToolReply, String> {
        Err("not a hook of this plugin".into())
    }

    fn before_model(_: BeforeModelArgs) -> Result<BeforeModelReply, String> {
        Err("not a hook of this plugin".into())
    }

    fn on_input(_: OnInputArgs) -> Result<OnInputReply, String> {
        Err("not a hook of this plugin".into())
    }

    fn on_stop(_: OnStopArgs) -> Result<OnStopReply, String> {
        Err("not a hook of this plugin".into())
    }

    fn on_event(_: OnEventArgs) -> Result<(), String> {
        Err("not a hook of this plugin".into())
    }

    fn finish(_: FinishArgs) -> Result<(), String> {
        Err("not a hook of this plugin".into())
    }

    fn after_model(args: AfterModelArgs) -> Result<AfterModelReply, String> {
        Ok(AfterModelReply::Note(format!(
            "after-model saw {} say {:?}",
            args.model, args.answer
        )))
    }
}

export!(Next);
