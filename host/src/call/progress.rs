//! A tool call's progress as a plugin reports it (`ctx.progress` in
//! TypeScript, pi's `onUpdate`, `yohost.progress` in Python, an MCP
//! server's `notifications/progress`), passed to the call's listener
//! (yoagent's `ToolContext::on_progress`) within bounds: at most
//! [`MAX_MESSAGES`] messages per call, each cut at [`MAX_MESSAGE_CHARS`]
//! characters. The rest are dropped, so a plugin that floods a call with
//! progress grows no memory of the host's.

use std::sync::atomic::{AtomicU32, Ordering};
use yoagent::ProgressFn;

/// The most progress messages one call's listener gets.
pub const MAX_MESSAGES: u32 = 256;

/// The most characters of one progress message passed on.
pub const MAX_MESSAGE_CHARS: usize = 1024;

/// One call's progress listener, within the bounds.
pub struct ProgressReporter {
    sink: ProgressFn,
    passed: AtomicU32,
}

impl ProgressReporter {
    /// A reporter to `sink`, which has been passed nothing yet.
    pub fn new(sink: ProgressFn) -> Self {
        Self {
            sink,
            passed: AtomicU32::new(0),
        }
    }

    /// Pass `message`, cut at [`MAX_MESSAGE_CHARS`], unless the call has
    /// passed [`MAX_MESSAGES`] already. The listener is called on this
    /// thread: it must not block.
    pub fn report(&self, message: &str) {
        let counted = self
            .passed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |passed| {
                (passed < MAX_MESSAGES).then_some(passed + 1)
            });
        if counted.is_err() {
            return;
        }
        let cut = match message.char_indices().nth(MAX_MESSAGE_CHARS) {
            Some((end, _)) => &message[..end],
            None => message,
        };
        (self.sink)(cut.to_string());
    }

    /// The call has ended: every later message is dropped (for an engine
    /// whose plugin may keep the reporting function past its call).
    pub fn end(&self) {
        self.passed.store(MAX_MESSAGES, Ordering::SeqCst);
    }
}

impl std::fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressReporter")
            .field("passed", &self.passed)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A reporter, and what its listener got.
    fn recording() -> (ProgressReporter, Arc<Mutex<Vec<String>>>) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        let reporter = ProgressReporter::new(Arc::new(move |m| sink.lock().unwrap().push(m)));
        (reporter, got)
    }

    #[test]
    fn a_flood_is_cut_to_the_bounds_in_count_and_in_length() {
        let (reporter, got) = recording();
        reporter.report("short");
        reporter.report(&"é".repeat(MAX_MESSAGE_CHARS + 10));
        for n in 0..10_000 {
            reporter.report(&n.to_string());
        }
        let got = got.lock().unwrap();
        assert_eq!(got.len(), MAX_MESSAGES as usize);
        assert_eq!(got[0], "short");
        assert_eq!(got[1], "é".repeat(MAX_MESSAGE_CHARS));
        assert_eq!(got[2], "0");
    }

    #[test]
    fn an_ended_call_passes_nothing_more() {
        let (reporter, got) = recording();
        reporter.report("during");
        reporter.end();
        reporter.report("after");
        assert_eq!(*got.lock().unwrap(), ["during"]);
    }
}
