//! A dylib policy that rewrites every `echo` call, appending ` +tag` to its
//! text, and logs what it saw. Two copies in a chain show that a rewrite
//! feeds the next plugin.

use yohost_sdk::*;

#[derive(Default)]
struct Tagger;

#[plugin]
impl Plugin for Tagger {
    const NAME: &'static str = "tagger";

    fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        if call.tool != "echo" {
            return Ok(BeforeToolReply::Allow);
        }
        let text = call.args["text"].as_str().unwrap_or("");
        info(&format!("tagging echo of {text:?}"));
        Ok(BeforeToolReply::Rewrite(
            json!({ "text": format!("{text} +tag") }),
        ))
    }
}

export_plugin!(Tagger);
