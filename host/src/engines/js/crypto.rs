//! Random bytes and digests for flavors that offer `node:crypto` (pi's):
//! the operating system's randomness (`getrandom`) and the sha2 family
//! (`sha2`). No cryptography is written in JavaScript.

use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

/// The most random bytes one call returns (node's `randomBytes` takes more,
/// but a plugin needs ids and nonces, not bulk data).
pub const MAX_RANDOM_BYTES: usize = 65536;

/// Why a crypto service failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// The digest is not one of sha224, sha256, sha384, sha512.
    #[error(
        "Digest method not supported: {0} (the host offers sha224, sha256, sha384 and sha512)"
    )]
    UnknownDigest(String),
    /// More random bytes than [`MAX_RANDOM_BYTES`] were asked for.
    #[error("randomBytes: at most {MAX_RANDOM_BYTES} bytes at a time, not {0}")]
    TooManyBytes(usize),
    /// The operating system's randomness failed.
    #[error("randomBytes: the system's randomness failed: {0}")]
    Random(String),
}

/// `count` bytes from the operating system's randomness.
pub fn random_bytes(count: usize) -> Result<Vec<u8>, CryptoError> {
    if count > MAX_RANDOM_BYTES {
        return Err(CryptoError::TooManyBytes(count));
    }
    let mut bytes = vec![0; count];
    getrandom::getrandom(&mut bytes).map_err(|e| CryptoError::Random(e.to_string()))?;
    Ok(bytes)
}

/// The `algorithm` digest of `data` (`sha256`, `SHA-256`, ...).
pub fn digest(algorithm: &str, data: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let name = algorithm.to_ascii_lowercase().replace('-', "");
    Ok(match name.as_str() {
        "sha224" => Sha224::digest(data).to_vec(),
        "sha256" => Sha256::digest(data).to_vec(),
        "sha384" => Sha384::digest(data).to_vec(),
        "sha512" => Sha512::digest(data).to_vec(),
        _ => return Err(CryptoError::UnknownDigest(algorithm.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_known_values() {
        let hex = |b: Vec<u8>| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(
            hex(digest("sha256", b"abc").unwrap()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(digest("SHA-256", b"abc"), digest("sha256", b"abc"));
        assert_eq!(
            digest("md5", b"abc"),
            Err(CryptoError::UnknownDigest("md5".into()))
        );
    }

    #[test]
    fn random_bytes_are_bounded_and_differ() {
        assert_eq!(random_bytes(0).unwrap().len(), 0);
        let (a, b) = (random_bytes(32).unwrap(), random_bytes(32).unwrap());
        assert_ne!(a, b);
        assert_eq!(
            random_bytes(MAX_RANDOM_BYTES + 1),
            Err(CryptoError::TooManyBytes(MAX_RANDOM_BYTES + 1))
        );
    }
}
