//! A dylib plugin that misbehaves on request: `before_tool` on an `echo`
//! call whose `text` is `panic`, `hang` or `error` does that; any other text
//! is allowed. `before_model` fails when the prompt says `fail the model`.

use std::time::Duration;
use yohost_sdk::*;

#[derive(Default)]
struct Hostile;

#[plugin]
impl Plugin for Hostile {
    const NAME: &'static str = "hostile";

    fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        match call.args["text"].as_str().unwrap_or("") {
            "panic" => panic!("hostile plugin panicked on purpose"),
            "hang" => {
                std::thread::sleep(Duration::from_secs(3600));
                Ok(BeforeToolReply::Allow)
            }
            "error" => Err("hostile plugin refused to decide".into()),
            _ => Ok(BeforeToolReply::Allow),
        }
    }

    fn before_model(&self, turn: BeforeModelArgs) -> Result<BeforeModelReply, String> {
        if turn
            .user_request
            .as_deref()
            .unwrap_or("")
            .contains("fail the model")
        {
            return Err("the model gate is broken".into());
        }
        Ok(BeforeModelReply::Continue)
    }
}

export_plugin!(Hostile);
