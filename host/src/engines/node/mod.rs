//! TypeScript and JavaScript plugins in a real Node process, for plugins
//! that need all of Node (`child_process`, `net`, npm packages with native
//! parts). `engine = "node"` in `plugin.toml` picks it.
//!
//! One module per concern:
//! - `framing`: length-prefixed frames on stdio, bounded;
//! - `protocol`: the messages host and bootstrap exchange;
//! - `launch`: what a process is started with, and why a start fails;
//! - `process`: one `node` process, its threads, calls and failures;
//! - `plugin`: the host's [`Plugin`](crate::Plugin), which starts a new
//!   process for the next run after one was killed or died.
//!
//! These modules are the crate's own; other crates use [`load`],
//! [`load_with`] and [`node`].
//!
//! Inside Node, a bootstrap (`bootstrap.mjs`, embedded) runs the same
//! [`Flavor`] modules the embedded engine runs, so a flavor's shape maps a
//! plugin the same way on both. A flavor's prelude runs too, but may only
//! add globals: Node's own (`process`, `Buffer`, `URL`, ...) are put back
//! after it. TypeScript is stripped by the host
//! (`transpile`) when the bootstrap asks for
//! a file's source.
//!
//! The sandbox is Node's permission model (`permission_flags`): the
//! plugin's folder and its `read` grants may be read, its `write` grants
//! written, child processes only with `exec`, no worker threads, no native
//! addons; the environment holds only the granted variables; the heap is
//! capped at `limits.memory_mib`. Node 20's permission model does not
//! cover the network: a plugin on Node can open connections whatever its
//! manifest says.

pub(crate) mod framing;
pub(crate) mod launch;
pub(crate) mod plugin;
pub(crate) mod process;
pub(crate) mod protocol;
mod sources;

use super::js::modules::gather_with_needs;
use super::js::services::FileOp;
use super::js::{glue, Flavor};
use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::grants::{Access, Grants};
use crate::load::loaded::Loaded;
use crate::sandbox::ProcessSandbox;
use launch::{Launch, StartError};
use process::Process;
use protocol::{FlavorSources, ServiceSettings, ToNode};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The bootstrap Node runs (as `--input-type=module -e`), with what it
/// shares with the embedded engine's driver appended (function
/// declarations, hoisted): `show` and `describe` of the [`glue`], the hook
/// calls (`hookCalls`), and its file service (`nodeFiles`).
const BOOTSTRAP: &str = concat!(
    include_str!("bootstrap.mjs"),
    "\n",
    include_str!("../js/describe.js"),
    include_str!("../js/hook_calls.js"),
    include_str!("files.js"),
);

/// The oldest Node major version the engine runs on.
pub const MIN_NODE_MAJOR: u32 = 20;

/// The `node` on PATH, as found once per host process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeVersion {
    /// Major, minor and patch.
    pub version: (u32, u32, u32),
}

impl NodeVersion {
    /// Read `node --version` output (`v20.11.1`).
    pub fn parse(text: &str) -> Option<NodeVersion> {
        let mut parts = text.trim().strip_prefix('v')?.splitn(3, '.');
        let mut next = || parts.next()?.parse::<u32>().ok();
        Some(NodeVersion {
            version: (next()?, next()?, next()?),
        })
    }

    /// The flag that turns the permission model on: `--permission` from
    /// Node 22, `--experimental-permission` before.
    pub fn permission_flag(&self) -> &'static str {
        if self.version.0 >= 22 {
            "--permission"
        } else {
            "--experimental-permission"
        }
    }

    /// Whether `--disable-warning` exists (20.11 and later).
    fn disables_warnings(&self) -> bool {
        self.version >= (20, 11, 0)
    }
}

