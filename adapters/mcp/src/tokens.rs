//! The per-user store of the OAuth tokens yohost is given for remote MCP
//! servers, so that a server a person authorized once is not authorized
//! again at every `yohost run`. One file per server (its plugin's entry,
//! its name and its URL, hashed), in the private folder
//! [`TOKENS`](yohost::adapter::private_dir::TOKENS) of the host's private
//! cache: a folder only this user can read or write, which no plugin's
//! grant may reach (a grant that would is refused at load). Each file is
//! written whole, under a new name, then renamed over the old, with mode
//! 0600.

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::PathBuf;
use yohost::adapter::private_dir::{cache_folder, TOKENS};

/// The most bytes of a stored token file that are read.
const MAX_TOKEN_FILE_BYTES: u64 = 256 << 10;

/// The stored tokens of one server.
#[derive(Clone, Debug)]
pub(crate) struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// The token file of the server `name`, listed in `entry`, at `url`;
    /// `None` when the private folder cannot be used (tokens then live
    /// with the connection only).
    pub(crate) fn of(entry: &std::path::Path, name: &str, url: &str) -> Option<TokenFile> {
        let folder = cache_folder(TOKENS)
            .inspect_err(|e| tracing::debug!(target: "yohost::plugin", plugin = %name, "OAuth tokens are not kept: {e}"))
            .ok()?;
        let mut key = Sha256::new();
        for part in [
            entry.as_os_str().as_encoded_bytes(),
            name.as_bytes(),
            url.as_bytes(),
        ] {
            key.update((part.len() as u64).to_le_bytes());
            key.update(part);
        }
        let key: String = key.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Some(TokenFile {
            path: folder.join(format!("{key}.json")),
        })
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> AuthError {
    AuthError::InternalError(format!("{what} the stored OAuth tokens: {e}"))
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match yohost::adapter::source::read_bytes(&self.path, MAX_TOKEN_FILE_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| failed("cannot read", e)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(failed("cannot read", e)),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes = serde_json::to_vec(&credentials).map_err(|e| failed("cannot write", e))?;
        let folder = self
            .path
            .parent()
            .ok_or_else(|| failed("cannot write", "no folder"))?;
        let mut file = tempfile::Builder::new()
            .prefix(".tokens-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .tempfile_in(folder)
            .map_err(|e| failed("cannot write", e))?;
        file.write_all(&bytes)
            .map_err(|e| failed("cannot write", e))?;
        file.persist(&self.path)
            .map_err(|e| failed("cannot write", e))?;
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(failed("cannot remove", e)),
            _ => Ok(()),
        }
    }
}
