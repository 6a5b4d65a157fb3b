//! Refusals by design, named even when loading stops earlier.
//!
//! An extension that listens for an event, or calls a method, that would
//! rewrite history or the request is refused naming it (the shape finds
//! these while the factory runs). When an import the host does not provide
//! stops the load before the factory runs, the reason still names them: the
//! extension's own source files are searched for the same events and
//! methods. The table is `js/shape/refused.json`, which the shape reads too.

use std::path::{Path, PathBuf};
use yohost::adapter::Candidate;

/// The table of events and methods refused by design, as JSON:
/// `{"events": {name: why}, "calls": {method: why}}`.
pub const TABLE: &str = include_str!("../js/shape/refused.json");

/// At most this many source files are searched, each up to this size (read
/// as the host reads every plugin file: regular files only, without
/// blocking).
const MAX_FILES: usize = 256;
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// What the extension's source uses that is refused by design, phrased as
/// the shape phrases it (`listens for \`context\`: …`), in the table's order.
pub fn found_in_source(candidate: &Candidate) -> Vec<String> {
    let table: serde_json::Value = serde_json::from_str(TABLE).expect("refused.json is valid JSON");
    let sources: Vec<String> = source_files(candidate)
        .iter()
        .filter_map(|path| yohost::adapter::source::read_text(path, MAX_FILE_BYTES).ok())
        .collect();
    let mentions = |needle: &str| sources.iter().any(|s| s.contains(needle));
    let mut found = Vec::new();
    for (event, why) in table["events"].as_object().into_iter().flatten() {
        let listens = ['"', '\'', '`']
            .iter()
            .any(|q| mentions(&format!("on({q}{event}{q}")));
        if listens {
            found.push(format!(
                "listens for `{event}`: {}, which the host never lets a plugin do",
                why.as_str().unwrap_or_default()
            ));
        }
    }
    for (call, why) in table["calls"].as_object().into_iter().flatten() {
        if mentions(&format!(".{call}(")) {
            found.push(format!(
                "calls `pi.{call}`, which {}",
                why.as_str().unwrap_or_default()
            ));
        }
    }
    found
}

/// The extension's JavaScript and TypeScript files: its entry, and for a
/// folder the files in it (not `node_modules`, not through symlinks).
fn source_files(candidate: &Candidate) -> Vec<PathBuf> {
    let mut files = vec![candidate.entry.clone()];
    if candidate.root.is_dir() {
        walk(&candidate.root, &mut files);
    }
    files.dedup();
    files
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if files.len() >= MAX_FILES {
            return;
        }
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let path = entry.path();
        if meta.is_dir() && entry.file_name() != "node_modules" {
            walk(&path, files);
        } else if meta.is_file()
            && meta.len() <= MAX_FILE_BYTES
            && path
                .extension()
                .is_some_and(|e| ["ts", "mts", "js", "mjs"].iter().any(|x| e == *x))
        {
            files.push(path);
        }
    }
}
