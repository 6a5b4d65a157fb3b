//! Frames on the process's stdio: a 4-byte big-endian length, then that
//! many bytes of JSON. A frame longer than [`MAX_FRAME_BYTES`] is refused
//! before its body is read, so a process cannot make the host buffer more
//! than a reply's worth.

use crate::model::limits::MAX_REPLY_BYTES;
use std::io::{Read, Write};

/// Room for a frame's envelope around a reply of
/// [`crate::model::limits::MAX_REPLY_BYTES`] (the bootstrap
/// reports a larger reply as too large instead of sending it).
pub const FRAME_OVERHEAD: usize = 1024;

/// The longest frame the host reads.
pub const MAX_FRAME_BYTES: usize = MAX_REPLY_BYTES + FRAME_OVERHEAD;

/// Why no frame could be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The stream ended between frames: the process closed its stdout.
    #[error("the stream ended")]
    Ended,
    /// The stream ended inside a frame, or could not be read.
    #[error("the stream broke: {0}")]
    Io(#[from] std::io::Error),
    /// A frame announced more than [`MAX_FRAME_BYTES`].
    #[error("a frame of {0} bytes, over the limit of {MAX_FRAME_BYTES}")]
    TooLarge(usize),
}

/// Write one frame holding `body`.
pub fn write_frame(out: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    let length = u32::try_from(body.len())
        .map_err(|_| std::io::Error::other("a frame over 4 GiB cannot be written"))?;
    out.write_all(&length.to_be_bytes())?;
    out.write_all(body)?;
    out.flush()
}

/// Read one frame's body, of at most `limit` bytes.
pub fn read_frame(input: &mut impl Read, limit: usize) -> Result<Vec<u8>, FrameError> {
    let mut head = [0u8; 4];
    let mut filled = 0;
    while filled < head.len() {
        match input.read(&mut head[filled..])? {
            0 if filled == 0 => return Err(FrameError::Ended),
            0 => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
            n => filled += n,
        }
    }
    let length = u32::from_be_bytes(head) as usize;
    if length > limit {
        return Err(FrameError::TooLarge(length));
    }
    let mut body = vec![0u8; length];
    input.read_exact(&mut body)?;
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_a_clean_end_is_told_from_a_torn_one() {
        let mut wire = Vec::new();
        write_frame(&mut wire, b"{\"t\":1}").unwrap();
        write_frame(&mut wire, b"").unwrap();
        let mut input = wire.as_slice();
        assert_eq!(read_frame(&mut input, 100).unwrap(), b"{\"t\":1}");
        assert_eq!(read_frame(&mut input, 100).unwrap(), b"");
        assert!(matches!(
            read_frame(&mut input, 100),
            Err(FrameError::Ended)
        ));
        let torn = [0u8, 0, 0, 9, b'{'];
        assert!(matches!(
            read_frame(&mut torn.as_slice(), 100),
            Err(FrameError::Io(_))
        ));
        assert!(matches!(
            read_frame(&mut [0u8, 0].as_slice(), 100),
            Err(FrameError::Io(_))
        ));
    }

    #[test]
    fn a_frame_over_the_limit_is_refused_before_its_body_is_read() {
        // The announced length alone refuses it: no 4 GiB buffer.
        let hostile = u32::MAX.to_be_bytes();
        assert!(matches!(
            read_frame(&mut hostile.as_slice(), MAX_FRAME_BYTES),
            Err(FrameError::TooLarge(n)) if n == u32::MAX as usize
        ));
    }
}
