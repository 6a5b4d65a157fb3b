//! The Landlock ruleset of a plugin process: what the kernel lets it read,
//! write, execute, connect to and signal. A write grant allows every file
//! operation but making device nodes, which no plugin process may make.

use crate::load::grants::Access;
use landlock::{
    Access as _, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError, Scope, ABI,
};
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Which TCP connections a plugin process may open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpAccess {
    /// Any: `network = true`, not filtered.
    Any,
    /// Only to these ports (none: no connection).
    Ports(Vec<u16>),
}

/// The Landlock ABI whose features a plugin process needs: files (with
/// truncation and device ioctls), TCP ports, and scoped signals and
/// abstract Unix sockets (Linux 6.12).
const NEEDED: ABI = ABI::V6;

/// Folders every plugin process may read and execute beneath: the system's
/// programs and libraries (Node's, a shell's, `git`'s).
const RUNTIME_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/nix/store",
];

/// Files and folders of `/etc` a program needs to start, to resolve names
/// and certificates, and to tell the time zone, a file's media type and
/// the system's release (which common MCP servers and pip read at start);
/// none holds a secret. The rest
/// of `/etc` (`passwd`, `shadow`, the host's configuration) stays closed.
const SYSTEM_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/mime.types",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/debian_version",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/host.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/gitconfig",
];

/// Devices a plugin process may read and write.
const OPEN_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Devices a plugin process may only read.
const READ_DEVICES: &[&str] = &["/dev/random", "/dev/urandom"];

/// Whether this kernel can confine a plugin process: `Err` says what it
/// lacks. Checked once per process.
pub fn support() -> Result<(), String> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            needed()
                .and_then(|ruleset| ruleset.create())
                .map(drop)
                .map_err(|e| {
                    format!("the kernel cannot confine plugin processes with Landlock ABI 6 (Linux 6.12 or newer): {e}")
                })
        })
        .clone()
}

/// A ruleset that handles everything a plugin process is confined in,
/// failing unless the kernel enforces all of it.
fn needed() -> Result<Ruleset, RulesetError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(NEEDED))?
        .handle_access(AccessNet::from_all(NEEDED))?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
}

/// The ruleset of a plugin process, created and filled in the host, so
/// that the process only applies it between `fork` and `exec`: `read` may
/// be read (and executed), `scratch` (its private temporary folder) read
/// and written, each grant as it allows (through the handle it was opened
/// as; a granted file, marked so, gets a file's rights only), TCP as `tcp`
/// says.
pub(super) fn ruleset<'a>(
    read: impl Iterator<Item = &'a PathBuf>,
    scratch: &Path,
    grants: impl Iterator<Item = (BorrowedFd<'a>, Access, bool)>,
    tcp: &TcpAccess,
) -> Result<RulesetCreated, RulesetError> {
    let devices = AccessFs::MakeChar | AccessFs::MakeBlock;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(NEEDED))?;
    if *tcp != TcpAccess::Any {
        ruleset = ruleset.handle_access(AccessNet::from_all(NEEDED))?;
    }
    let mut created = ruleset
        .scope(Scope::Signal | Scope::AbstractUnixSocket)?
        .create()?;
    let reads = AccessFs::from_read(NEEDED);
    let writes = AccessFs::from_all(NEEDED) & !devices;
    let system = RUNTIME_DIRS.iter().chain(SYSTEM_FILES).chain(READ_DEVICES);
    for path in system.map(Path::new).chain(read.map(PathBuf::as_path)) {
        created = add(created, path, reads)?;
    }
    for path in OPEN_DEVICES.iter().map(Path::new) {
        created = add(created, path, AccessFs::from_file(NEEDED))?;
    }
    created = add(created, scratch, writes)?;
    for (handle, access, is_file) in grants {
        let access = if access == Access::Write {
            writes
        } else {
            reads
        };
        // A granted file gets only the rights that apply to a file.
        let access = if is_file {
            access & AccessFs::from_file(NEEDED)
        } else {
            access
        };
        created = created.add_rule(PathBeneath::new(handle, access))?;
    }
    if let TcpAccess::Ports(ports) = tcp {
        for port in ports {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
        }
    }
    Ok(created)
}

/// Allow `access` beneath `path` (only the rights that apply to a file,
/// when it is one); a path that cannot be opened gets no rule.
fn add(
    ruleset: RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<RulesetCreated, RulesetError> {
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    let access = match std::fs::metadata(path) {
        Ok(meta) if !meta.is_dir() => access & AccessFs::from_file(NEEDED),
        _ => access,
    };
    ruleset.add_rule(PathBeneath::new(fd, access))
}