/// Why the Node engine cannot run here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NodeMissing {
    /// No `node` on PATH, or it did not answer `--version`.
    #[error("it runs on Node.js, and no `node` was found on PATH: installing Node.js {MIN_NODE_MAJOR} or newer would load it")]
    NotFound,
    /// A `node` too old for the engine.
    #[error("it runs on Node.js {MIN_NODE_MAJOR} or newer, and the `node` on PATH is {0}: installing a newer Node.js would load it")]
    TooOld(String),
}

/// The `node` on PATH, checked once: its version, or why it cannot serve.
pub fn node() -> Result<&'static NodeVersion, NodeMissing> {
    static FOUND: OnceLock<Result<NodeVersion, NodeMissing>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let output = std::process::Command::new("node")
                .arg("--version")
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|_| NodeMissing::NotFound)?;
            let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
            let version = NodeVersion::parse(&text).ok_or(NodeMissing::NotFound)?;
            if version.version.0 < MIN_NODE_MAJOR {
                return Err(NodeMissing::TooOld(text));
            }
            Ok(version)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The `node` that `PATH` names, symlinks resolved: the process starts
/// this very file.
fn node_executable() -> Result<PathBuf, NodeMissing> {
    let path = std::env::var_os("PATH").ok_or(NodeMissing::NotFound)?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("node"))
        .find_map(|candidate| {
            let real = candidate.canonicalize().ok()?;
            let meta = real.metadata().ok()?;
            use std::os::unix::fs::PermissionsExt;
            (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(real)
        })
        .ok_or(NodeMissing::NotFound)
}

/// What the kernel sandbox must let `node` read besides the system's
/// folders: its own folder and the `lib` beside it, for a Node installed
/// elsewhere (under the user's home, say).
fn runtime_dirs(node: &std::path::Path) -> Vec<PathBuf> {
    let Some(bin) = node.parent() else {
        return Vec::new();
    };
    let mut dirs = vec![bin.to_path_buf()];
    if let Some(prefix) = bin.parent() {
        dirs.push(prefix.join("lib"));
    }
    dirs
}

/// Why the permission flags cannot express a grant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the grant {0} holds a comma, which Node's permission flags read as a separator")]
pub(crate) struct UnsayableGrant(pub(crate) PathBuf);

/// The permission model's flags: `read` may be read (the plugin's folder,
/// its entry, its `read` and `write` grants, resolved), `write` written;
/// child processes only with `exec`. Worker threads, native addons and WASI
/// stay off.
pub(crate) fn permission_flags(
    version: &NodeVersion,
    read: &[PathBuf],
    write: &[PathBuf],
    exec: bool,
) -> Result<Vec<OsString>, UnsayableGrant> {
    let mut flags = vec![OsString::from(version.permission_flag())];
    let grants = read
        .iter()
        .map(|dir| ("--allow-fs-read", dir))
        .chain(write.iter().map(|dir| ("--allow-fs-write", dir)));
    for (flag, dir) in grants {
        if dir.as_os_str().as_encoded_bytes().contains(&b',') {
            return Err(UnsayableGrant(dir.clone()));
        }
        let mut arg = OsString::from(flag);
        arg.push("=");
        arg.push(dir);
        flags.push(arg);
    }
    if exec {
        flags.push("--allow-child-process".into());
    }
    Ok(flags)
}

/// Load a yohost plugin on Node.
pub fn load(candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
    glue::load_yohost(load_with, candidate, grants)
}

