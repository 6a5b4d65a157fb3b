//! The kernel sandbox of every process a plugin runs in or starts: the
//! Node engine's `node`, the processes `exec` starts on any engine, and
//! MCP servers over stdio (the MCP adapter).
//!
//! A runtime's own checks (cap-std handles in the embedded engine, Node's
//! permission model) are a first line; the kernel is the layer every
//! runtime shares. A plugin process runs under a Landlock ruleset made from
//! its grants (`kernel`):
//!
//! - it may read and execute beneath the system's program folders (`/usr`,
//!   `/lib`, ...), a few non-secret files of `/etc` (the loader's cache,
//!   certificates, name resolution), `/dev/null` and the random devices,
//!   its own folder, and its read grants; it may write only its write
//!   grants. Links are followed by the kernel, so a link out of a grant
//!   reaches nothing, and `/proc` is closed;
//! - it may not signal, or connect to an abstract Unix socket of, any
//!   process outside its sandbox (the host included);
//! - it may connect over TCP only as `capabilities.network` allows:
//!   `true` is any port; a list of hosts only the port of the host's proxy
//!   (`proxy`), which reaches the listed hosts alone; `false` none; and a
//!   check opens no connection at all. Every other socket (UDP, Unix with
//!   a path, raw, MPTCP) is the seccomp filter's (`seccomp`).
//!
//! Before Landlock it loses every capability and gets `no_new_privs`, a
//! session and PID namespace of its own, and none of the host's
//! descriptors; after it, the seccomp filter (`child`).
//!
//! Its environment is the granted variables, [`BASE_ENV`] and
//! `YOHOST_DATA_DIR` (the plugin's [data folder](crate::load::data_dir)),
//! never the host's whole environment. Its life is bound to the host and to its
//! call (`life`): its own process group, killed with the host, and ended
//! with everything it started.
//!
//! Where the kernel has no Landlock (ABI 6, Linux 6.12), a plugin that
//! needs a process is refused, naming why, unless its manifest sets
//! `capabilities.unconfined = true`; it then runs with the environment
//! and life rules above and without the kernel's confinement, and its load
//! warnings say so.

mod cgroup;
mod child;
mod life;
mod limits;
mod proxy;
mod ruleset;
mod seccomp;
pub mod stderr;

pub use cgroup::{DEFAULT_MEMORY_BYTES as GROUP_MEMORY_BYTES, MAX_TASKS};
pub use life::PluginProcess;
pub use limits::{ProcessSlot, PROCESSES_PER_HOST, PROCESSES_PER_PLUGIN};
pub use proxy::MAX_TUNNELS;
pub use ruleset::TcpAccess;
pub use seccomp::SocketPolicy;

use crate::load::data_dir::DATA_DIR_ENV;
use crate::load::discovery::Candidate;
use crate::load::grants::{Access, Grants};
use crate::load::manifest::{Capabilities, Network};
use crate::model::Confinement;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The variables every plugin process gets from the host's environment,
/// when the host has them, besides those its manifest grants: where
/// programs are, the user's home (only when a grant lets the process read
/// it) and name, the language, time zone and terminal type.
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TERM",
    "TMPDIR",
];

/// The variables that name the host's proxy to a process whose network
/// grant is a list of hosts (each replaces the host's own, if any).
const PROXY_ENV: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "NODE_USE_ENV_PROXY",
];

/// The value of the proxy variable `name` for the proxy at `url`: nothing
/// is exempt from it, and Node 24 and newer is told to use it.
fn proxy_value(name: &str, url: &str) -> String {
    match name {
        "NO_PROXY" | "no_proxy" => String::new(),
        "NODE_USE_ENV_PROXY" => "1".into(),
        _ => url.to_string(),
    }
}

/// How a plugin's processes run, given what the kernel `supports` and
/// whether its manifest allows them to run `unconfined`: confined where the
/// kernel can; else unconfined only when allowed (with a warning), else
/// refused, saying why and what would load it.
fn confinement(
    supports: Result<(), String>,
    unconfined: bool,
    warnings: &mut Vec<String>,
) -> Result<Confinement, String> {
    match supports {
        Ok(()) => Ok(Confinement::Kernel),
        Err(why) if unconfined => {
            warnings.push(format!("its processes run unconfined, as its manifest allows: {why}"));
            Ok(Confinement::Unconfined)
        }
        Err(why) => Err(format!(
            "{why}; setting `unconfined = true` under [capabilities] in its plugin.toml would run its processes without the kernel sandbox"
        )),
    }
}

