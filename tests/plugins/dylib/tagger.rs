//! A dylib policy that rewrites every `echo` call, appending ` +tag` to its
//! text, and logs what it saw. Two copies in a chain show that a rewrite
//! feeds the next plugin. On a recheck (the text goes on from one it made)
//! it allows, so that two copies converge.

use std::sync::Mutex;
use yohost_sdk::*;

#[derive(Default)]
struct Tagger {
    made: Mutex<Vec<String>>,
}

#[plugin]
impl Plugin for Tagger {
    const NAME: &'static str = "tagger";

    fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        if call.tool != "echo" {
            return Ok(BeforeToolReply::Allow);
        }
        let text = call.args["text"].as_str().unwrap_or("");
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        // Copies of one library share this list: a text it made is tagged
        // again by the next copy, one that goes on from it is a recheck.
        if made
            .iter()
            .any(|m| text.len() > m.len() && text.starts_with(m.as_str()))
        {
            return Ok(BeforeToolReply::Allow);
        }
        info(&format!("tagging echo of {text:?}"));
        let tagged = format!("{text} +tag");
        made.push(tagged.clone());
        Ok(BeforeToolReply::Rewrite(json!({ "text": tagged })))
    }
}

export_plugin!(Tagger);
