//! The layers of `host/src`, checked from its source: every module imports
//! only modules of its own layer or of the layers below it, and the modules
//! of the library, file by file, import each other in no cycle.
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
//! What counts as an import is every path in a module's code, outside
//! comments and outside its `#[cfg(test)]` module (tests may reach any
//! layer), that starts at `crate::`, `self::`, `super::` (any number of
//! them) or a child module of the file (`glue::load` in `js/mod.rs`), with
//! grouped imports (`use super::{a, b::{c, d}}`) expanded. Each is resolved
//! to the module it names: the longest prefix of the path that is a source
//! file of the library. A path through the crate root's re-exports
//! (`crate::NativePlugin`) is refused in code: it would hide the layer it
//! reaches. A `mod` line declares a child and is no import.
//!
//! The graph whose cycles are refused has one node per source file (a
//! `mod.rs` is its folder's module), so a folder's `mod.rs` and a file in
//! it that import each other are a cycle, as are two files of one folder.
//!
//! The checker itself is tested on small trees written to a temporary
//! folder: a planted `super::` cycle and a planted import of a higher layer
//! are both reported.

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

/// The node a resolved path belongs to: its longest prefix that is the
/// module of a source file (the crate root, `[]`, at least).
fn node_of(modules: &BTreeSet<Vec<String>>, path: &[String]) -> Vec<String> {
    (0..=path.len())
        .rev()
        .map(|len| path[..len].to_vec())
        .find(|prefix| modules.contains(prefix))
        .unwrap_or_default()
}

/// Where the brace opened at `open` closes (the end of `text` if it does
/// not).
fn closing(text: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, ch) in text[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
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
        let end = closing(&out, open);
        out.replace_range(at..end, "");
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn ident_len(s: &str) -> usize {
    s.find(|c: char| !is_ident(c)).unwrap_or(s.len())
}

/// Read one use tree (or one path in an expression) from `s` after
/// `prefix`, adding every path it names to `out`: `a::{b, c::{d, self}}`
/// gives `a::b`, `a::c::d` and `a::c`. Returns what follows it.
fn use_tree<'a>(mut s: &'a str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> &'a str {
    loop {
        if let Some(mut rest) = s.strip_prefix('{') {
            loop {
                rest = rest.trim_start();
                if let Some(after) = rest.strip_prefix('}') {
                    return after;
                }
                if rest.is_empty() {
                    return rest;
                }
                if let Some(after) = rest.strip_prefix(',') {
                    rest = after;
                    continue;
                }
                let before = rest.len();
                rest = use_tree(rest, prefix.clone(), out).trim_start();
                if let Some(alias) = rest.strip_prefix("as ") {
                    let alias = alias.trim_start();
                    rest = &alias[ident_len(alias)..];
                }
                if rest.len() == before {
                    rest = &rest[rest.chars().next().map_or(0, char::len_utf8)..];
                }
            }
        }
        if let Some(rest) = s.strip_prefix('*') {
            out.push(prefix);
            return rest;
        }
        let len = ident_len(s);
        if len == 0 {
            if !prefix.is_empty() {
                out.push(prefix);
            }
            return s;
        }
        let segment = &s[..len];
        s = &s[len..];
        // `{self, …}` names the module of the group itself.
        if segment != "self" || prefix.is_empty() {
            prefix.push(segment.to_string());
        }
        match s.strip_prefix("::") {
            Some(rest) => s = rest,
            None => {
                out.push(prefix);
                return s;
            }
        }
    }
}

/// The inline modules of `code` (`mod cpu { … }`): the span of each and
/// its name.
fn inline_modules(code: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("mod ").map(|a| from + a) {
        from = at + "mod ".len();
        if code[..at].chars().last().is_some_and(is_ident) {
            continue;
        }
        let rest = &code[from..];
        let name = &rest[..ident_len(rest)];
        if !name.is_empty() && rest[name.len()..].trim_start().starts_with('{') {
            let open = from + rest.find('{').unwrap();
            found.push((at..closing(code, open), name.to_string()));
        }
    }
    found
}

