//! What a plugin process becomes between `fork` and `exec`, in order:
//!
//! 1. killed when the host ends (`PR_SET_PDEATHSIG`), a subreaper of what
//!    it starts, the leader of a new session with no controlling terminal
//!    (`setsid`), in its plugin's control group where the host made one
//!    (`cgroup`), and every descriptor above 2 closed at `exec` (only the
//!    pipes the host set up on 0, 1 and 2 stay);
//! 2. the second process of a new PID namespace, whose kernel ends every
//!    process in it when the first one ends: the forked child unshares the
//!    namespace (with a user namespace of its own uid when it is not root),
//!    forks the namespace's *init*, and stays behind as the *keeper*, which
//!    only waits and exits as the program did. The init forks the program,
//!    reaps what is orphaned, and exits when the program ends. The host
//!    sees the keeper: killing it kills the init (its parent-death signal),
//!    and with it the namespace. Processes outside the namespace, the host
//!    among them, have no pid inside it: nothing in it can signal, limit,
//!    renice or trace them;
//! 3. without capabilities in any set (bounding, permitted, effective,
//!    inheritable, ambient) and with `no_new_privs`, so that root inside is
//!    an ordinary user and no setuid program gives privileges back;
//! 4. under the Landlock ruleset, which the program's own `/proc/self` (its
//!    status, limits, cgroup) joins for reading here, as only this process
//!    can open it;
//! 5. under the seccomp filters, last.
//!
//! Everything a step needs is made before the fork: the code here makes
//! system calls only.

use super::seccomp::{self, Filters};
use landlock::{AccessFs, PathBeneath, RulesetCreated, RulesetCreatedAttr};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// A step of [`Plan::apply`], named in a probe's failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Step {
    Session = 1,
    Cgroup,
    Descriptors,
    Namespace,
    Capabilities,
    Landlock,
    Seccomp,
}

impl Step {
    /// The layer, as a person reads it.
    pub(super) fn layer(self) -> &'static str {
        match self {
            Step::Session => "a new session, killed with the host",
            Step::Cgroup => "joining the plugin's control group",
            Step::Descriptors => "closing inherited descriptors",
            Step::Namespace => {
                "a PID namespace (user namespaces are needed where the host is not root)"
            }
            Step::Capabilities => "dropping every capability",
            Step::Landlock => "the Landlock ruleset",
            Step::Seccomp => "the seccomp filter",
        }
    }

    /// The step a probe's exit code names.
    pub(super) fn from_code(code: i32) -> Option<Step> {
        [
            Step::Session,
            Step::Cgroup,
            Step::Descriptors,
            Step::Namespace,
            Step::Capabilities,
            Step::Landlock,
            Step::Seccomp,
        ]
        .into_iter()
        .find(|s| PROBE_CODE + *s as i32 == code)
    }
}

/// A probe's exit code for a failed step: this plus the step.
pub(super) const PROBE_CODE: i32 = 100;

/// What one plugin process becomes before `exec`.
pub(super) struct Plan {
    /// The host's pid, to see that it did not end before the fork.
    pub host: libc::pid_t,
    /// The kernel's layers (steps 2 to 5); `None` for an unconfined
    /// process, which gets step 1 only.
    pub confined: Option<Confined>,
    /// A probe exits with [`PROBE_CODE`] plus the failed step, rather than
    /// failing the spawn with an errno alone.
    pub probe: bool,
    /// The `cgroup.procs` of the plugin's control group, open; empty where
    /// the host has none.
    pub cgroup: Vec<std::os::fd::RawFd>,
}

/// The kernel's layers of a confined process.
pub(super) struct Confined {
    /// Taken when applied.
    pub ruleset: Option<RulesetCreated>,
    pub filters: Filters,
}

impl Plan {
    /// Apply the plan in the forked child: `Err` fails the spawn (or, for
    /// a probe, exits naming the step).
    pub fn apply(&mut self) -> io::Result<()> {
        match self.steps() {
            Ok(()) => Ok(()),
            Err((step, _)) if self.probe => {
                // SAFETY: ending the forked child at once, as a probe does.
                unsafe { libc::_exit(PROBE_CODE + step as i32) }
            }
            Err((_, e)) => Err(e),
        }
    }

