//! What a plugin loaded for a check would have done, noted instead of done.

use crate::model::sync::lock;
use std::sync::Arc;

/// What a plugin loaded for a check would have done: the processes it
/// would have started and the files it would have written, as warnings
/// (at most [`DryRun::MAX_NOTES`], then a count).
#[derive(Debug, Clone, Default)]
pub struct DryRun {
    notes: Arc<std::sync::Mutex<(Vec<String>, usize)>>,
}

impl DryRun {
    /// The most notes kept; the rest are counted.
    pub const MAX_NOTES: usize = 20;

    /// Note that the plugin would have done `what`.
    pub fn note(&self, what: String) {
        let mut notes = lock(&self.notes);
        if notes.0.len() < Self::MAX_NOTES {
            notes.0.push(format!("in a check, not done: {what}"));
        } else {
            notes.1 += 1;
        }
    }

    /// The notes so far, and how many more there were; empties the list.
    pub fn take(&self) -> Vec<String> {
        let mut notes = lock(&self.notes);
        let (mut list, more) = std::mem::take(&mut *notes);
        if more > 0 {
            list.push(format!(
                "in a check, not done: {more} more processes, writes or requests"
            ));
        }
        list
    }
}
