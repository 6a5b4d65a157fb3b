//! `#[plugin]` derives the hook set from the methods an impl block defines,
//! and the dylib entry carries exactly that set as its bitmask.

use yohost_sdk::*;

#[derive(Default)]
struct OnlyBeforeTool;

#[plugin]
impl Plugin for OnlyBeforeTool {
    const NAME: &'static str = "only-before-tool";

    fn before_tool(&self, _: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        Ok(BeforeToolReply::Deny("no".into()))
    }
}

export_plugin!(OnlyBeforeTool);

#[derive(Default)]
struct NoHooks;

#[plugin]
impl Plugin for NoHooks {
    const NAME: &'static str = "no-hooks";
}

#[derive(Default)]
struct Several;

#[plugin]
impl yohost_sdk::Plugin for Several {
    const NAME: &'static str = "several";

    fn finish(&self, _: FinishArgs) -> Result<(), String> {
        Ok(())
    }

    fn tools(&self, _: &RunInfo) -> Result<Vec<ToolSpec>, String> {
        Ok(Vec::new())
    }

    #[cfg(any())]
    fn after_tool(&self, _: AfterToolArgs) -> Result<AfterToolReply, String> {
        Ok(AfterToolReply::default())
    }
}

fn bit(hook: Hook) -> u32 {
    1 << hook.abi_number()
}

#[test]
fn a_plugin_defining_only_before_tool_reports_exactly_that_hook() {
    assert_eq!(
        OnlyBeforeTool::DERIVED_HOOKS.as_slice(),
        &[Hook::BeforeTool]
    );
    let entry = unsafe { &*yohost_plugin_entry() };
    assert_eq!(entry.hooks, bit(Hook::BeforeTool), "the dylib entry's mask");
}

#[test]
fn a_plugin_defining_no_hook_reports_none() {
    assert_eq!(NoHooks::DERIVED_HOOKS.as_slice(), &[] as &[Hook]);
    assert_eq!(NoHooks::DERIVED_HOOKS.mask(), 0);
}

#[test]
fn every_defined_hook_counts_and_a_compiled_out_one_does_not() {
    assert_eq!(
        Several::DERIVED_HOOKS.as_slice(),
        &[Hook::Finish, Hook::Tools]
    );
    assert_eq!(
        Several::DERIVED_HOOKS.mask(),
        bit(Hook::Finish) | bit(Hook::Tools)
    );
}
