//! {{name}}: a yohost plugin in Rust.
//!
//! `#[plugin]` derives the hooks the host calls from the methods this `impl`
//! block defines: add a hook (`tools` and `call_tool`, `after_tool`,
//! `on_input`, ...) by defining its method. See the `Plugin` trait's docs.

use yohost_sdk::*;

#[derive(Default)]
struct Guard;

#[plugin]
impl Plugin for Guard {
    const NAME: &'static str = "{{name}}";

    fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        let command = call.args["command"].as_str().unwrap_or("");
        if call.tool == "bash" && command.contains("rm -rf") {
            warn("denied a bash command containing `rm -rf`");
            return Ok(BeforeToolReply::Deny(
                "{{name}}: `rm -rf` is not allowed".into(),
            ));
        }
        Ok(BeforeToolReply::Allow)
    }
}

export_plugin!(Guard);
