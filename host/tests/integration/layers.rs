//! The layers of `host/src`, checked from its source: every module imports
//! only modules of its own layer or of the layers below it, and the modules
//! of the library import each other in no cycle.
//!
//! The layers, lowest first (each a top-level module of the library):
//!
//! | rank | module | holds |
//! | --- | --- | --- |
//! | 0 | `model` | engine kinds, modes, ecosystems, confinement, limits |
//! | 1 | `call` | the plugin and run traits, call errors, codecs, hand-off, workers, unloads, arguments, logging, stats |
//! | 2 | `load` | sources, private copies, manifest, discovery, grants, routing, loaded plugins, the adapter registry, the registry of loaded plugins |
//! | 3 | `sandbox` | the kernel ruleset and process-group life of plugin processes |
//! | 4 | `engines` | dylib, wasm, js, node, python, native: registered through the adapter seam |
//! | 5 | `run` | invoke, session, runset, tools, terminate, convert, the yoagent extensions |
//! | 6 | `host` | `PluginHost`, the report |
//!
//! What counts as an import is every `crate::…` path in a module's code,
//! outside comments and outside its `#[cfg(test)]` module (tests may reach
//! any layer). A path through the crate root's re-exports (`crate::NativePlugin`)
//! is refused in code: it would hide the layer it reaches.
//!
//! The graph whose cycles are refused has one node per module at the second
//! level (`load::adapter`, `engines::js`, `model`), so a cycle between two
//! files of one layer is caught too.
//!
//! This check fails on the tree before the layers (commit 493d63b), where 29
//! modules sat flat in `host/src`: `routing.rs` is a module of no layer, and
//! `manifest` → `error` (`crate::error::LoadError`) → `manifest`
//! (`crate::manifest::ManifestError`) is a cycle. Had `routing.rs` been in
//! `load/`, its `crate::engines::node::node()` would have been named as an
//! import of a higher layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LAYERS: &[&str] = &["model", "call", "load", "sandbox", "engines", "run", "host"];

fn rank(top: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == top)
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file, relative to `src` (`load/adapter.rs`
/// is `["load", "adapter"]`; `engines/js/mod.rs` is `["engines", "js"]`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The node of the module graph a module path belongs to: its first two
/// segments, where the second names a module (a file or a folder).
fn node_of(src: &Path, path: &[String]) -> String {
    match path {
        [] => String::new(),
        [top] => top.clone(),
        [top, second, ..] => {
            let dir = src.join(top);
            if dir.join(format!("{second}.rs")).is_file() || dir.join(second).is_dir() {
                format!("{top}::{second}")
            } else {
                top.clone()
            }
        }
    }
}

/// The code of a source file: comments removed, and its `#[cfg(test)]`
/// module (with everything in its braces) cut out.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = match line.find("//") {
            // A `//` inside a string (a URL) keeps the line.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    while let Some(at) = out.find("#[cfg(test)]\nmod ") {
        let Some(open) = out[at..].find('{').map(|o| at + o) else {
            break;
        };
        let mut depth = 0;
        let mut end = out.len();
        for (i, ch) in out[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(at..end, "");
    }
    out
}

/// Every `crate::…` path in `code`, with a grouped `use crate::a::{b, c::d}`
/// expanded to `a::b` and `a::c::d`.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `yohost_contract::`, `$crate::`
        }
        let mut prefix = Vec::new();
        let mut s = rest;
        loop {
            let len = s
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(s.len());
            if len == 0 {
                break;
            }
            prefix.push(s[..len].to_string());
            s = &s[len..];
            if let Some(next) = s.strip_prefix("::") {
                s = next;
            } else {
                break;
            }
        }
        if s.starts_with('{') {
            let inner = &s[1..s.find('}').unwrap_or(s.len())];
            for item in inner.split(',') {
                let item = item.split(" as ").next().unwrap().trim();
                if item.is_empty() {
                    continue;
                }
                let mut path = prefix.clone();
                path.extend(item.split("::").map(|p| p.trim().to_string()));
                paths.push(path);
            }
        } else if !prefix.is_empty() {
            paths.push(prefix);
        }
    }
    paths
}

#[test]
fn every_module_imports_only_its_layer_and_those_below_in_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut bad: Vec<String> = Vec::new();
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let shown = file.strip_prefix(&src).unwrap().display().to_string();
        let Some(top) = module.first() else {
            continue; // lib.rs: mod lines and re-exports
        };
        let Some(from_rank) = rank(top) else {
            bad.push(format!(
                "{shown}: module `{top}` is in no layer (the layers: {})",
                LAYERS.join(" < ")
            ));
            continue;
        };
        let from = node_of(&src, &module);
        let text = std::fs::read_to_string(file).unwrap();
        for path in crate_paths(&code(&text)) {
            let target = &path[0];
            if target.starts_with(char::is_uppercase) {
                bad.push(format!(
                    "{shown}: `crate::{}` reaches an item through the crate root; name the module that defines it",
                    path.join("::")
                ));
                continue;
            }
            let Some(to_rank) = rank(target) else {
                bad.push(format!(
                    "{shown}: `crate::{}` is a module of no layer",
                    path.join("::")
                ));
                continue;
            };
            if to_rank > from_rank {
                bad.push(format!(
                    "{shown}: imports `crate::{}`, of the higher layer `{target}` (`{top}` may import only {})",
                    path.join("::"),
                    LAYERS[..=from_rank].join(", ")
                ));
            }
            let to = node_of(&src, &path);
            if to != from && !from.starts_with(&format!("{to}::")) {
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| format!("{shown}: crate::{}", path.join("::")));
            }
        }
    }
    if let Some(cycle) = find_cycle(&graph) {
        bad.push(format!("an import cycle: {}", cycle.join(" -> ")));
    }
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

/// A cycle in `graph`, as its edges (each naming the file and the import).
fn find_cycle(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<(String, String)>,
    ) -> Option<Vec<String>> {
        if done.contains(node) {
            return None;
        }
        if let Some(at) = stack.iter().position(|(n, _)| n == node) {
            return Some(stack[at..].iter().map(|(_, edge)| edge.clone()).collect());
        }
        for (to, edge) in graph.get(node).into_iter().flatten() {
            stack.push((node.to_string(), edge.clone()));
            if let Some(cycle) = visit(to, graph, done, stack) {
                return Some(cycle);
            }
            stack.pop();
        }
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut done, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn the_check_reads_grouped_imports_and_skips_comments_and_tests() {
    let text = "use crate::load::{private_dir, source::read_text as rt};\n\
                // crate::host::x\n\
                let u = \"https://example\"; crate::model::EngineKind::JS;\n\
                #[cfg(test)]\nmod tests {\n    use crate::host::y;\n    fn f() { {} }\n}\n\
                fn after() { crate::call::plugin::Plugin; }\n";
    let paths: Vec<String> = crate_paths(&code(text))
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "load::private_dir",
            "load::source::read_text",
            "model::EngineKind::JS",
            "call::plugin::Plugin"
        ]
    );
}
