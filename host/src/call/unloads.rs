//! Plugin unloads that finish off the thread that dropped the plugin.
//!
//! Dropping the last handle on a JS plugin starts its unload (pi's
//! `session_shutdown`, with the processes it awaits) on the plugin's own
//! engine thread, and returns at once: the drop may happen on a tokio
//! worker (a run releasing its snapshot, a rescan replacing a changed
//! plugin), which must not stall for the seconds an unload may take. Each
//! unload under way is noted here, with the moment it is given up;
//! dropping a [`PluginHost`](crate::PluginHost) waits for every one of them
//! ([`wait_for_unloads`]), so a program that drops its host before it ends
//! (`yohost run`) lets them finish.

use crate::model::sync::lock;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// One unload: over when its engine thread has ended.
#[derive(Default)]
pub(crate) struct Unload {
    over: Mutex<bool>,
    ended: Condvar,
}

impl Unload {
    /// A new unload, and what its engine thread holds until it ends.
    #[cfg(feature = "js")]
    pub(crate) fn start() -> (Arc<Unload>, Ending) {
        let unload = Arc::new(Unload::default());
        (Arc::clone(&unload), Ending(unload))
    }

    fn over(&self) -> MutexGuard<'_, bool> {
        lock(&self.over)
    }

    /// Wait until it is over or `deadline` passed.
    fn wait_until(&self, deadline: Instant) {
        let mut over = self.over();
        while !*over {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            over = self
                .ended
                .wait_timeout(over, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Held by an engine thread: the unload is over when it is dropped, that
/// is when the thread ends, however it ends.
#[cfg(feature = "js")]
pub(crate) struct Ending(Arc<Unload>);

#[cfg(feature = "js")]
impl Drop for Ending {
    fn drop(&mut self) {
        *self.0.over() = true;
        self.0.ended.notify_all();
    }
}

/// The unloads under way, each with the moment it is given up.
static UNDER_WAY: Mutex<Vec<(Arc<Unload>, Instant)>> = Mutex::new(Vec::new());

fn under_way() -> MutexGuard<'static, Vec<(Arc<Unload>, Instant)>> {
    lock(&UNDER_WAY)
}

/// Forget the unloads that are over or given up.
fn prune(list: &mut Vec<(Arc<Unload>, Instant)>) {
    let now = Instant::now();
    list.retain(|(unload, deadline)| !*unload.over() && *deadline > now);
}

/// Note that `unload` started; it is given up at `deadline`. Never blocks
/// for longer than a lock.
#[cfg(feature = "js")]
pub(crate) fn started(unload: Arc<Unload>, deadline: Instant) {
    let mut list = under_way();
    prune(&mut list);
    list.push((unload, deadline));
}

/// Wait until every unload noted so far is over or given up: bounded by the
/// latest of their deadlines.
pub(crate) fn wait_for_unloads() {
    let noted = under_way().clone();
    for (unload, deadline) in noted {
        unload.wait_until(deadline);
    }
    prune(&mut under_way());
}

#[cfg(all(test, feature = "js"))]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn waiting_ends_when_every_unload_ended_or_was_given_up() {
        let (done, ending) = Unload::start();
        let (stuck, _never) = Unload::start();
        started(Arc::clone(&done), Instant::now() + Duration::from_secs(60));
        started(
            Arc::clone(&stuck),
            Instant::now() + Duration::from_millis(200),
        );
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(ending);
        });
        let began = Instant::now();
        wait_for_unloads();
        let waited = began.elapsed();
        assert!(*done.over(), "the ended unload was waited for");
        assert!(
            waited >= Duration::from_millis(190) && waited < Duration::from_secs(30),
            "the stuck one was given up at its deadline: {waited:?}"
        );
        thread.join().unwrap();
    }
}
