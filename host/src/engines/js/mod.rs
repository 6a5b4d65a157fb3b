//! TypeScript and JavaScript plugins on an embedded engine: QuickJS-NG
//! through `rquickjs`, with types stripped by `oxc`. No Node, no build step,
//! no second process.
//!
//! One module per concern:
//! - [`transpile`]: TypeScript to JavaScript, errors with file and line;
//! - [`modules`]: the import graph, walked and checked at load (relative
//!   files and built-in modules only, and only names a built-in exports);
//! - [`runtime`]: the QuickJS backend, its sandbox (memory, stack,
//!   interrupts, granted environment) and the thread that owns it;
//! - [`services`]: files within the manifest's grants, and processes when
//!   granted, for flavors that offer them;
//! - [`plugin`]: the host's [`Plugin`](crate::Plugin) over a running instance;
//! - [`pi`]: the pi adapter's flavor (its JavaScript is in `adapters/pi/`).
//!
//! A [`Flavor`] says which built-in modules a plugin may import and how its
//! default export becomes hooks. yohost's own is [`YOHOST`]; pi extensions
//! load with [`pi::PI`] (the adapter table sends them to [`pi::load`]).

pub mod modules;
pub mod pi;
pub mod plugin;
pub mod runtime;
pub mod services;
pub mod transpile;

use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::grants::Grants;
use crate::plugin::Loaded;
use modules::{gather, Builtin, GatherError};
use runtime::{Program, Sandbox};
use services::{FileAccess, Services};
use std::sync::Arc;
use yohost_contract::Hook;

/// How plugins of one ecosystem look to the engine.
#[derive(Debug, Clone, Copy)]
pub struct Flavor {
    /// The modules plugins may import by bare name.
    pub builtins: &'static [Builtin],
    /// A JavaScript function expression, `(defaultExport) => ({name?, hooks})`,
    /// where `hooks` maps contract hook names (`before_tool`, `tools`,
    /// `call_tool`, ...) to functions `(args, ctx) => reply | Promise<reply>`.
    /// It throws to refuse the plugin; the message is the reason. It may be
    /// async, and may also return `warnings` (a list of strings) and an
    /// `unload` function the engine runs when the plugin is dropped.
    pub shape: &'static str,
    /// How plugins get the host's [`services`] (files within their grants,
    /// and processes when granted `exec`), if they do.
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
}

/// What a flavor's relative file paths start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelativeTo {
    /// The plugin's folder (yohost's documented rule).
    PluginDir,
    /// The host's working directory (node's rule, for pi).
    WorkingDir,
}

/// yohost's own flavor: `import ... from "yohost"` and
/// `export default definePlugin({...})`.
pub const YOHOST: Flavor = Flavor {
    builtins: &[Builtin {
        specifier: "yohost",
        source: include_str!("../../../../sdk-ts/index.js"),
    }],
    shape: include_str!("shape.js"),
    services: Some(ServiceApi {
        module: "yohost",
        relative_to: RelativeTo::PluginDir,
    }),
};

/// Load a yohost TypeScript or JavaScript plugin, whose file grants the
/// caller opened.
pub fn load(candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
    load_with(candidate, YOHOST, grants)
}

/// Load a plugin of `flavor`: gather and transpile its modules, start its
/// engine thread, evaluate it and read its hooks. Its files are `grants`.
pub fn load_with(
    candidate: &Candidate,
    flavor: Flavor,
    grants: Grants,
) -> Result<Loaded, LoadError> {
    let path = candidate.entry.clone();
    let modules =
        gather(candidate.base_dir(), &candidate.entry, flavor.builtins).map_err(|e| match e {
            GatherError::Invalid(message) => LoadError::Invalid {
                path: path.clone(),
                message,
            },
            GatherError::Refused(message) => LoadError::Refused {
                path: path.clone(),
                message,
            },
        })?;
    let capabilities = &candidate.manifest.capabilities;
    let env = capabilities
        .env
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|value| (name.clone(), value)))
        .collect();
    let plugin_dir = modules.base_dir.clone();
    let cwd = std::env::current_dir().unwrap_or_default();
    let services = flavor.services.map(|api| {
        let relative_to = match api.relative_to {
            RelativeTo::PluginDir => plugin_dir.clone(),
            RelativeTo::WorkingDir => cwd.clone(),
        };
        Services {
            files: FileAccess::new(grants, relative_to, api.module),
            cwd,
            exec: capabilities.exec,
        }
    });
    let program = Program {
        modules,
        flavor,
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
    let hooks = started
        .hooks
        .iter()
        .map(|name| {
            Hook::from_name(name).ok_or_else(|| LoadError::Invalid {
                path: path.clone(),
                message: format!("internal: the plugin's shape names unknown hook `{name}`"),
            })
        })
        .collect::<Result<_, _>>()?;
    let mut warnings = started.warnings;
    let offered = flavor.services.is_some();
    for (granted, offered, what) in [
        (!capabilities.read.is_empty(), offered, "`read`"),
        (!capabilities.write.is_empty(), offered, "`write`"),
        (capabilities.network, false, "`network`"),
        (capabilities.exec, offered, "`exec`"),
    ] {
        if granted && !offered {
            warnings.push(format!(
                "the manifest grants {what}, but the JavaScript engine offers no API for it yet: the plugin cannot use it"
            ));
        }
    }
    Ok(Loaded {
        plugin: Arc::new(plugin::JsPlugin::new(instance)),
        hooks,
        name: started.name,
        warnings,
        ecosystem: None,
    })
}
