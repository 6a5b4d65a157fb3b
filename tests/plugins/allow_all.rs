//! A policy that allows every call: the smallest plugin with a
//! `before_tool`, for the benches. Built as a dylib by `tests/plugins/native`
//! and as a component by `tests/plugins/wasm`.

use yohost_sdk::*;

#[derive(Default)]
struct AllowAll;

#[plugin]
impl Plugin for AllowAll {
    const NAME: &'static str = "allow-all";

    fn before_tool(&self, _call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        Ok(BeforeToolReply::Allow)
    }
}

export_plugin!(AllowAll);
