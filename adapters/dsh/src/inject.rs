//! The services a DSH plugin declares in `inject`, read from its entry's
//! source before any of its code or imports load, so that a service the
//! host cannot provide is named first.
//!
//! DSH plugins declare `inject` as a literal: `const inject = ["tools",
//! "shell"]` (the published packages' bundles), `export const inject = [...]`,
//! or cordis's object form `inject = { required: [...], optional: [...] }`.
//! Only required names count. A declaration written any other way is left to
//! the shape, which reads the real value once the module has loaded.

use std::io::Read;
use std::path::Path;

/// The most of an entry file that is read.
const MAX_SOURCE: u64 = 8 * 1024 * 1024;

/// The services `entry` requires, as its source declares them (none when
/// it cannot be read or declares none as a literal).
pub(crate) fn declared(entry: &Path) -> Vec<String> {
    let mut source = String::new();
    let read =
        std::fs::File::open(entry).and_then(|f| f.take(MAX_SOURCE).read_to_string(&mut source));
    match read {
        Ok(_) => in_source(&source),
        Err(_) => Vec::new(),
    }
}

/// The required services of the first `inject = [...]` or
/// `inject = { required: [...] }` in `source`.
pub(crate) fn in_source(source: &str) -> Vec<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == '.';
    for (at, _) in source.match_indices("inject") {
        if source[..at].chars().next_back().is_some_and(ident) {
            continue;
        }
        let rest = source[at + "inject".len()..].trim_start();
        let Some(value) = rest.strip_prefix('=').filter(|r| !r.starts_with('=')) else {
            continue;
        };
        let value = value.trim_start();
        if value.starts_with('[') {
            return strings_of_list(value);
        }
        if let Some(object) = value.strip_prefix('{') {
            let object = &object[..object.find('}').unwrap_or(object.len())];
            let Some(at) = object.find("required") else {
                return Vec::new();
            };
            let list = object[at + "required".len()..]
                .trim_start()
                .trim_start_matches([':', '"', '\''])
                .trim_start();
            return strings_of_list(list);
        }
    }
    Vec::new()
}

/// The string literals of the list that `list` starts with (`[...]`).
fn strings_of_list(list: &str) -> Vec<String> {
    let Some(body) = list.strip_prefix('[') else {
        return Vec::new();
    };
    let body = &body[..body.find(']').unwrap_or(body.len())];
    let mut names = Vec::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if matches!(c, '"' | '\'' | '`') {
            let name: String = chars.by_ref().take_while(|&d| d != c).collect();
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::in_source;

    #[test]
    fn the_forms_dsh_plugins_declare_inject_in_are_read() {
        let bundled = "const name = \"tool-bash\";\nconst inject = [\n\t\"tools\",\n\t\"shell\",\n\t\"systemPrompt\",\n\t\"shellEnv\"\n];";
        assert_eq!(
            in_source(bundled),
            ["tools", "shell", "systemPrompt", "shellEnv"]
        );
        assert_eq!(
            in_source("export const inject = ['tools', 'web'];"),
            ["tools", "web"]
        );
        assert_eq!(
            in_source("export const inject = { required: [\"fs\"], optional: [\"llm\"] };"),
            ["fs"]
        );
        // A call of `ctx.inject`, a comparison, or another name is not a
        // declaration.
        assert!(in_source(
            "ctx.inject([\"attachments\"], cb); if (x.inject == [1]) {}; reinject = [\"a\"]"
        )
        .is_empty());
        assert!(in_source("export const inject = services();").is_empty());
    }
}
