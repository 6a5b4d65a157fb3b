//! What a plugin process becomes between `fork` and `exec`, in order:
//!
//! 1. killed when the host ends (`PR_SET_PDEATHSIG`), a subreaper of what
//!    it starts, the leader of a new session with no controlling terminal
//!    (`setsid`), and every descriptor above 2 closed at `exec` (only the
//!    pipes the host set up on 0, 1 and 2 stay);
//! 2. the first process of a new PID namespace, whose kernel ends every
//!    process in it when the first one ends: the forked child unshares the
//!    namespace (with a user namespace of its own uid when it is not root),
//!    forks again and stays behind as the *keeper*, which only waits and
//!    exits as the first process did. The host sees the keeper: killing it
//!    kills the first process (its parent-death signal), and with it the
//!    namespace. Processes outside the namespace, the host among them, have
//!    no pid inside it: nothing in it can signal, limit, renice or trace
//!    them;
//! 3. without capabilities in any set (bounding, permitted, effective,
//!    inheritable, ambient) and with `no_new_privs`, so that root inside is
//!    an ordinary user and no setuid program gives privileges back;
//! 4. under the Landlock ruleset;
//! 5. under the seccomp filters, last.
//!
//! Everything a step needs is made before the fork: the code here makes
//! system calls only.

use super::seccomp::{self, Filters};
use landlock::RulesetCreated;
use std::io;

/// A step of [`Plan::apply`], named in a probe's failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Step {
    Session = 1,
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
            ruleset
                .restrict_self()
                .map_err(|_| (Step::Landlock, io::Error::from_raw_os_error(libc::EPERM)))?;
        }
        seccomp::apply(&confined.filters).map_err(at(Step::Seccomp))
    }
}

/// `Err` with the errno when `result` is negative.
fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Make the calling process the first of a new PID namespace (step 2):
/// returns in that first process; the process that called it stays behind
/// as the keeper and never returns.
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
        // The first process reads EOF on `alive` if the keeper ended before
        // it armed its parent-death signal.
        let mut alive = [0; 2];
        check(libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC))?;
        let first = check(libc::fork())?;
        if first > 0 {
            keep(first, alive);
        }
        libc::close(alive[1]);
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
        Ok(())
    }
}

/// The keeper: holds its copy of the write end of `alive` open while it
/// lives, closes every other descriptor (the host's pipes, and the one the
/// host reads the `exec`'s outcome from, so that the host hears of the
/// first process's `exec` alone), waits for the namespace's first process
/// `first`, and ends as it ended.
fn keep(first: libc::pid_t, alive: [libc::c_int; 2]) -> ! {
    // SAFETY: system calls on the keeper itself.
    unsafe {
        let [read, write] = alive;
        libc::close(read);
        let write_end = write as u32;
        if let Some(below) = write_end.checked_sub(1) {
            libc::syscall(libc::SYS_close_range, 0u32, below, 0u32);
        }
        libc::syscall(libc::SYS_close_range, write_end + 1, u32::MAX, 0u32);
        let mut status = 0;
        let mut waited;
        loop {
            waited = libc::waitpid(first, &mut status, 0);
            if waited == first || (waited < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        if waited == first && libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(if waited == first {
            libc::WEXITSTATUS(status)
        } else {
            1
        })
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
