//! The life of a plugin process: started by one thread that lives as long
//! as the host, in a session of its own, ended with the host, and ended
//! with everything it started.
//!
//! - `PR_SET_PDEATHSIG` fires when the *thread* that forked a process ends,
//!   so every plugin process is forked by one spawner thread that never
//!   ends ([`spawn`]): the process then dies with the host, and only then.
//! - A confined process runs in its own PID namespace, seen through its
//!   keeper (`child`): killing the keeper ends the namespace's init, and
//!   the kernel then ends everything in the namespace, whatever forked,
//!   `setsid`ed or stopped. Ending it needs nothing more.
//! - An unconfined process is a child subreaper (`PR_SET_CHILD_SUBREAPER`):
//!   what it starts and abandons is reparented to it rather than to init,
//!   so the whole tree stays below it while it lives, and
//!   [`PluginProcess::end`] finds it through `/proc`, stops it first
//!   (`SIGSTOP`, so nothing forks while it is gathered), then kills it and
//!   the process group.

use super::child::Plan;
use super::limits::ProcessSlot;
use crate::model::sync::lock;
use std::collections::{HashMap, HashSet};
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

/// A request to the spawner thread.
type Job = (Command, mpsc::SyncSender<io::Result<Child>>);

/// Start `command`, prepared by [`prepare`], on the spawner thread.
pub(super) fn spawn(
    command: Command,
    slot: ProcessSlot,
    tmp: Option<tempfile::TempDir>,
    namespaced: bool,
    group: Option<std::sync::Arc<super::cgroup::Cgroup>>,
) -> io::Result<PluginProcess> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("yohost-spawner".into())
            .spawn(move || {
                while let Ok((mut command, reply)) = inbox.recv() {
                    let _ = reply.send(command.spawn());
                }
            });
        if let Err(e) = started {
            tracing::error!("cannot start the thread that starts plugin processes: {e}");
        }
        Mutex::new(jobs)
    });
    let (reply, answer) = mpsc::sync_channel(1);
    let sent = lock(spawner).send((command, reply));
    sent.map_err(|_| io::Error::other("the thread that starts plugin processes is gone"))?;
    let child = answer
        .recv()
        .map_err(|_| io::Error::other("the thread that starts plugin processes is gone"))??;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    Ok(PluginProcess {
        child,
        pid,
        namespaced,
        _group: group,
        _slot: slot,
        _tmp: tmp,
    })
}

/// Set what the process must be between `fork` and `exec`: the steps of
/// `plan` (`child`).
pub(super) fn prepare(command: &mut Command, mut plan: Plan) {
    // SAFETY: the closure runs in the forked child before `exec` and makes
    // only system calls: everything the plan applies was made before the
    // fork.
    unsafe {
        command.pre_exec(move || plan.apply());
    }
}

/// A running plugin process, the leader of its own session and process
/// group. A confined process is seen through its keeper (`child`), whose
/// end ends its PID namespace. Its private temporary folder is removed, and
/// its place in the process limits given back, once it has ended.
#[derive(Debug)]
pub struct PluginProcess {
    child: Child,
    pid: libc::pid_t,
    /// In a PID namespace of its own, which ends with its keeper.
    namespaced: bool,
    /// Its plugin's control group, kept while it runs.
    _group: Option<std::sync::Arc<super::cgroup::Cgroup>>,
    _slot: ProcessSlot,
    _tmp: Option<tempfile::TempDir>,
}

impl PluginProcess {
    /// The process itself, for its pipes.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Whether the process has exited. It is not reaped, so its process
    /// group's id stays its own until [`PluginProcess::end`].
    pub fn has_exited(&self) -> bool {
        // SAFETY: `waitid` writes into the zeroed `siginfo_t` we own.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let polled = libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            polled != 0 || info.si_pid() != 0
        }
    }

    /// End the process and everything it started: its tree (stopped, then
    /// killed) and its process group. Returns how it ended, once; `None`
    /// when it was already reaped.
    pub fn end(&mut self) -> Option<ExitStatus> {
        if !self.namespaced {
            kill_tree(self.pid);
        }
        // SAFETY: signalling the process group this process leads; the
        // group's id stays ours until the leader is reaped below.
        unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        self.child.wait().ok()
    }
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        self.end();
    }
}

/// Stop every process below `root`, until no new one appears, then kill
/// them all.
fn kill_tree(root: libc::pid_t) {
    let mut stopped = HashSet::new();
    // Each pass stops what it finds; a process forked before it was
    // stopped shows up in the next pass. Bounded, in case of a fork bomb:
    // the process group kill after it takes what is left in the group.
    for _ in 0..16 {
        let found: Vec<libc::pid_t> = descendants(root)
            .into_iter()
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if found.is_empty() {
            break;
        }
        for pid in found {
            // SAFETY: signalling a process found below our own child.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
            stopped.insert(pid);
        }
    }
    for pid in stopped {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Every process below `root`, read from `/proc/*/stat`.
fn descendants(root: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Some(parent) = parent_of(pid) {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            found.push(child);
            next.push(child);
        }
    }
    found
}

/// The parent of `pid`: the fourth field of `/proc/<pid>/stat`, after the
/// command name in parentheses (which may itself hold spaces and `)`).
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}