/// Every path in `code`, a module of `module`, that names a module of the
/// library: those that start at `crate::`, `self::` or `super::`, and those
/// that start at a child module of `module` (one of `modules`). Each is
/// the path as written and the path it resolves to (`None` when its
/// `super::`s go above the crate root).
fn paths_in(
    code: &str,
    module: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Vec<(Vec<String>, Option<Vec<String>>)> {
    let inline = inline_modules(code);
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let len = ident_len(rest);
        if len == 0 {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let before = code[..at].chars().last();
        let word = &rest[..len];
        let starts_path = rest[len..].starts_with("::")
            && !before.is_some_and(|c| is_ident(c) || c == ':' || c == '$');
        if !starts_path {
            at += len;
            continue;
        }
        // The module this occurrence is in: the file's, and the inline
        // modules around it.
        let mut here = module.to_vec();
        here.extend(
            inline
                .iter()
                .filter(|(span, _)| span.contains(&at))
                .map(|(_, name)| name.clone()),
        );
        let mut child = here.clone();
        child.push(word.to_string());
        if matches!(word, "crate" | "self" | "super") || modules.contains(&child) {
            let mut paths = Vec::new();
            let after = use_tree(rest, Vec::new(), &mut paths);
            at = code.len() - after.len();
            for written in paths {
                let resolved = resolve(&here, &written);
                found.push((written, resolved));
            }
        } else {
            at += len;
        }
    }
    found
}

/// The absolute module path `written` names from `module`, or `None` when
/// its `super::`s go above the crate root.
fn resolve(module: &[String], written: &[String]) -> Option<Vec<String>> {
    let mut path = match written.first().map(String::as_str) {
        Some("crate") => return Some(written[1..].to_vec()),
        Some("self") => return Some([module, &written[1..]].concat()),
        Some("super") => {
            let ups = written.iter().take_while(|s| *s == "super").count();
            module.get(..module.len().checked_sub(ups)?)?.to_vec()
        }
        _ => return Some([module, written].concat()),
    };
    path.extend(written.iter().skip_while(|s| *s == "super").cloned());
    Some(path)
}

/// What is wrong with the layering of the library whose sources are in
/// `src`: each import of a higher layer, of a module of no layer or
/// through the crate root, and each import cycle between its files.
fn findings(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut bad: Vec<String> = Vec::new();
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(src, file);
        let shown = file.strip_prefix(src).unwrap().display().to_string();
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
        let text = std::fs::read_to_string(file).unwrap();
        for (written, path) in paths_in(&code(&text), &module, &modules) {
            let written = written.join("::");
            let Some(path) = path else {
                bad.push(format!("{shown}: `{written}` goes above the crate root"));
                continue;
            };
            let Some(target) = path.first() else {
                bad.push(format!("{shown}: `{written}` names the crate root"));
                continue;
            };
            if target.starts_with(char::is_uppercase) {
                bad.push(format!(
                    "{shown}: `{written}` reaches an item through the crate root; name the module that defines it"
                ));
                continue;
            }
            let Some(to_rank) = rank(target) else {
                bad.push(format!("{shown}: `{written}` is a module of no layer"));
                continue;
            };
            if to_rank > from_rank {
                bad.push(format!(
                    "{shown}: imports `{written}`, of the higher layer `{target}` (`{top}` may import only {})",
                    LAYERS[..=from_rank].join(", ")
                ));
            }
            let to = node_of(&modules, &path);
            if to != module {
                graph
                    .entry(module.join("::"))
                    .or_default()
                    .entry(to.join("::"))
                    .or_insert_with(|| format!("{shown}: {written}"));
            }
        }
    }
    for cycle in cycles(graph) {
        bad.push(format!("an import cycle: {}", cycle.join(" -> ")));
    }
    bad
}

/// Cycles in `graph`, each as its edges (each naming the file and the
/// import), until every cycle has lost an edge: one cycle found, its first
/// edge taken out, the next looked for.
fn cycles(mut graph: BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    while let Some(cycle) = find_cycle(&graph) {
        let (from, to, _) = &cycle[0];
        graph.get_mut(from).unwrap().remove(to);
        found.push(cycle.into_iter().map(|(_, _, edge)| edge).collect());
    }
    found
}

