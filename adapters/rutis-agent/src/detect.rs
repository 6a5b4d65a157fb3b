//! Telling a rutis-agent tool library from a yohost dylib by its bytes.
//!
//! Exported symbol names are stored as NUL-terminated strings (ELF's
//! `.dynstr`, Mach-O's string table with a leading `_`, PE's export name
//! table), so the file is searched for `rutis_plugin_tool_count\0` and for
//! yohost's entry point. Nothing is loaded and no code runs; the file is read
//! as the host reads plugin files ([`yohost::adapter::source::read_bytes`]: regular
//! files only, without blocking), up to the size the dylib engine accepts.

use memchr::memmem;
use std::path::Path;

/// The symbol every rutis-agent tool library exports.
const TOOL_COUNT: &[u8] = b"rutis_plugin_tool_count\0";

/// Whether the file at `path` exports the rutis-agent tool ABI and not
/// yohost's own entry point. A file that cannot be read, or is larger than
/// [`yohost::adapter::limits::MAX_LIBRARY_BYTES`], is not.
pub fn is_tool_library(path: &Path) -> bool {
    yohost::adapter::source::read_bytes(path, yohost::adapter::limits::MAX_LIBRARY_BYTES)
        .is_ok_and(|bytes| exports_tool_abi(&bytes))
}

/// Whether `bytes` name the tool ABI's symbol and not yohost's entry point.
fn exports_tool_abi(bytes: &[u8]) -> bool {
    let yohost_entry = format!("{}\0", yohost::contract::ENTRY_SYMBOL);
    memmem::find(bytes, TOOL_COUNT).is_some()
        && memmem::find(bytes, yohost_entry.as_bytes()).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_whole_symbol_name_without_yohost_entry_counts() {
        assert!(exports_tool_abi(b"\x7fELF\0\0rutis_plugin_tool_count\0"));
        assert!(exports_tool_abi(b"\0_rutis_plugin_tool_count\0"), "Mach-O");
        assert!(!exports_tool_abi(b"\0rutis_plugin_tool_countx\0"));
        assert!(!exports_tool_abi(b"rutis_plugin_tool_count"), "no NUL");
        assert!(!exports_tool_abi(
            b"\0rutis_plugin_tool_count\0yohost_plugin_entry\0"
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_missing_file_is_not_a_library_and_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("libfifo.so");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(!is_tool_library(&fifo));
        assert!(!is_tool_library(&dir.path().join("missing.so")));
    }
}
