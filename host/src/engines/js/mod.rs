//! TypeScript and JavaScript plugins on an embedded engine: QuickJS-NG
//! through `rquickjs`, with types stripped by `oxc`. No Node, no build step,
//! no second process.
//!
//! One module per concern, in the order they import each other: a module
//! imports only modules above it in this list, never one below, and no
//! child imports this file (it is the top: it loads a plugin and
//! re-exports [`Flavor`] and its parts). The layer test
//! (`host/tests/integration/layers.rs`) checks it file by file.
//!
//! 1. Source to code, each a leaf or over the one before:
//!    - `positions`: where generated code's positions are in the source;
//!    - `guard`: every parse of a plugin's source bounded (its size, its
//!      nesting, a stack that fits it), and errors with file and line;
//!    - `transpile`: TypeScript to JavaScript, and what a module imports
//!      and exports;
//!    - `commonjs`: CommonJS and JSON files through an interop wrapper;
//!    - `packages`: bare imports resolved from the plugin's `node_modules`
//!      with Node's algorithm.
//! 2. The gathered modules and what decides them:
//!    - `module_set`: the modules once gathered, what stops the gathering,
//!      and how a plugin file is named;
//!    - `flavor`: what a [`Flavor`] is, yohost's own ([`YOHOST`]), what it
//!      serves by name, and how its own modules join a plugin's;
//!    - `module_files`: a relative import resolved inside the plugin's
//!      folder and confined to its own paths, its source read through a
//!      handle on the folder;
//!    - `node_needs`: what only Node has, found by the walk;
//!    - [`modules`]: the walk of the import graph at load (relative files,
//!      npm packages inside the plugin's folder, built-in modules, and only
//!      names a built-in exports).
//! 3. The host's services, for flavors that offer them:
//!    - [`watch`]: file watches within the grants (its budget of the
//!      system's watches is `watch::budget`);
//!    - `services`: files within the manifest's grants, and processes when
//!      granted;
//!    - `fetch`: HTTP requests to the hosts `capabilities.network` grants;
//!    - `crypto`: random bytes and sha2 digests, for `node:crypto`.
//! 4. Running a plugin:
//!    - `glue`: what this engine and the Node engine share (the Node engine
//!      imports it; it imports nothing of the Node engine);
//!    - `runtime`: the QuickJS backend, its sandbox (memory, stack,
//!      interrupts, granted environment) and the thread that owns it; its
//!      own files are ordered the same way (see its doc);
//!    - `plugin`: the host's [`Plugin`](crate::Plugin) over a running
//!      instance.
//!
//! Only [`modules`] (for [`Builtin`](modules::Builtin)) and [`watch`] (for
//! its limits) are public; the other modules are the crate's own.
//!
//! A [`Flavor`] says which built-in modules a plugin may import and how its
//! module becomes hooks. yohost's own is [`YOHOST`]; adapter crates bring
//! theirs (`yohost-adapter-pi`, `yohost-adapter-dsh`) and load with
//! [`load_with`]. The engine knows none of them.

pub(crate) mod commonjs;
mod commonjs_gather;
pub(crate) mod crypto;
pub(crate) mod esm_require;
pub(crate) mod fetch;
pub(crate) mod flavor;
pub(crate) mod glue;
pub(crate) mod guard;
pub(crate) mod module_files;
pub(crate) mod module_set;
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
use flavor::add_flavor;
use module_set::{GatherError, ModuleSet};
use modules::gather;
use runtime::{Program, Sandbox};
use services::{DryRun, FileAccess, Services};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use flavor::{Flavor, RelativeTo, ServiceApi, YOHOST};

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
        flavor.served(),
    )
    .map_err(refused)?;
    let member_warnings = member_reads(candidate, &path, &mut modules)?;
    let gather_warnings = std::mem::take(&mut modules.warnings);
    add_flavor(&mut modules, flavor).map_err(refused)?;
    let capabilities = &candidate.manifest.capabilities;
    let env = crate::load::data_dir::plugin_env(candidate);
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
        // A plugin in a folder of its own reads the files it ships.
        let grants = match candidate.root.is_dir() {
            true => grants.with_own_folder(&candidate.root),
            false => grants,
        };
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
    warnings.extend(gather_warnings);
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
    modules: &mut ModuleSet,
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