    fn steps(&mut self) -> Result<(), (Step, io::Error)> {
        let at = |step| move |e| (step, e);
        // SAFETY (for each block below): system calls on the calling
        // process, with arguments it owns.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))
                .and_then(|_| check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)))
                .map_err(at(Step::Session))?;
            // The host ended between the fork and the prctl.
            if libc::getppid() != self.host {
                return Err((Step::Session, io::Error::from_raw_os_error(libc::ESRCH)));
            }
            check(libc::setsid()).map_err(at(Step::Session))?;
            super::cgroup::join(&self.cgroup).map_err(at(Step::Cgroup))?;
            check(libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ) as libc::c_int)
            .map_err(at(Step::Descriptors))?;
        }
        let Some(confined) = self.confined.as_mut() else {
            return Ok(());
        };
        enter_pid_namespace().map_err(at(Step::Namespace))?;
        drop_capabilities().map_err(at(Step::Capabilities))?;
        if let Some(ruleset) = confined.ruleset.take() {
            with_own_proc(ruleset)
                .and_then(|ruleset| ruleset.restrict_self().map_err(drop))
                .map_err(|()| (Step::Landlock, io::Error::from_raw_os_error(libc::EPERM)))?;
        }
        seccomp::apply(&confined.filters).map_err(at(Step::Seccomp))
    }
}

/// `ruleset`, letting the calling process read its own `/proc/self` (the
/// process that goes on to `exec`: `/proc/self` leads to its own pid's
/// folder, not the host's or another plugin's). Without `/proc`, nothing
/// is added.
fn with_own_proc(ruleset: RulesetCreated) -> Result<RulesetCreated, ()> {
    // SAFETY: `open` of a static path; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            c"/proc/self".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Ok(ruleset);
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let own = unsafe { OwnedFd::from_raw_fd(fd) };
    ruleset
        .add_rule(PathBeneath::new(
            own,
            AccessFs::ReadFile | AccessFs::ReadDir,
        ))
        .map_err(drop)
}

/// `Err` with the errno when `result` is negative.
fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Put the calling process's program in a new PID namespace (step 2):
/// returns in the process that goes on to `exec`, the namespace's second.
/// The process that called it stays behind outside the namespace as the
/// *keeper*, and the namespace's first process is its *init*; neither
/// returns.
///
/// The program is not the namespace's first process because the kernel
/// ignores the signals a first process sends itself without a handler:
/// `abort()` (Node's out-of-memory end) would turn into another crash.
fn enter_pid_namespace() -> io::Result<()> {
    // SAFETY: system calls on the calling (forked, single-threaded)
    // process; the buffers written are on its stack.
    unsafe {
        let uid = libc::geteuid();
        let gid = libc::getegid();
        if libc::unshare(libc::CLONE_NEWPID) != 0 {
            // Without privilege over PID namespaces (an ordinary user, or
            // root in a container without CAP_SYS_ADMIN): a user namespace
            // first, mapping the process's own ids, so files keep their
            // owners.
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID))?;
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_id_map(c"/proc/self/uid_map", uid)?;
            write_id_map(c"/proc/self/gid_map", gid)?;
        }
        // The init reads EOF on `alive` if the keeper ended before it armed
        // its parent-death signal; it writes the program's wait status on
        // `status` for the keeper to end as the program did.
        let mut alive = [0; 2];
        check(libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC))?;
        let mut status = [0; 2];
        check(libc::pipe2(status.as_mut_ptr(), libc::O_CLOEXEC))?;
        let first = check(libc::fork())?;
        if first > 0 {
            libc::close(alive[0]);
            libc::close(status[1]);
            keep(first, alive[1], status[0]);
        }
        libc::close(alive[1]);
        libc::close(status[0]);
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        let mut byte = 0u8;
        let mut poll = libc::pollfd {
            fd: alive[0],
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut poll, 1, 0) != 0
            && libc::read(alive[0], (&mut byte as *mut u8).cast(), 1) == 0
        {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        libc::close(alive[0]);
        let program = check(libc::fork())?;
        if program > 0 {
            init(program, status[1]);
        }
        libc::close(status[1]);
        Ok(())
    }
}

/// Close every descriptor of the calling process but `kept`.
///
/// # Safety
/// Called in a forked child: system calls only.
unsafe fn close_all_but(kept: &mut [libc::c_int]) {
    kept.sort_unstable();
    let mut from = 0u32;
    for fd in kept.iter().map(|fd| *fd as u32) {
        if let Some(below) = fd.checked_sub(1).filter(|below| *below >= from) {
            libc::syscall(libc::SYS_close_range, from, below, 0u32);
        }
        from = fd + 1;
    }
    libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32);
}

