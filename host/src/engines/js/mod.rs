//! TypeScript and JavaScript plugins on an embedded engine: QuickJS-NG
//! through `rquickjs`, with types stripped by `oxc`. No Node, no build step,
//! no second process.
//!
//! One module per concern:
//! - `transpile`: TypeScript to JavaScript, errors with file and line;
//! - [`modules`]: the import graph, walked and checked at load (relative
//!   files, npm packages inside the plugin's folder, and built-in modules,
//!   and only names a built-in exports);
//! - `packages`: bare imports resolved from the plugin's `node_modules`
//!   with Node's algorithm;
//! - `commonjs`: CommonJS and JSON files through an interop wrapper;
//! - `runtime`: the QuickJS backend, its sandbox (memory, stack,
//!   interrupts, granted environment) and the thread that owns it;
//! - `services`: files within the manifest's grants, and processes when
//!   granted, for flavors that offer them;
//! - `fetch`: HTTP requests to the hosts `capabilities.network` grants,
//!   for flavors that offer `fetch`;
//! - `crypto`: random bytes and sha2 digests, for flavors that offer
//!   `node:crypto`;
//! - [`watch`]: file watches within the grants, for flavors with file
//!   services;
//! - `plugin`: the host's [`Plugin`](crate::Plugin) over a running instance;
//! - `glue`: what this engine and the Node engine share.
//!
//! Only [`modules`] (for [`Builtin`]) and [`watch`] (for its
//! limits) are public; the other modules are the crate's own.
//!
//! A [`Flavor`] says which built-in modules a plugin may import and how its
//! module becomes hooks. yohost's own is [`YOHOST`]; adapter crates bring
//! theirs (`yohost-adapter-pi`, `yohost-adapter-dsh`) and load with
//! [`load_with`]. The engine knows none of them.

pub(crate) mod commonjs;
pub(crate) mod crypto;
pub(crate) mod fetch;
pub(crate) mod glue;
pub mod modules;
pub(crate) mod node_needs;
pub(crate) mod packages;
pub(crate) mod plugin;
pub(crate) mod positions;
pub(crate) mod runtime;
pub(crate) mod services;
pub(crate) mod transpile;
pub mod watch;

use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::grants::Grants;
use crate::load::loaded::Loaded;
use crate::load::manifest::{EngineChoice, Network};
use crate::sandbox::ProcessSandbox;
use modules::{add_flavor, gather, Builtin, GatherError, Served};
use runtime::{Program, Sandbox};
use services::{DryRun, FileAccess, Services};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How plugins of one ecosystem look to the engine: what they may import,
/// how their module becomes hooks, and which host services they get.
/// Adapters for other plugin APIs are flavors; the engine knows none of them.
///
/// Every module of a flavor is an ES module in plain JavaScript, named by
/// its specifier. A flavor module may import the flavor's `builtins` and
/// `internals` (and nothing else); plugin code may import only `builtins`.
#[derive(Debug, Clone, Copy)]
pub struct Flavor {
    /// The modules plugins may import by bare name. A name here wins over
    /// a package of the same name in the plugin's `node_modules`.
    pub builtins: &'static [Builtin],
    /// Packages the flavor serves whole, by name (`@scope/name`): an import
    /// of one of them, or of a path inside one, that `builtins` does not
    /// list is refused, naming it. It is never taken from the plugin's
    /// `node_modules`, whose copy may be another version than the one the
    /// flavor follows.
    pub owned: &'static [&'static str],
    /// The flavor's own modules, importable only by its other modules: the
    /// shape's parts, code its built-ins share.
    pub internals: &'static [Builtin],
    /// The specifier (in `internals`) of the shape module. Its default
    /// export is a function `(namespace, settings) => ({name?, hooks})`
    /// that receives the plugin entry's module namespace and the settings
    /// given to [`load_with`], and returns `hooks`, a map from contract hook
    /// names (`before_tool`, `tools`, `call_tool`, ...) to functions
    /// `(args, ctx) => reply | Promise<reply>`. It throws to refuse the
    /// plugin (the message is the reason). It may be async, and may also
    /// return `warnings` (a list of strings) and an `unload` function the
    /// engine runs when the plugin is dropped.
    ///
    /// A hook's `ctx` has `run_id`, `log` (`info`, `warn`, `error`,
    /// `debug`), `env` (the granted environment variables) and `signal`, an
    /// `AbortSignal` that aborts when the host gives up on the call (its
    /// run was cancelled, or its deadline passed).
    pub shape: &'static str,
    /// The specifier (in `internals`) of a module the host evaluates
    /// before the plugin's own code, if the flavor has one. Its default
    /// export is called with the settings given to [`load_with`] and the
    /// granted environment (both as JSON text), and may install globals the
    /// flavor's plugins expect (pi's Node globals). yohost's own flavor has
    /// none: its sandbox is the language's built-ins and the driver's.
    pub prelude: Option<&'static str>,
    /// How plugins get the host's `services` (files within their grants,
    /// and processes when granted `exec`), if they do. The shape and the
    /// built-ins find them at `globalThis[Symbol.for("yohost.host")]`:
    /// `cwd`, `fs(op, path, data)` (see `services::FileAccess::run`) and,
    /// when granted, `exec(command, args, {cwd, timeout})` and
    /// `fetch(request)` (see `fetch`).
    pub services: Option<ServiceApi>,
}