/// What every process of one plugin may reach, and how it is started.
#[derive(Debug, Clone)]
pub struct ProcessSandbox {
    /// Files and folders the plugin may read as its own
    /// ([`Candidate::own_paths`], and its entry), besides its grants.
    own: Vec<PathBuf>,
    grants: Grants,
    tcp: TcpAccess,
    sockets: SocketPolicy,
    /// The seccomp filters, compiled once (none for an unconfined plugin).
    filters: Option<std::sync::Arc<seccomp::Filters>>,
    /// The host's proxy to the listed hosts of a `network` list, held so
    /// that it runs while any clone of the sandbox lives.
    _proxy: Option<std::sync::Arc<proxy::Proxy>>,
    /// The plugin's control group, made at its first process start (none
    /// where the host cannot make one), shared by its processes.
    cgroup: std::sync::Arc<OnceLock<Option<std::sync::Arc<cgroup::Cgroup>>>>,
    /// The memory its control group allows its processes together.
    group_memory: u64,
    /// The plugin's name, for its control group.
    plugin: String,
    count: limits::PluginCount,
    env: Vec<(String, String)>,
    confinement: Confinement,
    /// Loaded for a check: nothing may be written, and no connection made.
    dry_run: bool,
    warnings: Vec<String>,
}

impl ProcessSandbox {
    /// The sandbox of `candidate`'s processes, from its manifest and its
    /// opened `grants`. `Err` says why the plugin cannot have one here (no
    /// Landlock, and no `unconfined` opt-in).
    pub fn for_plugin(candidate: &Candidate, grants: &Grants) -> Result<ProcessSandbox, String> {
        let mut own = candidate.own_paths();
        if let Ok(entry) = candidate.entry.canonicalize() {
            if !own.iter().any(|o| entry.starts_with(o)) {
                own.push(entry);
            }
        }
        let limits = &candidate.manifest.limits;
        let mut sandbox = Self::new(
            &candidate.name,
            own,
            &candidate.manifest.capabilities,
            grants,
            candidate.dry_run,
            limits
                .processes
                .map_or(PROCESSES_PER_PLUGIN, |n| n as usize),
        )?;
        if let Some(mib) = limits.memory_mib {
            sandbox.group_memory = sandbox.group_memory.max(mib.saturating_mul(4) << 20);
        }
        if let Some(folder) = &candidate.data_dir {
            // Its own folder, over the host's value of that name.
            sandbox.env.retain(|(name, _)| name != DATA_DIR_ENV);
            let folder = folder.to_string_lossy().into_owned();
            sandbox.env.push((DATA_DIR_ENV.to_string(), folder));
        }
        Ok(sandbox)
    }

    /// The sandbox of a process the host starts on a package's behalf (npm
    /// during `yohost add`): `capabilities` as a plugin's, relative to
    /// `base`, which it may also read. Never unconfined: `Err` says what the
    /// kernel lacks, or which grant cannot be opened.
    pub fn for_host_tool(
        base: &Path,
        capabilities: &Capabilities,
    ) -> Result<ProcessSandbox, String> {
        let mut capabilities = capabilities.clone();
        capabilities.unconfined = false;
        let grants = Grants::open(base, &capabilities).map_err(|e| e.to_string())?;
        let own = vec![std::path::absolute(base).map_err(|e| e.to_string())?];
        Self::new(
            "npm",
            own,
            &capabilities,
            &grants,
            false,
            PROCESSES_PER_PLUGIN,
        )
    }

