//! Limits every engine enforces, and the checks on content crossing the
//! boundary.

use base64::Engine as _;
use yohost_contract::ContentBlock;

/// The largest reply a plugin may return: 16 MiB.
pub const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// The largest image, decoded, that may cross the boundary: 10 MiB.
pub const MAX_IMAGE_BYTES: usize = 10 * 1024 * 1024;

/// Image types that may cross the boundary.
pub const IMAGE_MIME_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The longest log message kept: 8 KiB; the rest is cut.
pub const MAX_LOG_BYTES: usize = 8 * 1024;

/// The most log lines a plugin keeps in one hook call: 200,000. Further
/// lines of the call are dropped, and one line then says how many.
pub const MAX_LOG_LINES_PER_CALL: u64 = 200_000;

/// The most bytes of log messages a plugin keeps in one hook call: 16 MiB.
pub const MAX_LOG_BYTES_PER_CALL: u64 = 16 * 1024 * 1024;

/// The most log lines a plugin keeps in one run, over all its calls:
/// 1,000,000.
pub const MAX_LOG_LINES_PER_RUN: u64 = 1_000_000;

/// The most bytes of log messages a plugin keeps in one run: 64 MiB.
pub const MAX_LOG_BYTES_PER_RUN: u64 = 64 * 1024 * 1024;

/// The most log lines a plugin keeps in a second while none of its hook
/// calls runs (a timer's, a background task's): 1,000.
pub const MAX_LOG_LINES_PER_IDLE_SECOND: u64 = 1_000;

/// The most bytes of log messages a plugin keeps in a second while none of
/// its hook calls runs: 1 MiB.
pub const MAX_LOG_BYTES_PER_IDLE_SECOND: u64 = 1024 * 1024;

/// The largest text file the host reads from a plugin directory to inspect
/// a plugin (a manifest, a `package.json`, a source): 16 MiB.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// The largest dylib the host copies and loads, and the largest Wasm
/// component it reads: 1 GiB.
pub const MAX_LIBRARY_BYTES: u64 = 1024 * 1024 * 1024;

/// Memory a sandboxed engine (Wasm, JS) gives a plugin unless its manifest
/// says otherwise: 64 MiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 64 * 1024 * 1024;

/// Why an image was refused: a type not in [`IMAGE_MIME_TYPES`], data that
/// is not base64, over [`MAX_IMAGE_BYTES`] decoded, or whose bytes are not
/// of the type its label says (an SVG labelled `image/png`).
pub fn check_image(data: &str, mime_type: &str) -> Result<(), String> {
    if !IMAGE_MIME_TYPES.contains(&mime_type) {
        return Err(format!(
            "image type `{mime_type}` is not allowed (only {})",
            IMAGE_MIME_TYPES.join(", ")
        ));
    }
    // Base64 is 4 characters for 3 bytes: refuse early without decoding.
    if data.len() / 4 * 3 > MAX_IMAGE_BYTES + 3 {
        return Err(format!("image is over {MAX_IMAGE_BYTES} bytes"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("image data is not valid base64: {e}"))?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "image is {} bytes, over {MAX_IMAGE_BYTES}",
            bytes.len()
        ));
    }
    match infer::get(&bytes).map(|kind| kind.mime_type()) {
        Some(found) if found == mime_type => Ok(()),
        found => Err(format!(
            "image labelled `{mime_type}` holds {}",
            found.map_or("bytes of no image type".to_string(), |f| format!(
                "`{f}` bytes"
            ))
        )),
    }
}

/// Check every image of some content.
pub fn check_content(content: &[ContentBlock]) -> Result<(), String> {
    content.iter().try_for_each(|block| match block {
        ContentBlock::Image { data, mime_type } => check_image(data, mime_type),
        ContentBlock::Text { .. } => Ok(()),
    })
}

/// Cut `message` to at most [`MAX_LOG_BYTES`], on a character boundary.
pub fn cut_log_message(message: &str) -> &str {
    if message.len() <= MAX_LOG_BYTES {
        return message;
    }
    let mut end = MAX_LOG_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_checked_for_type_size_and_encoding() {
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let png = encode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        assert!(check_image(&png, "image/png").is_ok());
        assert!(check_image(&png, "image/svg+xml").is_err());
        // The label is checked against the bytes.
        let svg = encode(b"<svg xmlns=\"http://www.w3.org/2000/svg\"><script>x</script></svg>");
        let refused = check_image(&svg, "image/png").unwrap_err();
        assert!(refused.contains("labelled `image/png`"), "{refused}");
        let gif = encode(b"GIF89a\x01\0\x01\0");
        assert!(check_image(&gif, "image/gif").is_ok());
        assert!(check_image(&gif, "image/jpeg").is_err());
        assert!(check_image("not base64!", "image/png").is_err());
        let big = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_IMAGE_BYTES + 1]);
        assert!(check_image(&big, "image/png").is_err());
    }

    #[test]
    fn log_messages_are_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_LOG_BYTES);
        let cut = cut_log_message(&long);
        assert!(cut.len() <= MAX_LOG_BYTES);
        assert!(cut.chars().all(|c| c == 'é'));
        assert_eq!(cut_log_message("short"), "short");
    }
}
