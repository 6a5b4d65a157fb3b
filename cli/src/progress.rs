//! Showing that a long step is under way: loading a plugin directory
//! (a first Wasm compile, an MCP server that takes its load timeout),
//! checking it against `yohost.lock`, hashing plugins for the lock, and
//! placing a plugin that `add` installed.
//!
//! A [`Step`] is a spinner on standard error with a message naming the
//! step and the time since it began (`⠂ loading plugins from plugins
//! (3s)`). It starts hidden and is drawn only once the step has taken
//! [`SHOW_AFTER`], so a fast step prints nothing, and it is cleared when
//! the step ends, so the command's output is what it would be without it.
//! It is drawn only when standard error is a terminal (and `TERM` is not
//! `dumb`): never into a pipe, a file or CI's log, and never on standard
//! output, which stays the command's own (`--json` included).
//!
//! What the command prints on the terminal while a step runs (a plugin's
//! log line as it loads, a host warning, an MCP server's authorization
//! URL) goes through [`suspend`], which takes the spinner off the screen
//! for the line and draws it again below. Steps do not nest: one runs at
//! a time.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a step runs before its spinner is drawn.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// How often a shown spinner turns and its time is redrawn.
const TICK: Duration = Duration::from_millis(120);

/// The spinner of the step under way, if one is.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// A long step under way: its spinner (drawn after [`SHOW_AFTER`], on a
/// terminal only) lasts until the step is dropped, which clears it.
pub struct Step {
    /// The spinner and what draws it once the step has run
    /// [`SHOW_AFTER`]; `None` off a terminal.
    shown: Option<Shown>,
}

/// A step's spinner, and the thread that draws it after [`SHOW_AFTER`]
/// unless the step ends first.
struct Shown {
    /// The spinner, hidden until the thread draws it.
    bar: ProgressBar,
    /// Dropping it tells the thread that the step ended.
    ended: mpsc::Sender<()>,
    /// The thread that draws the spinner once [`SHOW_AFTER`] has passed.
    reveal: JoinHandle<()>,
}

impl Step {
    /// Begin the step that `message` names (`loading plugins from DIR`);
    /// text from outside (a path, a plugin's name) must come escaped
    /// ([`crate::output::escaped`]).
    pub fn start(message: impl Into<Cow<'static, str>>) -> Step {
        let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
        if !std::io::stderr().is_terminal() || dumb {
            return Step { shown: None };
        }
        let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .expect("the template is valid");
        let bar = ProgressBar::hidden()
            .with_style(style)
            .with_message(message);
        let (ended, wait) = mpsc::channel::<()>();
        let revealed = bar.clone();
        let reveal = std::thread::spawn(move || {
            if wait.recv_timeout(SHOW_AFTER) == Err(RecvTimeoutError::Timeout) {
                revealed.set_draw_target(ProgressDrawTarget::stderr());
                revealed.enable_steady_tick(TICK);
            }
        });
        *active() = Some(bar.clone());
        Step {
            shown: Some(Shown { bar, ended, reveal }),
        }
    }

    /// Name what the step does now (`hashing NAME for yohost.lock`).
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        if let Some(shown) = &self.shown {
            shown.bar.set_message(message);
        }
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        let Some(Shown { bar, ended, reveal }) = self.shown.take() else {
            return;
        };
        active().take();
        drop(ended);
        // Once it is joined, nothing draws the spinner again.
        let _ = reveal.join();
        bar.finish_and_clear();
    }
}

/// The slot of the step under way, whatever a panic left in it.
fn active() -> std::sync::MutexGuard<'static, Option<ProgressBar>> {
    ACTIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `print` (which writes to the terminal) with the spinner of the step
/// under way, if one is shown, off the screen; it is drawn again after.
pub fn suspend<R>(print: impl FnOnce() -> R) -> R {
    let bar = active().clone();
    match bar {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// Standard error for the host's log lines: each line is written through
/// [`suspend`], so a spinner never cuts into it.
pub struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        suspend(|| std::io::stderr().write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        suspend(|| std::io::stderr().write_all(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