    /// The sandbox of `plugin`'s processes, which may read `own`, with
    /// `capabilities` and their opened `grants`; a `dry_run` writes nothing
    /// and connects nowhere.
    fn new(
        plugin: &str,
        own: Vec<PathBuf>,
        capabilities: &Capabilities,
        grants: &Grants,
        dry_run: bool,
        processes: usize,
    ) -> Result<ProcessSandbox, String> {
        let mut warnings = Vec::new();
        let confinement = confinement(support(), capabilities.unconfined, &mut warnings)?;
        let mut proxy = None;
        if let Network::Hosts(_) = &capabilities.network {
            // Said in a check too, whose processes reach nothing at all.
            warnings.push("its processes reach the listed hosts only through the host's proxy (in HTTPS_PROXY and the like), over https:// (CONNECT); a program that ignores proxy settings (Node's fetch before Node 24) reaches nothing".to_string());
        }
        let (tcp, sockets) = match &capabilities.network {
            _ if dry_run => (TcpAccess::Ports(Vec::new()), SocketPolicy::None),
            Network::Granted(true) => (TcpAccess::Any, SocketPolicy::Internet),
            Network::Granted(false) => (TcpAccess::Ports(Vec::new()), SocketPolicy::None),
            Network::Hosts(_) => {
                let started =
                    proxy::Proxy::start(plugin, capabilities.network.clone()).map_err(|e| {
                        format!("cannot start the host's proxy for its network grant: {e}")
                    })?;
                let port = started.port();
                proxy = Some(std::sync::Arc::new(started));
                (TcpAccess::Ports(vec![port]), SocketPolicy::TcpOnly)
            }
        };
        let filters = match confinement {
            Confinement::Kernel => Some(std::sync::Arc::new(seccomp::filters(sockets)?)),
            Confinement::Unconfined => None,
        };
        let granted = capabilities.env.iter().map(String::as_str);
        // A home the process cannot read is left out: programs then skip
        // their per-user settings (git fails on an unreadable
        // `~/.gitconfig`, and skips an absent one).
        let readable = |path: &Path| {
            own.iter().any(|o| path.starts_with(o))
                || grants.iter().any(|g| path.starts_with(g.real()))
        };
        let env = BASE_ENV
            .iter()
            .copied()
            .filter(|name| *name != "HOME")
            .chain(granted)
            .chain(
                std::env::var_os("HOME")
                    .filter(|h| readable(h.as_ref()))
                    .map(|_| "HOME"),
            )
            .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
            .filter(|(name, _)| proxy.is_none() || !PROXY_ENV.contains(&name.as_str()))
            .chain(proxy.iter().flat_map(|proxy| {
                let url = proxy.url();
                PROXY_ENV
                    .iter()
                    .map(move |name| (name.to_string(), proxy_value(name, &url)))
            }))
            .collect();
        Ok(ProcessSandbox {
            own,
            grants: grants.clone(),
            tcp,
            sockets,
            filters,
            _proxy: proxy,
            cgroup: std::sync::Arc::default(),
            group_memory: cgroup::DEFAULT_MEMORY_BYTES,
            plugin: plugin.to_string(),
            count: limits::PluginCount::new(processes),
            env,
            confinement,
            dry_run,
            warnings,
        })
    }

    /// A sandbox with `grants`, no network and the base environment, for
    /// the host's own unit tests.
    #[cfg(all(test, feature = "js"))]
    pub(crate) fn for_tests(grants: Grants) -> ProcessSandbox {
        support().expect("these tests need the kernel sandbox");
        ProcessSandbox {
            own: Vec::new(),
            grants,
            tcp: TcpAccess::Ports(Vec::new()),
            sockets: SocketPolicy::None,
            filters: Some(std::sync::Arc::new(
                seccomp::filters(SocketPolicy::None).unwrap(),
            )),
            _proxy: None,
            cgroup: std::sync::Arc::default(),
            group_memory: cgroup::DEFAULT_MEMORY_BYTES,
            plugin: "test".into(),
            count: limits::PluginCount::new(PROCESSES_PER_PLUGIN),
            env: BASE_ENV
                .iter()
                .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
                .collect(),
            confinement: Confinement::Kernel,
            dry_run: false,
            warnings: Vec::new(),
        }
    }

    /// Whether the kernel confines these processes.
    pub fn confinement(&self) -> Confinement {
        self.confinement
    }

    /// What a check should show about the sandbox besides its success: an
    /// unconfined run, a network grant the kernel cannot enforce.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The environment a process gets: the granted variables and
    /// [`BASE_ENV`], as the host had them when the plugin loaded, and
    /// `YOHOST_DATA_DIR`, the plugin's data folder.
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// A command for `program` with only the sandbox's environment; add its
    /// arguments and start it with [`ProcessSandbox::spawn`].
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Which sockets these processes may open.
    pub fn sockets(&self) -> SocketPolicy {
        self.sockets
    }

    /// A place in the process limits for one more process of this plugin
    /// (see [`PROCESSES_PER_PLUGIN`]), to start it with; `Err` names the
    /// limit it would pass. Reserve before making what the process needs
    /// (a thread to wait on it), so that a flood of starts is refused
    /// before it costs anything.
    pub fn reserve(&self) -> io::Result<ProcessSlot> {
        self.count.reserve()
    }

    /// Start `command` in `slot`: confined by the kernel (see the module's
    /// doc), in a session of its own, killed with the host, with a private
    /// temporary folder (`TMPDIR`) that is removed once it has ended. Also
    /// allow reading `extra` (a runtime outside the system's folders, such
    /// as a `node` installed under the user's home).
    pub fn spawn(
        &self,
        slot: ProcessSlot,
        command: Command,
        extra: &[PathBuf],
    ) -> io::Result<PluginProcess> {
        self.spawn_with(slot, |_| command, extra)
    }

