//! Telling a rutis-agent tool library from a yohost dylib by its bytes.
//!
//! Exported symbol names are stored as NUL-terminated strings (ELF's
//! `.dynstr`, Mach-O's string table with a leading `_`, PE's export name
//! table), so the file is scanned for `rutis_plugin_tool_count\0` and for
//! yohost's entry point. Nothing is loaded and no code runs; the read is
//! bounded by [`SCAN_LIMIT`].

use memchr::memmem::Finder;
use std::io::Read;
use std::path::Path;

/// How many bytes of a file are scanned at most. A larger library is not
/// recognised (name its ecosystem in its `plugin.toml` instead).
pub const SCAN_LIMIT: u64 = 256 * 1024 * 1024;

/// The symbol every rutis-agent tool library exports.
const TOOL_COUNT: &[u8] = b"rutis_plugin_tool_count\0";

/// Whether the file at `path` exports the rutis-agent tool ABI and not
/// yohost's own entry point.
pub fn is_tool_library(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let yohost_entry = format!("{}\0", yohost::contract::ENTRY_SYMBOL);
    match find_each(
        file.take(SCAN_LIMIT),
        &[TOOL_COUNT, yohost_entry.as_bytes()],
    ) {
        Ok(found) => found[0] && !found[1],
        Err(_) => false,
    }
}

/// Which of `needles` occur in `reader`'s bytes, read in chunks (a needle
/// split across two chunks is still found).
fn find_each(mut reader: impl Read, needles: &[&[u8]]) -> std::io::Result<Vec<bool>> {
    const CHUNK: usize = 1 << 20;
    let finders: Vec<Finder<'_>> = needles.iter().map(Finder::new).collect();
    let overlap = needles.iter().map(|n| n.len()).max().unwrap_or(1) - 1;
    let mut found = vec![false; needles.len()];
    let mut buffer = vec![0u8; overlap + CHUNK];
    let mut kept = 0;
    loop {
        let read = reader.read(&mut buffer[kept..])?;
        if read == 0 {
            return Ok(found);
        }
        let filled = kept + read;
        for (hit, finder) in found.iter_mut().zip(&finders) {
            *hit = *hit || finder.find(&buffer[..filled]).is_some();
        }
        if found.iter().all(|f| *f) {
            return Ok(found);
        }
        kept = overlap.min(filled);
        buffer.copy_within(filled - kept..filled, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads one byte at a time, so every needle straddles reads.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((byte, rest)), Some(slot)) => {
                    *slot = *byte;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn needles_are_found_across_reads_and_only_whole() {
        let bytes = b"\x7fELF\0\0rutis_plugin_tool_count\0rutis_plugin_tool_schema\0";
        let found = find_each(Trickle(bytes), &[TOOL_COUNT, b"yohost_plugin_entry\0"]).unwrap();
        assert_eq!(found, [true, false]);
        // A name inside a longer one, or without its NUL, is not the symbol.
        let found = find_each(Trickle(b"\0rutis_plugin_tool_countx\0"), &[TOOL_COUNT]).unwrap();
        assert_eq!(found, [false]);
    }

    #[test]
    fn a_library_with_both_symbols_is_yohost_and_a_missing_file_is_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let both = dir.path().join("both.so");
        std::fs::write(&both, b"\0rutis_plugin_tool_count\0yohost_plugin_entry\0").unwrap();
        assert!(!is_tool_library(&both));
        let rutis = dir.path().join("rutis.so");
        std::fs::write(&rutis, b"\0_rutis_plugin_tool_count\0").unwrap();
        assert!(is_tool_library(&rutis));
        assert!(!is_tool_library(&dir.path().join("missing.so")));
    }
}