/// The namespace's init: holds none of the host's descriptors (so that the
/// host hears of the program's `exec`, and of the end of its output, from
/// the program alone), reaps every process orphaned in the namespace until
/// `program` ends, writes its wait status on `status` and exits, which
/// ends every other process in the namespace.
fn init(program: libc::pid_t, status: libc::c_int) -> ! {
    // SAFETY: system calls on the init itself.
    unsafe {
        close_all_but(&mut [status]);
        let mut ended = 0;
        loop {
            let waited = libc::waitpid(-1, &mut ended, 0);
            if waited == program || (waited < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        libc::write(status, (&ended as *const libc::c_int).cast(), 4);
        libc::_exit(0)
    }
}

/// The keeper: holds its copy of the write end of `alive` open while it
/// lives, closes every other descriptor (as the init does), waits for the
/// namespace's init `first`, and ends as the program did (the status the
/// init wrote on `status`), or as the init did if it wrote none.
fn keep(first: libc::pid_t, alive: libc::c_int, status: libc::c_int) -> ! {
    // SAFETY: system calls on the keeper itself.
    unsafe {
        close_all_but(&mut [alive, status]);
        let mut ended = 0;
        let mut waited;
        loop {
            waited = libc::waitpid(first, &mut ended, 0);
            if waited == first || (waited < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        let mut program = 0;
        if libc::read(status, (&mut program as *mut libc::c_int).cast(), 4) == 4 {
            ended = program;
        } else if waited != first {
            libc::_exit(1);
        }
        if libc::WIFSIGNALED(ended) {
            let signal = libc::WTERMSIG(ended);
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            libc::signal(signal, libc::SIG_DFL);
            let mut only = std::mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut only);
            libc::sigaddset(&mut only, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(libc::WEXITSTATUS(ended))
    }
}

/// Write `text` to the `/proc` file `path`.
///
/// # Safety
/// Called in a forked child: system calls only.
unsafe fn write_proc(path: &std::ffi::CStr, text: &[u8]) -> io::Result<()> {
    let fd = check(libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC))?;
    let written = libc::write(fd, text.as_ptr().cast(), text.len());
    libc::close(fd);
    if written == text.len() as isize {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Map `id` to itself in the id map `path` of a new user namespace.
///
/// # Safety
/// Called in a forked child: system calls only (the line is formatted on
/// the stack).
unsafe fn write_id_map(path: &std::ffi::CStr, id: u32) -> io::Result<()> {
    // "<id> <id> 1", without allocating.
    let mut line = [0u8; 32];
    let mut len = 0;
    for _ in 0..2 {
        len += decimal(id, &mut line[len..]);
        line[len] = b' ';
        len += 1;
    }
    line[len] = b'1';
    write_proc(path, &line[..=len])
}

/// Write `n` in decimal at the start of `out`; its length.
fn decimal(mut n: u32, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 10];
    let mut count = 0;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..count {
        out[i] = digits[count - 1 - i];
    }
    count
}

/// Step 3: no capability in any set, and `no_new_privs`.
fn drop_capabilities() -> io::Result<()> {
    use caps::CapSet;
    let failed = |_| io::Error::from_raw_os_error(libc::EPERM);
    caps::clear(None, CapSet::Bounding).map_err(failed)?;
    // Capabilities this crate does not know of yet are dropped by number.
    for cap in 0..64 {
        // SAFETY: prctl on the calling process.
        unsafe {
            if libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) == 1
                && libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    for set in [
        CapSet::Ambient,
        CapSet::Inheritable,
        CapSet::Effective,
        CapSet::Permitted,
    ] {
        caps::clear(None, set).map_err(failed)?;
    }
    // SAFETY: prctl on the calling process.
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_map_line_maps_the_id_to_itself() {
        let mut out = [0u8; 10];
        for n in [0u32, 7, 1000, u32::MAX] {
            let len = decimal(n, &mut out);
            assert_eq!(std::str::from_utf8(&out[..len]).unwrap(), n.to_string());
        }
    }

    #[test]
    fn a_probe_code_names_its_step() {
        for step in [Step::Session, Step::Namespace, Step::Seccomp] {
            assert_eq!(Step::from_code(PROBE_CODE + step as i32), Some(step));
        }
        assert_eq!(Step::from_code(0), None);
    }
}
