//! The python engine (not built yet).

use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::plugin::Loaded;

/// Load a python plugin.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    Err(LoadError::Invalid {
        path: candidate.entry.clone(),
        message: "the python engine is not implemented yet".into(),
    })
}
