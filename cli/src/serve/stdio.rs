//! One MCP session over standard input and output. Standard output is the
//! protocol's alone: the command keeps its own copy of it and points the
//! process's standard output at standard error, so whatever else writes
//! there (a Python plugin's `print`, a dylib's `println!`) lands in the log,
//! never in the protocol.

use crate::serve::session::{Session, Shared};
use rmcp::ServiceExt;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

/// The protocol's own copy of standard output; the process's standard
/// output now writes to standard error. Call before any plugin loads.
pub fn take_stdout() -> Result<tokio::fs::File, String> {
    // SAFETY: `dup` and `dup2` on the process's own standard descriptors;
    // the duplicate is owned here alone.
    let protocol = unsafe {
        let fd = libc::dup(libc::STDOUT_FILENO);
        if fd < 0 || libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            return Err(format!(
                "cannot set standard output aside for the protocol: {}",
                std::io::Error::last_os_error()
            ));
        }
        OwnedFd::from_raw_fd(fd)
    };
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}

/// Serve one session on standard input and `output` until the client
/// closes it, then finish its run.
pub async fn serve(shared: Arc<Shared>, output: tokio::fs::File) -> Result<(), String> {
    let session = Session::new(Arc::clone(&shared), None);
    let running = session
        .clone()
        .serve((tokio::io::stdin(), output))
        .await
        .map_err(|e| format!("the MCP client did not start a session: {e}"))?;
    let _ = running.waiting().await;
    session.finish().await;
    Ok(())
}