/// A cycle in `graph`, as its edges: from, to, and the import.
fn find_cycle(
    graph: &BTreeMap<String, BTreeMap<String, String>>,
) -> Option<Vec<(String, String, String)>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<(String, String, String)>,
    ) -> Option<Vec<(String, String, String)>> {
        if done.contains(node) {
            return None;
        }
        if let Some(at) = stack.iter().position(|(n, _, _)| n == node) {
            return Some(stack[at..].to_vec());
        }
        for (to, edge) in graph.get(node).into_iter().flatten() {
            stack.push((node.to_string(), to.clone(), edge.clone()));
            if let Some(cycle) = visit(to, graph, done, stack) {
                return Some(cycle);
            }
            stack.pop();
        }
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn every_module_imports_only_its_layer_and_those_below_in_no_cycle() {
    let bad = findings(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

/// A library of `files` (path, text) in a temporary folder.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn the_layer_test_fails_on_a_planted_super_cycle() {
    let dir = tree(&[
        ("lib.rs", "pub mod load;\n"),
        ("load/mod.rs", "pub mod a;\npub mod b;\n"),
        ("load/a.rs", "use super::b::B;\npub struct A;\n"),
        ("load/b.rs", "pub struct B;\nfn f() { super::a::A; }\n"),
    ]);
    assert_eq!(
        findings(dir.path()),
        ["an import cycle: load/a.rs: super::b::B -> load/b.rs: super::a::A"]
    );
}

#[test]
fn the_layer_test_fails_on_a_folder_module_and_its_child_importing_each_other() {
    let dir = tree(&[
        ("load/mod.rs", "mod a;\nuse a::A;\npub struct Shared;\n"),
        ("load/a.rs", "use super::Shared;\npub struct A;\n"),
    ]);
    assert_eq!(
        findings(dir.path()),
        ["an import cycle: load/mod.rs: a::A -> load/a.rs: super::Shared"]
    );
}

#[test]
fn the_layer_test_fails_on_a_planted_import_of_a_higher_layer() {
    let dir = tree(&[
        ("model/mod.rs", "use crate::load::a::A;\n"),
        ("load/a.rs", "pub struct A;\n"),
    ]);
    assert_eq!(
        findings(dir.path()),
        ["model/mod.rs: imports `crate::load::a::A`, of the higher layer `load` (`model` may import only model)"]
    );
}

#[test]
fn the_layer_test_fails_on_a_super_above_the_crate_root() {
    let dir = tree(&[("model/mod.rs", "use super::super::x;\n")]);
    assert_eq!(
        findings(dir.path()),
        ["model/mod.rs: `super::super::x` goes above the crate root"]
    );
}

#[test]
fn the_layer_test_resolves_nested_groups_self_and_super_super() {
    let dir = tree(&[
        (
            "engines/js/runtime/calls.rs",
            "use super::super::{glue, modules::{Set, self}};\nuse self::inner::X;\n",
        ),
        ("engines/js/glue.rs", ""),
        (
            "engines/js/modules.rs",
            "fn f() { crate::engines::js::runtime::calls::inner::X; }\n",
        ),
        (
            "run/mod.rs",
            "use crate::{engines::js::{glue::G as H}, host::P};\n",
        ),
        ("host/mod.rs", "pub struct P;\n"),
    ]);
    let found = findings(dir.path());
    assert_eq!(
        found,
        [
            "run/mod.rs: imports `crate::host::P`, of the higher layer `host` (`run` may import only model, call, load, sandbox, engines, run)",
            "an import cycle: engines/js/modules.rs: crate::engines::js::runtime::calls::inner::X -> engines/js/runtime/calls.rs: super::super::modules::Set",
        ]
    );
}

#[test]
fn the_check_reads_grouped_imports_and_skips_comments_and_tests() {
    let text = "use crate::load::{private_dir, source::read_text as rt};\n\
                // crate::host::x\n\
                let u = \"https://example\"; crate::model::EngineKind::JS;\n\
                #[cfg(test)]\nmod tests {\n    use crate::host::y;\n    fn f() { {} }\n}\n\
                fn after() { crate::call::plugin::Plugin; }\n\
                #[cfg(unix)]\nmod cpu {\n    use super::super::handoff::Pace;\n}\n";
    let modules = BTreeSet::from([vec!["call".to_string(), "handoff".to_string()]]);
    let module = ["call".to_string(), "worker".to_string()];
    let paths: Vec<String> = paths_in(&code(text), &module, &modules)
        .into_iter()
        .map(|(written, resolved)| {
            format!("{} = {}", written.join("::"), resolved.unwrap().join("::"))
        })
        .collect();
    assert_eq!(
        paths,
        [
            "crate::load::private_dir = load::private_dir",
            "crate::load::source::read_text = load::source::read_text",
            "crate::model::EngineKind::JS = model::EngineKind::JS",
            "crate::call::plugin::Plugin = call::plugin::Plugin",
            "super::super::handoff::Pace = call::handoff::Pace",
        ]
    );
}
