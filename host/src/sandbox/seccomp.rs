//! The seccomp filter of a plugin process: the system calls the kernel
//! refuses it whatever its capabilities, built with `seccompiler` before the
//! process is forked and applied last, just before `exec`.
//!
//! The filter allows what it does not name. It refuses (`EPERM`):
//! - sockets beyond the network grant ([`SocketPolicy`]): with no network,
//!   every `socket` (a `socketpair` of Unix sockets, which child processes'
//!   pipes use, stays); through the host's proxy, TCP over IPv4 and IPv6
//!   only; with any network, no raw or packet sockets, no MPTCP (which the
//!   kernel's TCP port rules do not see) and no netlink but routing;
//! - device nodes (`mknod` of a character or block device);
//! - pushing input into a terminal (`TIOCSTI`, `TIOCLINUX`);
//! - new namespaces and mounts (`unshare`, `setns`, `clone` with a
//!   `CLONE_NEW*` flag, `mount` and the new mount API, `chroot`);
//! - the kernel keyring, `ptrace` and other processes' memory, modules,
//!   `bpf`, `perf_event_open`, `userfaultfd`, the clock, the host name,
//!   `syslog` (the kernel log), swap, reboot, file handles
//!   (`open_by_handle_at`), quotas and accounting.
//!
//! `clone3` and `io_uring` fail with `ENOSYS`, as on a kernel without them:
//! their arguments (a struct in memory, a ring of requests) are beyond a
//! filter's reach, and the C library and libuv then fall back to `clone`
//! and plain system calls, which the filter sees.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule,
};
use std::collections::BTreeMap;

/// Which sockets a plugin process may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketPolicy {
    /// None at all (`network = false`, and every check).
    None,
    /// TCP over IPv4 or IPv6 only: the kernel's port rules then allow
    /// only the host's proxy (a list of hosts).
    TcpOnly,
    /// Internet and Unix sockets (`network = true`), without raw or packet
    /// sockets, MPTCP, or netlink beyond routing.
    Internet,
}

/// The two filters of a plugin process, compiled: the refusals (`EPERM`)
/// and the calls that fail as absent (`ENOSYS`).
#[derive(Debug, Clone)]
pub(super) struct Filters {
    pub refused: BpfProgram,
    pub absent: BpfProgram,
}

/// Compile the filters for `sockets`.
pub(super) fn filters(sockets: SocketPolicy) -> Result<Filters, String> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| format!("no seccomp filter for this processor: {e}"))?;
    let compile = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32| {
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .and_then(BpfProgram::try_from)
        .map_err(|e| format!("cannot compile the seccomp filter: {e}"))
    };
    let refused = compile(refusals(sockets).map_err(|e| e.to_string())?, libc::EPERM)?;
    let absent = [libc::SYS_clone3, libc::SYS_io_uring_setup]
        .into_iter()
        .map(|call| (call, Vec::new()))
        .collect();
    Ok(Filters {
        refused,
        absent: compile(absent, libc::ENOSYS)?,
    })
}

/// Apply `filters` to the calling thread (a forked child about to `exec`).
/// `no_new_privs` must already be set.
pub(super) fn apply(filters: &Filters) -> std::io::Result<()> {
    for program in [&filters.absent, &filters.refused] {
        seccompiler::apply_filter(program)
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
    }
    Ok(())
}

/// A condition on argument `arg`.
fn arg(arg: u8, op: Op, value: u64) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(arg, Len::Dword, op, value)
}

/// A rule of these conditions, all of which must hold.
fn all(
    conditions: Vec<Result<SeccompCondition, seccompiler::BackendError>>,
) -> Result<SeccompRule, seccompiler::BackendError> {
    SeccompRule::new(conditions.into_iter().collect::<Result<_, _>>()?)
}