/// Load a plugin of `flavor` on Node: start its process and load it there.
/// `settings` is what the flavor's shape receives besides the module.
/// `entries` are the modules to load, in order (see the embedded
/// engine's [`load_with`](crate::engines::js::load_with)).
pub fn load_with(
    candidate: &Candidate,
    entries: &[PathBuf],
    flavor: &Flavor,
    settings: &serde_json::Value,
    grants: Grants,
) -> Result<Loaded, LoadError> {
    let path = candidate.entry.clone();
    let refused = |message: String| LoadError::Refused {
        path: path.clone(),
        message,
    };
    let version = node().map_err(|e| refused(e.to_string()))?;
    let sandbox = ProcessSandbox::for_plugin(candidate, &grants).map_err(&refused)?;
    let launch = launch(
        candidate, entries, flavor, settings, &grants, version, sandbox,
    )
    .map_err(refused)?;
    let (process, ready) = Process::start(&launch).map_err(|e| match e {
        StartError::Spawn { .. } => refused(e.to_string()),
        e => LoadError::Invalid {
            path: path.clone(),
            message: e.to_string(),
        },
    })?;
    let mut warnings = launch.sandbox.warnings().to_vec();
    warnings.extend(launch.notes.iter().cloned());
    if candidate.dry_run {
        warnings.push("in a check, its process may not write, start processes or open connections; a run may, within its grants".into());
    }
    let confinement = launch.sandbox.confinement();
    let plugin = Arc::new(plugin::NodePlugin::new(launch, process));
    ready.into_loaded(&path, plugin, warnings, Some(confinement))
}

/// The flavor's built-ins as this plugin imports them: a name it imports
/// from a stand-in for a package the flavor owns, which the stand-in does
/// not export, is bound to `undefined`, as on the embedded engine (and as
/// pi's loader binds it), and said in the warnings returned. Read from the
/// embedded engine's walk of the plugin's modules; a walk that fails
/// leaves the built-ins as they are (Node then names what is missing).
fn builtins_for(
    candidate: &Candidate,
    entries: &[PathBuf],
    flavor: &Flavor,
) -> (Builtins, Vec<String>) {
    let walked = gather_with_needs(
        candidate.base_dir(),
        &candidate.own_paths(),
        entries,
        flavor.served(),
    );
    let (mut sources, warnings) = match walked {
        Ok((set, _)) => (set.sources, set.warnings),
        Err(_) => Default::default(),
    };
    let builtins = flavor
        .builtins
        .iter()
        .map(|b| {
            let source = sources
                .remove(b.specifier)
                .unwrap_or(Cow::Borrowed(b.source));
            (b.specifier, source)
        })
        .collect();
    (builtins, warnings)
}

/// The flavor's built-ins by specifier, as one plugin imports them.
type Builtins = BTreeMap<&'static str, Cow<'static, str>>;

