//! What a Wasm plugin may touch: the WASI context built from its
//! `[capabilities]` (deny unless granted), its memory limit, and the state
//! of its store.
//!
//! Granted: the directories in `read` (read-only) and `write` (read-write),
//! as the host's [file grants](crate::load::grants) opened them at load, preopened
//! under the path as written in the manifest (its data folder under its own
//! path); the environment variables in `env` (their values at load) and
//! `YOHOST_DATA_DIR`; the network only with `network = true`.
//! Never granted: any other file, variable or address, the wall clock (it
//! reads as 1970-01-01), stdin. A path outside every granted directory
//! reaches the [deny root](super::denied) and fails as a permission error
//! naming the grant to add. Stdout and stderr are discarded: plugins log
//! through the `host` import.

use crate::load::discovery::Candidate;
use crate::load::grants::Access;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wasmtime::component::ResourceTable;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::{FsPerms, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// The most table elements an instance may have (each costs a pointer).
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// What a plugin's manifest grants, resolved at load.
#[derive(Debug, Clone)]
pub(super) struct Grants {
    /// (host directory, path the guest sees, permissions).
    dirs: Vec<(PathBuf, String, FsPerms)>,
    /// Variables the guest sees, with their values at load.
    env: Vec<(String, String)>,
    /// Whether sockets and name lookup are allowed.
    network: bool,
    /// The instance's memory limit in bytes.
    pub memory_bytes: usize,
}

impl Grants {
    /// The sandbox of `candidate`, with the directories of its file
    /// `grants` (already opened, so each one exists).
    pub fn of(candidate: &Candidate, grants: &crate::load::grants::Grants) -> Grants {
        let caps = &candidate.manifest.capabilities;
        let dirs = grants
            .iter()
            .map(|grant| {
                let perms = match grant.access() {
                    Access::Read => FsPerms::ReadOnly,
                    Access::Write => FsPerms::ReadWrite,
                };
                let guest = grant.written().to_string_lossy().into_owned();
                (grant.real().to_path_buf(), guest, perms)
            })
            .collect();
        let env = crate::load::data_dir::plugin_env(candidate)
            .into_iter()
            .collect();
        Grants {
            dirs,
            env,
            // WASI's sockets cannot be limited to host names: a list of
            // hosts opens none.
            network: caps.network.allows_any(),
            memory_bytes: usize::try_from(candidate.manifest.memory_bytes()).unwrap_or(usize::MAX),
        }
    }

    /// Nothing granted, and the default memory limit.
    #[cfg(test)]
    pub fn none() -> Grants {
        Grants {
            dirs: Vec::new(),
            env: Vec::new(),
            network: false,
            memory_bytes: 64 << 20,
        }
    }

    /// Whether the sandbox preopens the deny root: unless a granted folder
    /// already takes every path (a grant of `/` or `.`).
    fn deny_root(&self) -> bool {
        !self
            .dirs
            .iter()
            .any(|(_, guest, _)| takes_every_path(guest))
    }

    /// A fresh WASI context with exactly these grants.
    fn wasi(&self) -> Result<WasiCtx, String> {
        let mut builder = WasiCtxBuilder::new();
        builder
            .allow_blocking_current_thread(true)
            .wall_clock(FrozenWallClock)
            .envs(&self.env)
            .allow_tcp(self.network)
            .allow_udp(self.network)
            .allow_ip_name_lookup(self.network);
        if self.network {
            builder.inherit_network();
        }
        if self.deny_root() {
            // Opened, then removed: an empty folder nothing can be made in.
            let empty = tempfile::Builder::new()
                .prefix("yohost-wasm-root")
                .tempdir()
                .map_err(|e| format!("cannot make the Wasm sandbox's root: {e}"))?;
            builder
                .preopened_dir(empty.path(), ROOT, FsPerms::ReadOnly)
                .map_err(|e| format!("cannot open the Wasm sandbox's root: {e}"))?;
        }
        for (host, guest, perms) in &self.dirs {
            builder
                .preopened_dir(host, guest, *perms)
                .map_err(|e| format!("cannot open granted directory {}: {e}", host.display()))?;
        }
        Ok(builder.build())
    }
}

/// The wall clock a guest sees: always the Unix epoch.
struct FrozenWallClock;

impl HostWallClock for FrozenWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// Caps the total linear memory of one instance, and remembers whether a
/// growth was refused (so a trap that follows is reported as out of memory).
pub(super) struct MemoryLimiter {
    limit: usize,
    used: usize,
    /// A growth past the limit was refused during the current call.
    pub hit: bool,
}

impl MemoryLimiter {
    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let after = self.used.saturating_sub(current).saturating_add(desired);
        if after > self.limit {
            self.hit = true;
            return Ok(false);
        }
        self.used = after;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

/// Why the host interrupted a running guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum Interrupted {
    /// The call's deadline passed.
    #[error("interrupted at its deadline")]
    Deadline,
    /// The run was cancelled.
    #[error("interrupted: the run was cancelled")]
    Cancelled,
}

/// The data of one instance's store.
pub(super) struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    /// The memory limit.
    pub memory: MemoryLimiter,
    /// The run the instance serves; attached to every log line.
    pub run_id: String,
    /// The plugin's name, for log lines.
    pub plugin: String,
    /// When the current call must stop.
    pub deadline: Instant,
    /// Whether the preopen named `/` is the deny root.
    pub deny_root_wanted: bool,
    /// The identity of the deny root, once the guest listed its preopens.
    pub deny_root: Option<usize>,
    /// The identities of the preopened folders and their guest names.
    pub preopens: Vec<(usize, String)>,
    /// The current call's run cancel.
    pub cancel: CancellationToken,
}

impl State {
    /// A store state for `plugin` serving `run_id`, with `grants`.
    pub fn new(grants: &Grants, plugin: &str, run_id: &str) -> Result<State, String> {
        Ok(State {
            wasi: grants.wasi()?,
            table: ResourceTable::new(),
            memory: MemoryLimiter {
                limit: grants.memory_bytes,
                used: 0,
                hit: false,
            },
            run_id: run_id.to_string(),
            plugin: plugin.to_string(),
            deadline: Instant::now(),
            deny_root_wanted: grants.deny_root(),
            deny_root: None,
            preopens: Vec::new(),
            cancel: CancellationToken::new(),
        })
    }

    /// Whether the running guest must stop now, and why.
    pub fn interrupted(&self) -> Option<Interrupted> {
        if self.cancel.is_cancelled() {
            Some(Interrupted::Cancelled)
        } else if Instant::now() >= self.deadline {
            Some(Interrupted::Deadline)
        } else {
            None
        }
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The guest path of the deny root.
pub(super) const ROOT: &str = "/";

/// Whether `guest` (a granted folder as the guest sees it) takes every path
/// the deny root would: wasi-libc strips leading `/` and `./` from preopen
/// names, and an empty name matches every path.
fn takes_every_path(guest: &str) -> bool {
    let mut rest = guest;
    loop {
        if let Some(r) = rest.strip_prefix('/') {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("./") {
            rest = r;
        } else if rest == "." {
            rest = "";
        } else {
            return rest.is_empty();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_or_dot_grant_takes_every_path() {
        for guest in ["/", ".", "./", "//", ""] {
            assert!(takes_every_path(guest), "{guest}");
        }
        for guest in ["data", "/etc", "./data", "../shared"] {
            assert!(!takes_every_path(guest), "{guest}");
        }
    }
}
