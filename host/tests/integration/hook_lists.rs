//! Every language's list of hooks is the contract's: the Python SDK's
//! `HOOKS` (and the host's copy of it), the TypeScript declarations and the
//! embedded engine's shape, and the Rust SDK's `Plugin` trait. A hook added
//! to the contract and forgotten in one of them fails here, naming the
//! file. (The WIT's `hook` enum of each version is checked where the WIT
//! lives, in `contract/tests/wit_versions.rs`, and the SDK's copy of the
//! newest in `sdk-rust/tests/wit_copy.rs`.)

use std::path::Path;
use yohost::contract::Hook;

/// The text of `path`, relative to the workspace.
fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The contract's hooks as `name` spells each one.
fn contract(spell: impl Fn(&str) -> String) -> Vec<String> {
    Hook::ALL
        .iter()
        .filter(|h| !Hook::APP.contains(h))
        .map(|h| spell(h.as_str()))
        .collect()
}

/// The items of the first bracketed list after `start` in `text`, between
/// `open` and `close`, unquoted.
fn list_after(text: &str, start: &str, open: char, close: char) -> Vec<String> {
    let after = &text[text.find(start).unwrap_or_else(|| panic!("no `{start}`")) + start.len()..];
    let inside = &after[after.find(open).unwrap() + 1..];
    inside[..inside.find(close).unwrap()]
        .split(',')
        .map(|item| item.trim().trim_matches('"').to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

#[test]
fn the_python_sdk_and_the_host_s_copy_list_the_contract_s_hooks_in_order() {
    for file in [
        "sdk-python/src/yohost/__init__.py",
        "host/src/engines/python/yohost.py",
    ] {
        assert_eq!(
            list_after(&read(file), "HOOKS = ", '(', ')'),
            contract(str::to_string),
            "{file}"
        );
    }
}

#[test]
fn the_typescript_declarations_and_shape_list_every_hook_beside_tools() {
    // `tools` and `call_tool` are a plugin's `tools` list and each tool's
    // `run` in TypeScript; every other hook is a field of its own.
    let fields = contract(str::to_string)
        .into_iter()
        .filter(|h| h != "tools" && h != "call_tool")
        .collect::<Vec<_>>();
    let shape = read("host/src/engines/js/shape.js");
    assert_eq!(
        list_after(&shape, "const HOOKS = ", '[', ']'),
        fields,
        "host/src/engines/js/shape.js"
    );
    let declarations = read("sdk-ts/yohost.d.ts");
    for field in &fields {
        assert!(
            declarations.contains(&format!("{field}?: (")),
            "sdk-ts/yohost.d.ts does not declare `{field}`"
        );
    }
    assert!(
        declarations.contains("tools?:"),
        "sdk-ts/yohost.d.ts: tools"
    );
}

#[test]
fn the_rust_sdk_s_plugin_trait_has_a_method_for_every_hook() {
    let sdk = read("sdk-rust/src/lib.rs");
    for hook in contract(str::to_string) {
        assert!(
            sdk.contains(&format!("    fn {hook}(&self")),
            "sdk-rust/src/lib.rs: the Plugin trait has no `{hook}`"
        );
    }
}
