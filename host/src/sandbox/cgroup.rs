//! A control group per plugin, where the host can make one: every process
//! of the plugin (each one's keeper, init and program, and all they start)
//! joins it before `exec`, and it bounds their memory and number of tasks
//! together. The PID namespace ends them; the group bounds them while they
//! run (a fork bomb inside the namespace meets `pids.max`, root or not).
//!
//! Both cgroup versions are served: the unified hierarchy (v2:
//! `memory.max`, `pids.max` in one group) or the `memory` and `pids`
//! hierarchies of v1 (`memory.limit_in_bytes`, `pids.max`). The group is
//! made below the host's own group in each hierarchy, which is where a
//! delegated or a root host may write. Where none can be made (an ordinary
//! user without delegation, a read-only cgroup mount), the plugin runs
//! without it, and its processes are still bounded by their count
//! ([`super::limits`]), their runtime's memory limit and their deadlines.
//!
//! *Decision:* the group's files are written here rather than through
//! `cgroups-rs`, which brings a D-Bus client (for systemd) with it; the
//! host needs a folder, three files and `cgroup.procs`.

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The most tasks (processes and their threads) one plugin's group holds.
pub const MAX_TASKS: u64 = 1024;

/// The memory one plugin's processes may hold together, unless four times
/// its `limits.memory_mib` is more: 1 GiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 1 << 30;

/// One plugin's group: its folders, and each one's `cgroup.procs`, open for
/// the forked child to join by writing `0` (itself).
#[derive(Debug)]
pub(super) struct Cgroup {
    folders: Vec<PathBuf>,
    procs: Vec<File>,
}

impl Cgroup {
    /// A new group for `plugin` bounding memory to `memory` bytes and tasks
    /// to [`MAX_TASKS`]; `None` where the host cannot make one.
    pub(super) fn new(plugin: &str, memory: u64) -> Option<Cgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "yohost-{}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            plugin
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .take(32)
                .collect::<String>()
        );
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let root = Path::new("/sys/fs/cgroup");
        let limits: Vec<(PathBuf, Vec<(&str, String)>)> =
            if root.join("cgroup.controllers").exists() {
                let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
                vec![(
                    root.join(path.trim_start_matches('/')).join(&name),
                    vec![
                        ("memory.max", memory.to_string()),
                        ("pids.max", MAX_TASKS.to_string()),
                    ],
                )]
            } else {
                let path_of = |controller: &str| {
                    own.lines().find_map(|line| {
                        let mut fields = line.splitn(3, ':');
                        let (_, controllers, path) =
                            (fields.next()?, fields.next()?, fields.next()?);
                        controllers
                            .split(',')
                            .any(|c| c == controller)
                            .then(|| root.join(controller).join(path.trim_start_matches('/')))
                    })
                };
                vec![
                    (
                        path_of("memory")?.join(&name),
                        vec![("memory.limit_in_bytes", memory.to_string())],
                    ),
                    (
                        path_of("pids")?.join(&name),
                        vec![("pids.max", MAX_TASKS.to_string())],
                    ),
                ]
            };
        let mut group = Cgroup {
            folders: Vec::new(),
            procs: Vec::new(),
        };
        for (folder, files) in limits {
            std::fs::create_dir(&folder).ok()?;
            group.folders.push(folder.clone());
            for (file, value) in files {
                std::fs::write(folder.join(file), value).ok()?;
            }
            let procs = OpenOptions::new()
                .write(true)
                .open(folder.join("cgroup.procs"))
                .ok()?;
            group.procs.push(procs);
        }
        group.can_be_joined().then_some(group)
    }

    /// Whether a process can join the group: a child forked for the check
    /// joins it and exits, so that a group the host may make but not fill
    /// (the rules of a delegated hierarchy) is not used, rather than
    /// failing every start.
    fn can_be_joined(&self) -> bool {
        let fds = self.join_fds();
        // SAFETY: the child makes system calls only (`write`, `_exit`)
        // before it exits; the parent waits for it.
        unsafe {
            let child = libc::fork();
            if child == 0 {
                libc::_exit(if join(&fds).is_ok() { 0 } else { 1 });
            }
            if child < 0 {
                return false;
            }
            let mut status = 0;
            while libc::waitpid(child, &mut status, 0) < 0 {
                if *libc::__errno_location() != libc::EINTR {
                    return false;
                }
            }
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
    }

    /// The descriptors the forked child writes `0` to, to join the group.
    pub(super) fn join_fds(&self) -> Vec<RawFd> {
        self.procs.iter().map(AsRawFd::as_raw_fd).collect()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The last process's namespace may still be ending: a group that
        // holds a task cannot be removed yet, so it is tried for a while.
        for folder in &self.folders {
            for _ in 0..100 {
                if std::fs::remove_dir(folder).is_ok() || !folder.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// Join the groups whose `cgroup.procs` are open as `fds` (in a forked
/// child: system calls only).
pub(super) fn join(fds: &[RawFd]) -> std::io::Result<()> {
    for fd in fds {
        // SAFETY: writing a byte we own to a descriptor the host opened.
        if unsafe { libc::write(*fd, b"0".as_ptr().cast(), 1) } != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
