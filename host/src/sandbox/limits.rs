//! How many plugin processes may run at once: at most
//! [`PROCESSES_PER_PLUGIN`] of one plugin (its `limits.processes` may set
//! another number) and [`PROCESSES_PER_HOST`] in all. A start past either
//! fails at once, naming the limit, rather than waiting: a plugin that
//! starts processes without bound gets errors, not a queue in front of
//! every other plugin's starts.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The processes one plugin may run at once, unless its manifest says.
pub const PROCESSES_PER_PLUGIN: usize = 32;

/// The plugin processes one host may run at once.
pub const PROCESSES_PER_HOST: usize = 256;

/// The plugin processes running now, in this host process.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// One plugin's count of running processes, shared by its sandbox's clones.
#[derive(Debug, Clone)]
pub(super) struct PluginCount {
    running: Arc<AtomicUsize>,
    limit: usize,
}

impl PluginCount {
    /// A count allowing `limit` processes at once.
    pub(super) fn new(limit: usize) -> PluginCount {
        PluginCount {
            running: Arc::default(),
            limit,
        }
    }

    /// A place for one more process, or an error that names the limit it
    /// would pass.
    pub(super) fn reserve(&self) -> io::Result<ProcessSlot> {
        let plugin = take(&self.running, self.limit);
        let host = plugin.and_then(|()| {
            take(&RUNNING, PROCESSES_PER_HOST).inspect_err(|_| {
                self.running.fetch_sub(1, Ordering::AcqRel);
            })
        });
        match (plugin, host) {
            (Err(()), _) => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!(
                    "the plugin already runs {} processes, its limit (`limits.processes`)",
                    self.limit
                ),
            )),
            (_, Err(())) => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("the host already runs {PROCESSES_PER_HOST} plugin processes, its limit"),
            )),
            _ => Ok(ProcessSlot {
                plugin: self.running.clone(),
            }),
        }
    }
}

/// Count one more in `counter` unless it is at `limit`.
fn take(counter: &AtomicUsize, limit: usize) -> Result<(), ()> {
    counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < limit).then_some(n + 1)
        })
        .map(drop)
        .map_err(drop)
}

/// A place for one plugin process in the limits, given back when dropped
/// (when the process has ended).
#[derive(Debug)]
pub struct ProcessSlot {
    plugin: Arc<AtomicUsize>,
}

impl Drop for ProcessSlot {
    fn drop(&mut self) {
        self.plugin.fetch_sub(1, Ordering::AcqRel);
        RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_past_its_limit_is_refused_until_a_slot_is_given_back() {
        let count = PluginCount::new(2);
        let first = count.reserve().unwrap();
        let _second = count.reserve().unwrap();
        let refused = count.reserve().unwrap_err();
        assert!(refused.to_string().contains("already runs 2"), "{refused}");
        drop(first);
        count.reserve().unwrap();
    }
}