/// How a flavor offers the host's services.
#[derive(Debug, Clone, Copy)]
pub struct ServiceApi {
    /// The module plugins take the file functions from; error messages
    /// start with it (`yohost`, `node:fs`).
    pub module: &'static str,
    /// What relative file paths start from.
    pub relative_to: RelativeTo,
    /// Whether plugins get `fetch` when their manifest grants
    /// `capabilities.network`.
    pub fetch: bool,
}

/// What a flavor's relative file paths start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelativeTo {
    /// The plugin's folder (yohost's documented rule).
    PluginDir,
    /// The host's working directory (node's rule, for pi).
    WorkingDir,
}

impl RelativeTo {
    /// The folder relative paths start from, of `plugin_dir` and the
    /// host's working directory `cwd`.
    pub(crate) fn dir(self, plugin_dir: &std::path::Path, cwd: &std::path::Path) -> PathBuf {
        match self {
            RelativeTo::PluginDir => plugin_dir.to_path_buf(),
            RelativeTo::WorkingDir => cwd.to_path_buf(),
        }
    }
}

/// yohost's own flavor: `import ... from "yohost"` and
/// `export default definePlugin({...})`.
pub const YOHOST: Flavor = Flavor {
    builtins: &[Builtin {
        specifier: "yohost",
        source: include_str!("sdk.js"),
    }],
    owned: &[],
    internals: &[Builtin {
        specifier: "yohost:shape",
        source: include_str!("shape.js"),
    }],
    shape: "yohost:shape",
    prelude: None,
    services: Some(ServiceApi {
        module: "yohost",
        relative_to: RelativeTo::PluginDir,
        fetch: false,
    }),
};

/// Load a yohost TypeScript or JavaScript plugin, whose file grants the
/// caller opened.
pub fn load(candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
    glue::load_yohost(load_with, candidate, grants)
}

