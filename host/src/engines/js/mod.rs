//! TypeScript and JavaScript plugins on an embedded engine: QuickJS-NG
//! through `rquickjs`, with types stripped by `oxc`. No Node, no build step,
//! no second process.
//!
//! One module per concern:
//! - [`transpile`]: TypeScript to JavaScript, errors with file and line;
//! - [`modules`]: the import graph, walked and checked at load (relative
//!   files and built-in modules only);
//! - [`runtime`]: the QuickJS backend, its sandbox (memory, stack,
//!   interrupts, granted environment) and the thread that owns it;
//! - [`plugin`]: the host's [`Plugin`](crate::Plugin) over a running instance.
//!
//! A [`Flavor`] says which built-in modules a plugin may import and how its
//! default export becomes hooks. yohost's own is [`YOHOST`]; an adapter for
//! another ecosystem (pi) loads its plugins with [`load_with`] and its own
//! flavor.

pub mod modules;
pub mod plugin;
pub mod runtime;
pub mod transpile;

use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::plugin::Loaded;
use modules::{gather, Builtin, GatherError};
use runtime::{Program, Sandbox};
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
    /// It throws to refuse the plugin; the message is the reason.
    pub shape: &'static str,
}

/// yohost's own flavor: `import ... from "yohost"` and
/// `export default definePlugin({...})`.
pub const YOHOST: Flavor = Flavor {
    builtins: &[Builtin {
        specifier: "yohost",
        source: include_str!("../../../../sdk-ts/index.js"),
    }],
    shape: include_str!("shape.js"),
};

/// Load a yohost TypeScript or JavaScript plugin.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    load_with(candidate, YOHOST)
}

/// Load a plugin of `flavor`: gather and transpile its modules, start its
/// engine thread, evaluate it and read its hooks.
pub fn load_with(candidate: &Candidate, flavor: Flavor) -> Result<Loaded, LoadError> {
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
    let program = Program {
        modules,
        flavor,
        sandbox: Sandbox {
            memory_bytes: candidate.manifest.memory_bytes(),
            env,
        },
        default_name: candidate.name.clone(),
        name_is_fixed: candidate.named_by_manifest,
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
    let mut warnings = Vec::new();
    for (granted, what) in [
        (!capabilities.read.is_empty(), "`read`"),
        (!capabilities.write.is_empty(), "`write`"),
        (capabilities.network, "`network`"),
        (capabilities.exec, "`exec`"),
    ] {
        if granted {
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
