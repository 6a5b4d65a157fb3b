//! What a flavor is ([`Flavor`]): the built-in modules plugins of one
//! ecosystem may import, how their module becomes hooks and which host
//! services they get; yohost's own ([`YOHOST`]); what a flavor serves by
//! name ([`Served`]); and how its own modules join a plugin's
//! ([`add_flavor`]).

use super::module_set::{GatherError, ModuleSet};
use super::transpile::transpile;
use crate::model::sync::lock;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

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
    /// given to [`load_with`](super::load_with), and returns `hooks`, a map from contract hook
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
    /// export is called with the settings given to [`load_with`](super::load_with) and the
    /// granted environment (both as JSON text), and may install globals the
    /// flavor's plugins expect (pi's Node globals). yohost's own installs
    /// `fetch`, `Headers`, `Request` and `Response` ([`FETCH`]) and no
    /// other: its sandbox is otherwise the language's built-ins and the
    /// driver's.
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
    /// Whether plugins get the host's `fetch` service when their manifest
    /// grants `capabilities.network` (the global `fetch` over it is the
    /// flavor's, [`FETCH`]). Without it a granted `network` is reported as
    /// unusable at load.
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
    internals: &[
        Builtin {
            specifier: "yohost:shape",
            source: include_str!("shape.js"),
        },
        Builtin {
            specifier: "yohost:globals",
            source: include_str!("globals.js"),
        },
        FETCH,
        BYTES,
    ],
    shape: "yohost:shape",
    prelude: Some("yohost:globals"),
    services: Some(ServiceApi {
        module: "yohost",
        relative_to: RelativeTo::PluginDir,
        fetch: true,
    }),
};

/// The web's `fetch`, `Headers`, `Request` and `Response` over the host's
/// `fetch` service, as the module `yohost:fetch`: yohost's own flavor
/// installs them, and so does pi's. Without a `capabilities.network`
/// grant, `fetch` rejects naming the key. It imports [`BYTES`].
pub const FETCH: Builtin = Builtin {
    specifier: "yohost:fetch",
    source: include_str!("fetch.js"),
};

/// UTF-8 and base64 for a flavor's JavaScript, as the module
/// `yohost:bytes` ([`FETCH`] uses it).
pub const BYTES: Builtin = Builtin {
    specifier: "yohost:bytes",
    source: include_str!("bytes.js"),
};

/// A built-in module: its specifier and its JavaScript source.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// What plugins import it as (`yohost`, `node:path`, ...).
    pub specifier: &'static str,
    /// Its source, an ES module in plain JavaScript.
    pub source: &'static str,
}

impl Builtin {
    /// The specifiers the module imports. A built-in's source is static,
    /// so it is parsed once per process, not once per plugin that loads it
    /// (a flavor's modules are the same for every plugin of the flavor).
    fn imports(&self) -> Result<Vec<String>, GatherError> {
        type Parsed = std::collections::HashMap<(usize, usize), Vec<String>>;
        static PARSED: std::sync::Mutex<Option<Parsed>> = std::sync::Mutex::new(None);
        let key = (self.source.as_ptr() as usize, self.source.len());
        let parsed = || lock(&PARSED);
        if let Some(imports) = parsed().get_or_insert_with(Parsed::new).get(&key) {
            return Ok(imports.clone());
        }
        let imports = transpile(Path::new(self.specifier), self.source)
            .map_err(|e| GatherError::Invalid(format!("internal: {}", e.message)))?
            .imports;
        parsed()
            .get_or_insert_with(Parsed::new)
            .insert(key, imports.clone());
        Ok(imports)
    }
}

/// What a flavor serves by name: its built-in modules, and the packages it
/// owns whole ([`Flavor::owned`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Served<'a> {
    /// The modules plugins may import by bare name.
    pub(crate) builtins: &'a [Builtin],
    /// The packages no path of which comes from the plugin's `node_modules`.
    pub(crate) owned: &'a [&'a str],
}

impl Flavor {
    /// What the flavor serves by name, for the walk of a plugin's modules.
    pub(crate) fn served(&self) -> Served<'static> {
        Served {
            builtins: self.builtins,
            owned: self.owned,
        }
    }
}

impl Served<'_> {
    /// The owned package `specifier` is, or lies in.
    pub(super) fn owner(&self, specifier: &str) -> Option<&str> {
        self.owned.iter().copied().find(|package| {
            specifier
                .strip_prefix(package)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    /// Why `file` may not import `specifier`, a path of owned `package`
    /// the flavor does not serve.
    pub(super) fn not_served(&self, file: &Path, specifier: &str, package: &str) -> String {
        let offered: Vec<&str> = self
            .builtins
            .iter()
            .map(|b| b.specifier)
            .filter(|s| {
                s.strip_prefix(package)
                    .is_some_and(|r| r.is_empty() || r.starts_with('/'))
            })
            .collect();
        format!(
            "{} imports \"{specifier}\": `{package}` is served by the host, not taken from node_modules, and it serves only {}",
            file.display(),
            offered.join(", ")
        )
    }
}

/// Add the flavor's own modules to `set`: its shape module, and every
/// module the shape and the built-ins in `set` import. A flavor module may
/// import only the flavor's built-ins and internal modules.
pub(crate) fn add_flavor(set: &mut ModuleSet, flavor: &Flavor) -> Result<(), GatherError> {
    let find = |specifier: &str| {
        flavor
            .builtins
            .iter()
            .chain(flavor.internals)
            .find(|m| m.specifier == specifier)
    };
    let shape = find(flavor.shape).ok_or_else(|| {
        GatherError::Invalid(format!(
            "internal: the flavor has no module `{}` for its shape",
            flavor.shape
        ))
    })?;
    set.shape = shape.specifier.to_string();
    let mut queue: Vec<&Builtin> = vec![shape];
    if let Some(specifier) = flavor.prelude {
        let prelude = find(specifier).ok_or_else(|| {
            GatherError::Invalid(format!(
                "internal: the flavor has no module `{specifier}` for its prelude"
            ))
        })?;
        set.prelude = Some(prelude.specifier.to_string());
        queue.push(prelude);
    }
    queue.extend(
        flavor
            .builtins
            .iter()
            .filter(|b| set.sources.contains_key(b.specifier)),
    );
    let mut seen = std::collections::BTreeSet::new();
    while let Some(module) = queue.pop() {
        if !seen.insert(module.specifier) {
            continue;
        }
        set.sources
            .entry(module.specifier.to_string())
            .or_insert(Cow::Borrowed(module.source));
        for specifier in module.imports()? {
            let target = find(&specifier).ok_or_else(|| {
                GatherError::Invalid(format!(
                    "internal: the flavor's module `{}` imports \"{specifier}\", which the flavor does not have",
                    module.specifier
                ))
            })?;
            set.links.insert(
                (module.specifier.to_string(), specifier.clone()),
                target.specifier.to_string(),
            );
            queue.push(target);
        }
    }
    Ok(())
}