/// Load a plugin of `flavor`: gather and transpile its modules (and the
/// flavor's), start its engine thread, evaluate it and shape its hooks.
/// `settings` is what the shape receives besides the module; its files are
/// `grants`.
/// `entries` are the modules to load, in order: the candidate's entry,
/// or several entries of its folder (a pi package's extensions), whose
/// namespaces the shape receives, in order, under
/// `Symbol.for("yohost.entries")`.
pub fn load_with(
    candidate: &Candidate,
    entries: &[PathBuf],
    flavor: &Flavor,
    settings: &serde_json::Value,
    grants: Grants,
) -> Result<Loaded, LoadError> {
    let path = candidate.entry.clone();
    let refused = |e: GatherError| match e {
        GatherError::Invalid(message) => LoadError::Invalid {
            path: path.clone(),
            message,
        },
        GatherError::Refused(message) => LoadError::Refused {
            path: path.clone(),
            message,
        },
        GatherError::NeedsNode(needs) => LoadError::NeedsNode {
            path: path.clone(),
            needs,
        },
    };
    let mut modules = gather(
        candidate.base_dir(),
        &candidate.own_paths(),
        entries,
        Served {
            builtins: flavor.builtins,
            owned: flavor.owned,
        },
    )
    .map_err(refused)?;
    let member_warnings = member_reads(candidate, &path, &mut modules)?;
    add_flavor(&mut modules, flavor).map_err(refused)?;
    let capabilities = &candidate.manifest.capabilities;
    let env = glue::granted_env(capabilities);
    let plugin_dir = modules.base_dir.clone();
    let cwd = std::env::current_dir().unwrap_or_default();
    let dry_run = candidate.dry_run.then(DryRun::default);
    // A plugin that may start processes is refused where they cannot be
    // sandboxed (unless its manifest opts in).
    let sandbox = match capabilities.exec {
        true => Some(
            ProcessSandbox::for_plugin(candidate, &grants).map_err(|message| {
                LoadError::Refused {
                    path: path.clone(),
                    message,
                }
            })?,
        ),
        false => None,
    };
    let sandbox_warnings: Vec<String> =
        sandbox.iter().flat_map(|s| s.warnings().to_vec()).collect();
    let processes = sandbox.as_ref().map(ProcessSandbox::confinement);
    let services = flavor.services.map(|api| {
        let relative_to = api.relative_to.dir(&plugin_dir, &cwd);
        let files = FileAccess::new(grants, relative_to, api.module);
        Services {
            files: match &dry_run {
                Some(dry_run) => files.dry_run(dry_run.clone()),
                None => files,
            },
            cwd,
            exec: capabilities.exec,
            sandbox,
            dry_run: dry_run.clone(),
            network: if api.fetch {
                capabilities.network.clone()
            } else {
                Network::default()
            },
        }
    });
    let program = Program {
        modules,
        flavor: *flavor,
        settings: settings.to_string(),
        sandbox: Sandbox {
            memory_bytes: candidate.manifest.memory_bytes(),
            env,
            services,
        },
        default_name: candidate.name.clone(),
        name_is_fixed: candidate.named_by_manifest,
        plugin_dir,
    };
    let (instance, started) = runtime::start(program).map_err(|message| LoadError::Invalid {
        path: path.clone(),
        message,
    })?;
    let mut warnings = sandbox_warnings;
    warnings.extend(member_warnings);
    // What it would have done while it loaded (pi's `session_start`).
    warnings.extend(dry_run.iter().flat_map(DryRun::take));
    let offered = flavor.services.is_some();
    let fetches = flavor.services.is_some_and(|api| api.fetch);
    for (granted, offered, what) in [
        (!capabilities.read.is_empty(), offered, "`read`"),
        (!capabilities.write.is_empty(), offered, "`write`"),
        (capabilities.network.is_granted(), fetches, "`network`"),
        (capabilities.exec, offered, "`exec`"),
    ] {
        if granted && !offered {
            warnings.push(format!(
                "the manifest grants {what}, but the JavaScript engine offers no API for it yet: the plugin cannot use it"
            ));
        }
    }
    let plugin = Arc::new(plugin::JsPlugin::new(instance));
    started.into_loaded(&path, plugin, warnings, processes)
}

/// The members the plugin reads from Node built-ins' namespaces that the
/// embedded engine's stand-ins lack: under `engine = "auto"` a need for
/// Node (which takes the plugin when it can; else the host loads it here,
/// with `engine = "embedded"`), otherwise warnings, since each such read
/// gives `undefined` here.
fn member_reads(
    candidate: &Candidate,
    path: &Path,
    modules: &mut modules::ModuleSet,
) -> Result<Vec<String>, LoadError> {
    let needs = std::mem::take(&mut modules.member_needs);
    if needs.is_empty() {
        return Ok(Vec::new());
    }
    if candidate.manifest.engine == EngineChoice::Auto {
        return Err(LoadError::NeedsNode {
            path: path.to_path_buf(),
            needs,
        });
    }
    Ok(needs
        .0
        .iter()
        .map(|need| format!("{need}: on the embedded engine, each read gives `undefined`"))
        .collect())
}
