//! A plugin process's standard error (the Node engine's `node`, an MCP
//! server's), read into bounded log lines: each line cut at the log limit,
//! and at most so many lines and bytes a second, with a count of what was
//! dropped.

use std::time::{Duration, Instant};

/// The most lines of a plugin process's standard error logged in a second.
pub const STDERR_LINES_PER_SECOND: u64 = 100;

/// The most bytes of a plugin process's standard error logged in a second.
pub const STDERR_BYTES_PER_SECOND: u64 = 64 * 1024;

/// What [`read_stderr`] hands on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stderr<'a> {
    /// A line, cut at [`crate::model::limits::MAX_LOG_BYTES`].
    Line(&'a str),
    /// This many lines were dropped (over the bound of a second).
    Dropped(u64),
}

/// Read `input` to its end, handing on its lines, each cut at
/// [`crate::model::limits::MAX_LOG_BYTES`], and at most
/// [`STDERR_LINES_PER_SECOND`] lines and [`STDERR_BYTES_PER_SECOND`] bytes
/// in a second (by `now`); a count of the lines dropped is handed on when
/// the next second begins and at the end. It reads by bytes into a buffer
/// of one log line: a stream without a newline costs no more than that.
pub fn read_stderr(
    mut input: impl std::io::Read,
    now: impl Fn() -> Instant,
    mut out: impl FnMut(Stderr<'_>),
) {
    use crate::model::limits::{cut_log_message, MAX_LOG_BYTES};
    let mut chunk = vec![0u8; 8 * 1024];
    // The line being read, up to MAX_LOG_BYTES; `cut`: its rest is skipped.
    let mut line: Vec<u8> = Vec::with_capacity(1024);
    let mut cut = false;
    let mut window = (now(), 0u64, 0u64);
    let mut dropped = 0u64;
    let mut finish = |line: &mut Vec<u8>, out: &mut dyn FnMut(Stderr<'_>)| {
        let at = now();
        if at.duration_since(window.0) >= Duration::from_secs(1) {
            window = (at, 0, 0);
            if dropped > 0 {
                out(Stderr::Dropped(std::mem::take(&mut dropped)));
            }
        }
        let bytes = line.len() as u64;
        if window.1 < STDERR_LINES_PER_SECOND && window.2 + bytes <= STDERR_BYTES_PER_SECOND {
            window.1 += 1;
            window.2 += bytes;
            let text = String::from_utf8_lossy(line);
            out(Stderr::Line(cut_log_message(text.trim_end_matches('\r'))));
        } else {
            dropped += 1;
        }
        line.clear();
    };
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for piece in chunk[..n].split_inclusive(|b| *b == b'\n') {
            let (text, ends) = match piece.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (piece, false),
            };
            if !cut {
                let room = MAX_LOG_BYTES - line.len();
                line.extend_from_slice(&text[..text.len().min(room)]);
                if line.len() == MAX_LOG_BYTES && !ends {
                    // Hand the line on now; skip the rest of it.
                    finish(&mut line, &mut out);
                    cut = true;
                }
            }
            if ends {
                if cut {
                    cut = false;
                } else {
                    finish(&mut line, &mut out);
                }
            }
        }
    }
    if !line.is_empty() && !cut {
        finish(&mut line, &mut out);
    }
    if dropped > 0 {
        out(Stderr::Dropped(dropped));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::limits::MAX_LOG_BYTES;

    /// `left` bytes of `byte`, made as they are read.
    struct Endless {
        left: u64,
        byte: u8,
    }

    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf
                .len()
                .min(usize::try_from(self.left).unwrap_or(usize::MAX));
            buf[..n].fill(self.byte);
            self.left -= n as u64;
            Ok(n)
        }
    }

    fn lines_of(input: impl std::io::Read, now: impl Fn() -> Instant) -> Vec<String> {
        let mut seen = Vec::new();
        read_stderr(input, now, |line| {
            seen.push(match line {
                Stderr::Line(text) => text.to_string(),
                Stderr::Dropped(n) => format!("dropped {n}"),
            })
        });
        seen
    }

    #[test]
    fn stderr_without_a_newline_is_one_line_cut_at_the_log_limit() {
        // 256 MiB and no newline: read by bytes, never held whole.
        let seen = lines_of(
            Endless {
                left: 256 << 20,
                byte: b'x',
            },
            Instant::now,
        );
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0], "x".repeat(MAX_LOG_BYTES));
        // A long line is cut, and the next line is read whole.
        let long = format!("{}\nnext\n", "y".repeat(3 * MAX_LOG_BYTES));
        let seen = lines_of(long.as_bytes(), Instant::now);
        assert_eq!(seen, ["y".repeat(MAX_LOG_BYTES), "next".to_string()]);
    }

    #[test]
    fn stderr_is_bounded_a_second_and_the_drop_counted() {
        let start = Instant::now();
        let lines = "a\n".repeat(1000);
        let seen = lines_of(lines.as_bytes(), || start);
        assert_eq!(seen.len(), STDERR_LINES_PER_SECOND as usize + 1);
        assert_eq!(seen.last().unwrap(), "dropped 900");
        // A second later the bound starts again.
        let tick = std::cell::Cell::new(start);
        let seen = lines_of(lines.as_bytes(), || {
            tick.set(tick.get() + Duration::from_millis(20));
            tick.get()
        });
        assert!(seen.iter().filter(|l| *l == "a").count() > 900, "{seen:?}");
        // Bytes are bounded too: 64 KiB a second is eight full lines.
        let big = format!("{}\n", "z".repeat(MAX_LOG_BYTES)).repeat(20);
        let seen = lines_of(big.as_bytes(), || start);
        let kept = (STDERR_BYTES_PER_SECOND as usize) / MAX_LOG_BYTES;
        assert_eq!(seen.len(), kept + 1, "{:?}", seen.last());
        assert_eq!(seen.last().unwrap(), &format!("dropped {}", 20 - kept));
    }
}