/// Every call the filter refuses, and when.
fn refusals(
    sockets: SocketPolicy,
) -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::BackendError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in ALWAYS_REFUSED {
        rules.insert(*call, Vec::new());
    }
    // Device nodes; FIFOs and plain files stay.
    let devices = |mode_arg| -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        [libc::S_IFCHR, libc::S_IFBLK]
            .into_iter()
            .map(|kind| {
                all(vec![arg(
                    mode_arg,
                    Op::MaskedEq(u64::from(libc::S_IFMT)),
                    u64::from(kind),
                )])
            })
            .collect()
    };
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_mknod, devices(1)?);
    rules.insert(libc::SYS_mknodat, devices(2)?);
    rules.insert(
        libc::SYS_ioctl,
        [libc::TIOCSTI, libc::TIOCLINUX]
            .into_iter()
            .map(|request| all(vec![arg(1, Op::Eq, request)]))
            .collect::<Result<_, _>>()?,
    );
    let namespaces = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWCGROUP,
    ];
    rules.insert(
        libc::SYS_clone,
        namespaces
            .into_iter()
            .map(|flag| all(vec![arg(0, Op::MaskedEq(flag as u64), flag as u64)]))
            .collect::<Result<_, _>>()?,
    );
    let (socket, pair) = socket_rules(sockets)?;
    rules.insert(libc::SYS_socket, socket);
    rules.insert(libc::SYS_socketpair, pair);
    Ok(rules)
}

/// The refusals of `socket` and `socketpair` under `sockets`; an empty
/// list refuses every call.
fn socket_rules(
    sockets: SocketPolicy,
) -> Result<(Vec<SeccompRule>, Vec<SeccompRule>), seccompiler::BackendError> {
    const TYPE_MASK: u64 = 0xf;
    let (inet, inet6, unix, netlink) = (
        libc::AF_INET as u64,
        libc::AF_INET6 as u64,
        libc::AF_UNIX as u64,
        libc::AF_NETLINK as u64,
    );
    // Only Unix socket pairs, whatever the grant.
    let pair = vec![all(vec![arg(0, Op::Ne, unix)])?];
    let socket = match sockets {
        SocketPolicy::None => Vec::new(),
        SocketPolicy::TcpOnly => {
            let mut rules = vec![
                all(vec![arg(0, Op::Ne, inet), arg(0, Op::Ne, inet6)])?,
                // Only the default protocol or TCP: no MPTCP.
                all(vec![
                    arg(2, Op::Ne, 0),
                    arg(2, Op::Ne, libc::IPPROTO_TCP as u64),
                ])?,
            ];
            // Every socket type but a stream.
            for kind in (0..=TYPE_MASK).filter(|k| *k != libc::SOCK_STREAM as u64) {
                rules.push(all(vec![arg(1, Op::MaskedEq(TYPE_MASK), kind)])?);
            }
            rules
        }
        SocketPolicy::Internet => {
            let mut rules = vec![
                all(vec![
                    arg(0, Op::Ne, inet),
                    arg(0, Op::Ne, inet6),
                    arg(0, Op::Ne, unix),
                    arg(0, Op::Ne, netlink),
                ])?,
                all(vec![arg(2, Op::Eq, libc::IPPROTO_MPTCP as u64)])?,
                // Netlink for routes and addresses only (read: without
                // capabilities nothing can be changed through it).
                all(vec![
                    arg(0, Op::Eq, netlink),
                    arg(2, Op::Ne, libc::NETLINK_ROUTE as u64),
                ])?,
            ];
            // `SOCK_PACKET` (10): the obsolete way to packet sockets.
            const SOCK_PACKET: i32 = 10;
            for family in [inet, inet6] {
                for kind in [libc::SOCK_RAW, SOCK_PACKET] {
                    rules.push(all(vec![
                        arg(0, Op::Eq, family),
                        arg(1, Op::MaskedEq(TYPE_MASK), kind as u64),
                    ])?);
                }
            }
            rules
        }
    };
    Ok((socket, pair))
}

/// Calls no plugin process may make, whatever their arguments.
const ALWAYS_REFUSED: &[i64] = &[
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_mount_setattr,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_syslog,
    libc::SYS_vhangup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_socket_policy_compiles() {
        for policy in [
            SocketPolicy::None,
            SocketPolicy::TcpOnly,
            SocketPolicy::Internet,
        ] {
            let filters = filters(policy).unwrap();
            assert!(!filters.refused.is_empty() && !filters.absent.is_empty());
        }
    }
}
