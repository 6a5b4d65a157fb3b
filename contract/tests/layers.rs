//! The contract's modules depend one way: each uses only modules of a lower
//! layer, so no import cycle can form. Read from the sources' `crate::`
//! paths, outside comments.

use std::path::Path;

/// Every module of the crate, by layer, lowest first.
const LAYERS: &[&[&str]] = &[
    &["hook", "content", "version", "abi"],
    &["arguments"],
    &["reply"],
    &["call"],
    &["kind"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The modules a source file names by `crate::module` or `super::module`
/// (every module is the root's child), grouped (`crate::{a, b::C}`) or not,
/// outside comments.
fn uses(source: &str) -> Vec<String> {
    let mut used = Vec::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        for prefix in ["crate::", "super::"] {
            for (at, _) in code.match_indices(prefix) {
                let rest = &code[at + prefix.len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => top_level(group),
                    None => vec![rest],
                };
                for name in names {
                    let name: String = name
                        .trim_start()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if layer(&name).is_some() {
                        used.push(name);
                    }
                }
            }
        }
    }
    used
}

/// The items of a `{…}` group (the text after its `{`), at its top level.
fn top_level(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        if module == "lib" {
            continue;
        }
        let own = layer(&module)
            .unwrap_or_else(|| panic!("src/{module}.rs is in no layer: add it to LAYERS"));
        let source = std::fs::read_to_string(&path).unwrap();
        for used in uses(&source) {
            let theirs = layer(&used).unwrap();
            assert!(
                used == module || theirs < own,
                "src/{module}.rs uses crate::{used}, which is not in a lower layer"
            );
        }
        seen.push(module);
    }
    for module in LAYERS.iter().flat_map(|layer| layer.iter()) {
        assert!(seen.iter().any(|m| m == module), "no src/{module}.rs");
    }
}

#[test]
fn uses_are_read_from_paths_and_groups_but_not_comments() {
    assert_eq!(
        uses("use crate::reply::X; // crate::kind\n/// [`a`](crate::call::A)"),
        ["reply"]
    );
    assert_eq!(
        uses("use crate::{call::{HookCall, X}, hook::Hook};\nlet _ = super::kind::Tools;"),
        ["call", "hook", "kind"]
    );
    assert!(uses("use super::*;\nuse crate::Hook;").is_empty());
}
