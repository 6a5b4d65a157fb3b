//! The TypeScript the bootstrap asks the host for: only the plugin's own,
//! stripped of its types by the host's one transpiler, with the positions
//! of each file kept so that an error names a line of the source.

use crate::engines::js::positions::{self, LineMap};
use crate::engines::js::transpile::transpile;
use crate::load::source::read_text;
use crate::model::limits::MAX_SOURCE_BYTES;
use crate::model::sync::lock;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A plugin's TypeScript, as its process asks for it.
pub(super) struct Sources {
    /// The plugin's own paths: with the entry, where its TypeScript is.
    own: Vec<PathBuf>,
    entry: PathBuf,
    /// Where the positions of each file stripped are in its source, by the
    /// path Node names the module by.
    positions: Mutex<BTreeMap<String, LineMap>>,
}

impl Sources {
    /// The sources of the plugin at `entry` whose own paths are `own`.
    pub(super) fn new(entry: PathBuf, own: Vec<PathBuf>) -> Self {
        Self {
            own,
            entry,
            positions: Mutex::default(),
        }
    }

    /// The JavaScript of TypeScript file `path`, which must be the entry or
    /// inside the plugin's own paths (a single file's neighbours are other
    /// plugins).
    pub(super) fn strip(&self, path: &Path) -> Result<String, String> {
        let real = path
            .canonicalize()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if real != self.entry && !self.own.iter().any(|o| real.starts_with(o)) {
            return Err(format!(
                "{}: outside the plugin's own files; only its own TypeScript is compiled",
                path.display()
            ));
        }
        let source =
            read_text(&real, MAX_SOURCE_BYTES).map_err(|e| format!("{}: {e}", path.display()))?;
        let transpiled = transpile(&real, &source).map_err(|e| e.message)?;
        if let Some(lines) = transpiled.lines {
            lock(&self.positions).insert(real.display().to_string(), lines);
        }
        Ok(transpiled.code)
    }

    /// `text` with the positions in stripped TypeScript put back where
    /// they are in its source (see [`positions::in_source`]).
    pub(super) fn in_source(&self, text: &str) -> String {
        positions::in_source(&lock(&self.positions), text)
    }
}
