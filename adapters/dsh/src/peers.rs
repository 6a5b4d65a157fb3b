//! Install trouble, explained: DSH's packages name each other as peer
//! dependencies, which npm installs only when they resolve together. An
//! install with `--legacy-peer-deps` (what npm suggests when they conflict,
//! as the 0.0.1-rc.1 packages' do) leaves them all out, and the plugin then
//! fails on the first import of one. The refusal says which peers are
//! missing and what to run.

use std::path::Path;
use yohost::LoadError;

/// The most of a `package.json` that is read.
const MAX_MANIFEST: u64 = 1024 * 1024;

/// `error`, with the plugin package's missing peer dependencies and what to
/// run added, when it has any (else `error` as it is).
pub(crate) fn explained(folder: &Path, error: LoadError) -> LoadError {
    let (path, message) = match error {
        LoadError::Refused { path, message } | LoadError::Invalid { path, message } => {
            (path, message)
        }
        other => return other,
    };
    match missing(folder) {
        Some(advice) => LoadError::Refused {
            path,
            message: format!("{message}. {advice}"),
        },
        None => LoadError::Refused { path, message },
    }
}

/// What to say about the package in `folder` whose peers are not all
/// installed in its `node_modules`, or `None`.
fn missing(folder: &Path) -> Option<String> {
    let manifest = read_json(&folder.join("package.json"))?;
    let name = manifest.get("name")?.as_str()?;
    let version = manifest
        .get("version")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let peers = manifest.get("peerDependencies")?.as_object()?;
    let absent: Vec<String> = peers
        .iter()
        .filter(|(peer, _)| {
            !folder
                .join("node_modules")
                .join(peer.as_str())
                .join("package.json")
                .is_file()
        })
        .map(|(peer, range)| format!("`{peer}@{}`", range.as_str().unwrap_or("*")))
        .collect();
    if absent.is_empty() {
        return None;
    }
    Some(format!(
        "`{name}` {version} names peer dependencies that are not installed in {folder}: {}. \
         npm installs peers only without `--legacy-peer-deps` and `--force`: run \
         `npm install --omit=dev` there. If npm reports a peer conflict (a `could not resolve` \
         error), these versions' peers were not published to resolve together, and no install \
         of {version} will load: install the release the adapter follows instead \
         (`npm pack {name}@{dsh}`, unpacked into the folder, then `npm install --omit=dev`)",
        absent.join(", "),
        folder = folder.display(),
        dsh = crate::DSH_VERSION,
    ))
}

/// A small JSON file, parsed; `None` when it cannot be.
fn read_json(file: &Path) -> Option<serde_json::Value> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(MAX_MANIFEST)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str(&text).ok()
}