    /// [`spawn`](Self::spawn) the command `command_for` makes given the
    /// process's private temporary folder (Node's permission flags must
    /// name it for the process to write there).
    pub fn spawn_with(
        &self,
        slot: ProcessSlot,
        command_for: impl FnOnce(&Path) -> Command,
        extra: &[PathBuf],
    ) -> io::Result<PluginProcess> {
        let scratch = tempfile::Builder::new()
            .prefix("yohost-process-")
            .tempdir()
            .map_err(|e| io::Error::other(format!("cannot make its temporary folder: {e}")))?;
        let mut command = command_for(scratch.path());
        command.env("TMPDIR", scratch.path());
        let confined = match (&self.confinement, &self.filters) {
            (Confinement::Kernel, Some(filters)) => {
                let read = self.own.iter().chain(extra);
                // A check writes nothing, even where a run may.
                let access = |a| if self.dry_run { Access::Read } else { a };
                let grants = self
                    .grants
                    .iter()
                    .map(|g| (g.handle(), access(g.access()), g.is_file()));
                let ruleset =
                    ruleset::ruleset(read, scratch.path(), grants, &self.tcp).map_err(|e| {
                        io::Error::other(format!("cannot make the kernel sandbox: {e}"))
                    })?;
                Some(child::Confined {
                    ruleset: Some(ruleset),
                    filters: filters.as_ref().clone(),
                })
            }
            _ => None,
        };
        let namespaced = confined.is_some();
        let group = self
            .cgroup
            .get_or_init(|| {
                cgroup::Cgroup::new(&self.plugin, self.group_memory).map(std::sync::Arc::new)
            })
            .clone();
        let plan = child::Plan {
            host: host_pid(),
            confined,
            probe: false,
            cgroup: group.as_ref().map(|g| g.join_fds()).unwrap_or_default(),
        };
        life::prepare(&mut command, plan);
        life::spawn(command, slot, Some(scratch), namespaced, group)
    }
}

/// The host's pid, as a process it forks sees its parent.
fn host_pid() -> libc::pid_t {
    libc::pid_t::try_from(std::process::id()).unwrap_or(0)
}

/// Whether this kernel can confine a plugin process with every layer:
/// `Err` names the layer it cannot give. Checked once per process, by
/// starting `true` under all of them.
pub fn support() -> Result<(), String> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED.get_or_init(probe).clone()
}

/// Start `true` confined by every layer and see it exit cleanly.
fn probe() -> Result<(), String> {
    ruleset::support()?;
    let cannot = |why: String| format!("the kernel cannot confine plugin processes: {why}");
    let program = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .ok_or_else(|| cannot("there is no `true` to try it with".into()))?;
    let scratch = tempfile::tempdir().map_err(|e| cannot(e.to_string()))?;
    let ruleset = ruleset::ruleset(
        std::iter::empty(),
        scratch.path(),
        std::iter::empty(),
        &TcpAccess::Ports(Vec::new()),
    )
    .map_err(|e| cannot(e.to_string()))?;
    let plan = child::Plan {
        host: host_pid(),
        confined: Some(child::Confined {
            ruleset: Some(ruleset),
            filters: seccomp::filters(SocketPolicy::None).map_err(cannot)?,
        }),
        probe: true,
        cgroup: Vec::new(),
    };
    let mut command = Command::new(program);
    command
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    life::prepare(&mut command, plan);
    let slot = limits::PluginCount::new(1)
        .reserve()
        .map_err(|e| cannot(e.to_string()))?;
    let mut process =
        life::spawn(command, slot, None, true, None).map_err(|e| cannot(e.to_string()))?;
    let status = process.child().wait().map_err(|e| cannot(e.to_string()))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(cannot(match child::Step::from_code(code) {
            Some(step) => format!("{} failed", step.layer()),
            None => format!("a confined `true` exited with {code}"),
        })),
        None => Err(cannot(format!("a confined `true` ended with {status}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_landlock_a_process_is_refused_unless_the_manifest_opts_in() {
        let missing = || Err("the kernel cannot confine plugin processes".to_string());
        let mut warnings = Vec::new();
        let refused = confinement(missing(), false, &mut warnings).unwrap_err();
        assert!(refused.contains("the kernel cannot confine"), "{refused}");
        assert!(refused.contains("`unconfined = true`"), "{refused}");
        assert!(warnings.is_empty());
        assert_eq!(
            confinement(missing(), true, &mut warnings),
            Ok(Confinement::Unconfined)
        );
        assert!(warnings[0].contains("unconfined"), "{warnings:?}");
        let mut warnings = Vec::new();
        // Where the kernel can, the opt-in changes nothing.
        assert_eq!(
            confinement(Ok(()), true, &mut warnings),
            Ok(Confinement::Kernel)
        );
        assert!(warnings.is_empty());
    }

    #[test]
    fn this_kernel_confines_plugin_processes() {
        // The machines this project is built and tested on have Landlock
        // ABI 6 or newer; without it every sandbox test would pass vacuously.
        assert_eq!(support(), Ok(()));
    }
}