/// How to start the plugin's process.
fn launch(
    candidate: &Candidate,
    entries: &[PathBuf],
    flavor: &Flavor,
    settings: &serde_json::Value,
    grants: &Grants,
    version: &NodeVersion,
    sandbox: ProcessSandbox,
) -> Result<Launch, String> {
    let plugin_dir = candidate
        .base_dir()
        .canonicalize()
        .map_err(|e| format!("{}: {e}", candidate.base_dir().display()))?;
    let real = |file: &PathBuf| {
        file.canonicalize()
            .map_err(|e| format!("{}: {e}", file.display()))
    };
    let entry = real(entries.first().unwrap_or(&candidate.entry))?;
    let also = entries
        .iter()
        .skip(1)
        .map(real)
        .collect::<Result<Vec<_>, _>>()?;
    let capabilities = &candidate.manifest.capabilities;
    let dirs = |access: Access| -> Vec<PathBuf> {
        grants
            .iter()
            .filter(|g| g.access() == access)
            .map(|g| g.real().to_path_buf())
            .collect()
    };
    // What the plugin may read as its own: its folder, or a single file
    // and its directory's `node_modules` (never the whole directory, which
    // holds other plugins).
    let own = candidate.own_paths();
    let mut readable = own.clone();
    if !own.iter().any(|o| entry.starts_with(o)) {
        // The manifest named an entry outside the folder: Node must read it.
        readable.push(entry.clone());
    }
    readable.extend(dirs(Access::Read));
    readable.extend(dirs(Access::Write));
    // A check writes nothing and starts no process, even where a run may.
    let (writable, exec) = match candidate.dry_run {
        true => (Vec::new(), false),
        false => (dirs(Access::Write), capabilities.exec),
    };
    let mut args =
        permission_flags(version, &readable, &writable, exec).map_err(|e| e.to_string())?;
    let memory_mib = candidate.manifest.memory_bytes() / (1024 * 1024);
    args.push(format!("--max-old-space-size={}", memory_mib.max(1)).into());
    args.push("--experimental-vm-modules".into());
    args.push("--experimental-import-meta-resolve".into());
    if version.disables_warnings() {
        args.push("--disable-warning=ExperimentalWarning".into());
    }
    args.extend(["--input-type=module".into(), "-e".into(), BOOTSTRAP.into()]);
    let env = crate::load::data_dir::plugin_env(candidate);
    let node = node_executable().map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| plugin_dir.clone());
    let services = flavor.services.map(|api| ServiceSettings {
        module: api.module,
        relative_to: api.relative_to.dir(&plugin_dir, &cwd),
        cwd: cwd.clone(),
        exec: capabilities.exec,
        lacks: FileOp::lacking_on_node(),
    });
    let (builtins, notes) = builtins_for(candidate, entries, flavor);
    let sources = FlavorSources {
        builtins,
        owned: flavor.owned,
        internals: flavor
            .internals
            .iter()
            .map(|b| (b.specifier, b.source))
            .collect(),
        shape: flavor.shape,
        prelude: flavor.prelude,
    };
    let init = ToNode::Init {
        entry: &entry,
        also: &also,
        plugin_dir: &plugin_dir,
        own: &own,
        settings,
        env: &env,
        flavor: &sources,
        services: services.as_ref(),
        dry_run: candidate.dry_run,
        log_limit: crate::model::limits::MAX_LOG_BYTES,
        reply_limit: crate::model::limits::MAX_REPLY_BYTES,
    }
    .to_bytes();
    Ok(Launch {
        notes,
        runtime: runtime_dirs(&node),
        node,
        args,
        sandbox,
        cwd,
        init,
        own,
        entry,
        default_name: candidate.name.clone(),
        name_is_fixed: candidate.named_by_manifest,
        load_timeout: candidate.manifest.load_timeout(),
        memory_bytes: candidate.manifest.memory_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_the_permission_flag() {
        let v20 = NodeVersion::parse("v20.11.1\n").unwrap();
        assert_eq!(v20.version, (20, 11, 1));
        assert_eq!(v20.permission_flag(), "--experimental-permission");
        assert_eq!(
            NodeVersion::parse("v22.0.0").unwrap().permission_flag(),
            "--permission"
        );
        for junk in ["", "20.1.1", "vx.1.2", "v20.1"] {
            assert_eq!(NodeVersion::parse(junk), None, "{junk}");
        }
    }

    #[test]
    fn flags_grant_the_folder_and_grants_and_exec_only_when_granted() {
        let v = NodeVersion::parse("v20.11.0").unwrap();
        let flags = |exec| {
            let read = ["/p", "/r", "/w"].map(PathBuf::from);
            permission_flags(&v, &read, &[PathBuf::from("/w")], exec).unwrap()
        };
        assert_eq!(
            flags(false),
            [
                "--experimental-permission",
                "--allow-fs-read=/p",
                "--allow-fs-read=/r",
                "--allow-fs-read=/w",
                "--allow-fs-write=/w"
            ]
        );
        assert!(flags(true).contains(&"--allow-child-process".into()));
    }

    #[test]
    fn a_grant_with_a_comma_is_refused_rather_than_widened() {
        // Node would read `/a,/etc` as two paths.
        let v = NodeVersion::parse("v20.11.0").unwrap();
        let hostile = PathBuf::from("/a,/etc");
        assert_eq!(
            permission_flags(&v, std::slice::from_ref(&hostile), &[], false),
            Err(UnsayableGrant(hostile))
        );
    }
}
