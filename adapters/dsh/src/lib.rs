//! DSH (DeepSeek Harness) tool plugins for yohost.
//!
//! A DSH tool plugin is an ES module (usually an npm package such as
//! `@deepseek-ai/dsh-tool-todo`) that exports `name`, `inject` (the services
//! it needs), `Config` (a schemastery schema) and `apply(ctx, config)`. This
//! adapter runs it as a flavor of yohost's JavaScript engines: on the
//! embedded engine ([`DshAdapter`]), and on Node ([`DshOnNode`]) when its
//! imports need Node or its `inject` names a service only Node provides
//! (`shell`, `fs`, ...; [`PROVIDED_ON_NODE`]). Its JavaScript (in `js/`,
//! embedded here) provides `ctx` and the built-in `@deepseek-ai/dsh-tools`
//! module, and maps what `apply` registers to hooks. `README.md` has the
//! tables of what maps, which services are provided and how, what is
//! refused and what is not available.
//!
//! Register both with the host:
//!
//! ```no_run
//! # fn demo() -> Result<(), yohost::HostError> {
//! let host = yohost::PluginHost::builder("plugins")
//!     .adapter(yohost_adapter_dsh::adapter())
//!     .adapter(yohost_adapter_dsh::node_adapter())
//!     .open()?;
//! # Ok(()) }
//! ```

mod inject;
mod peers;

use std::path::PathBuf;
use std::sync::Arc;
use yohost::adapter::grants::{Access, Grants};
use yohost::adapter::js::modules::Builtin;
use yohost::adapter::js::{load_with, Flavor};
use yohost::adapter::limits::MAX_SOURCE_BYTES;
use yohost::adapter::node;
use yohost::adapter::source::read_text;
use yohost::adapter::{
    Adapter, Candidate, Ecosystem, EngineKind, LoadError, Loaded, NodeNeed, NodeNeeds,
};

macro_rules! module {
    ($specifier:literal, $file:literal) => {
        Builtin {
            specifier: $specifier,
            source: include_str!(concat!("../js/", $file)),
        }
    };
}

/// The adapter's own modules, with the services module of an engine and
/// the modules it imports.
macro_rules! internals {
    ($services:literal $(, $service:expr)* $(,)?) => {
        &[
            module!("dsh:schema", "schema.js"),
            module!("dsh:shape", "shape/index.js"),
            module!("dsh:shape/context", "shape/context.js"),
            module!("dsh:shape/events", "shape/events.js"),
            module!("dsh:shape/prompt", "shape/prompt.js"),
            module!("dsh:shape/tools", "shape/tools.js"),
            module!("dsh:services", $services),
            $($service,)*
        ]
    };
}

/// The version of DSH's packages whose plugin API and service definitions
/// the adapter follows (`@deepseek-ai/dsh-tools`, `dsh-shell`, `dsh-fs`, ...).
pub const DSH_VERSION: &str = "0.1.0-rc.8";

/// The services every engine's `ctx` has.
pub const PROVIDED: &[&str] = &["tools", "systemPrompt"];

/// The services the adapter provides on the Node engine besides
/// [`PROVIDED`], mapped onto the plugin's grants (see `README.md`).
pub const PROVIDED_ON_NODE: &[&str] = &[
    "shell",
    "shellEnv",
    "jobs",
    "fs",
    "approval",
    "sandboxPolicy",
];

/// The built-in `@deepseek-ai/dsh-tools` (plugins list it as a development
/// dependency, so it is not installed with them).
const BUILTINS: &[Builtin] = &[module!("@deepseek-ai/dsh-tools", "dsh-tools.js")];

/// The packages the adapter serves whole: a path inside
/// `@deepseek-ai/dsh-tools` is refused by name, not taken from a copy.
const OWNED: &[&str] = &["@deepseek-ai/dsh-tools"];

/// The DSH flavor of the embedded engine: `@deepseek-ai/dsh-tools` as a
/// built-in module, and a shape that runs `apply(ctx, config)` against the
/// adapter's `ctx`. Other packages (`zod`, `@deepseek-ai/schemastery`) come
/// from the plugin's own `node_modules`.
pub const FLAVOR: Flavor = Flavor {
    builtins: BUILTINS,
    owned: OWNED,
    internals: internals!("services.js"),
    shape: "dsh:shape",
    prelude: None,
    services: None,
};

/// The DSH flavor on Node: the same shape and `ctx`, with the services of
/// [`PROVIDED_ON_NODE`] (`js/node/services.js`, by concern in `js/node/`).
pub const NODE_FLAVOR: Flavor = Flavor {
    builtins: BUILTINS,
    owned: OWNED,
    internals: internals!(
        "node/services.js",
        module!("dsh:services/fs", "node/fs.js"),
        module!("dsh:services/jobs", "node/jobs.js"),
        module!("dsh:services/shell", "node/shell.js"),
    ),
    shape: "dsh:shape",
    prelude: None,
    services: None,
};

/// The DSH ecosystem's id, as a manifest's `ecosystem = "dsh"` names it.
pub const ECOSYSTEM: Ecosystem = Ecosystem::new("dsh");

/// How the names of DSH's published packages begin.
const DSH_SCOPE: &str = "@deepseek-ai/dsh";

/// The services that `source`, a DSH plugin's module, requires in its
/// `inject` declaration, read from the text alone (nothing runs): empty
/// when it names none of DSH's packages or declares none as a literal.
/// `yohost add` infers a package's grants from them (`shell` starts
/// processes, `fs` works on the workspace's files).
pub fn required_services(source: &str) -> Vec<String> {
    if source.contains(DSH_SCOPE) {
        inject::in_source(source)
    } else {
        Vec::new()
    }
}

/// Whether a candidate's source names DSH's packages: a DSH tool plugin.
fn imports_dsh(candidate: &Candidate) -> bool {
    read_text(&candidate.entry, MAX_SOURCE_BYTES).is_ok_and(|source| source.contains(DSH_SCOPE))
}

/// Loads DSH tool plugins on the embedded JavaScript engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct DshAdapter;

/// The adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn adapter() -> Arc<dyn Adapter> {
    Arc::new(DshAdapter)
}

/// Loads DSH tool plugins on the Node engine: those whose imports need Node
/// (routed there under `engine = "auto"`), or whose `inject` needs a
/// service of [`PROVIDED_ON_NODE`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DshOnNode;

/// The Node adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn node_adapter() -> Arc<dyn Adapter> {
    Arc::new(DshOnNode)
}

impl Adapter for DshAdapter {
    fn engine(&self) -> EngineKind {
        EngineKind::JS
    }

    fn ecosystem(&self) -> Ecosystem {
        ECOSYSTEM
    }

    fn recognises(&self, candidate: &Candidate) -> bool {
        imports_dsh(candidate)
    }

    /// Load a DSH plugin. Its `Config` gets `plugin.toml`'s `[config]`
    /// table (defaults come from the schema). A plugin whose `inject` needs
    /// a service no engine provides is refused, naming them, before its
    /// imports are looked at; one that needs a service only Node provides
    /// goes to Node (under `engine = "auto"`).
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        let declared = unprovided(candidate)?;
        let on_node: Vec<&String> = declared
            .iter()
            .filter(|s| PROVIDED_ON_NODE.contains(&s.as_str()))
            .collect();
        if !on_node.is_empty() {
            let mut needs = NodeNeeds::default();
            for service in on_node {
                needs.add(NodeNeed::Service {
                    file: candidate.entry.clone(),
                    service: service.clone(),
                });
            }
            return Err(LoadError::NeedsNode {
                path: candidate.entry.clone(),
                needs,
            });
        }
        let settings = serde_json::json!({
            "config": config(candidate)?,
            "onNode": PROVIDED_ON_NODE,
        });
        let mut loaded = load_with(candidate, entry(candidate), &FLAVOR, &settings, grants)
            .map_err(|error| peers_explained(candidate, error))?;
        loaded.ecosystem = Some(ECOSYSTEM);
        Ok(loaded)
    }
}

impl Adapter for DshOnNode {
    fn engine(&self) -> EngineKind {
        EngineKind::NODE
    }

    fn ecosystem(&self) -> Ecosystem {
        ECOSYSTEM
    }

    fn recognises(&self, candidate: &Candidate) -> bool {
        imports_dsh(candidate)
    }

    /// Load a DSH plugin on Node, with the same `ctx` as on the embedded
    /// engine and the services of [`PROVIDED_ON_NODE`] on its grants.
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        unprovided(candidate)?;
        let settings = node_settings(candidate, &grants)?;
        let mut loaded =
            node::load_with(candidate, entry(candidate), &NODE_FLAVOR, &settings, grants)
                .map_err(|error| peers_explained(candidate, error))?;
        loaded.ecosystem = Some(ECOSYSTEM);
        Ok(loaded)
    }
}

/// The services the plugin's entry declares in `inject`, read from its
/// source; refused, naming them, when one is provided by no engine.
/// A DSH plugin's one module: its entry.
fn entry(candidate: &Candidate) -> &[std::path::PathBuf] {
    std::slice::from_ref(&candidate.entry)
}

fn unprovided(candidate: &Candidate) -> Result<Vec<String>, LoadError> {
    let declared = inject::declared(&candidate.entry);
    let missing: Vec<String> = declared
        .iter()
        .filter(|s| !PROVIDED.contains(&s.as_str()) && !PROVIDED_ON_NODE.contains(&s.as_str()))
        .map(|s| format!("`{s}`"))
        .collect();
    if missing.is_empty() {
        return Ok(declared);
    }
    let provided: Vec<String> = PROVIDED
        .iter()
        .chain(PROVIDED_ON_NODE)
        .map(|s| format!("`{s}`"))
        .collect();
    Err(LoadError::Refused {
        path: candidate.entry.clone(),
        message: format!(
            "the DSH plugin needs {}, which the host does not provide (it provides {})",
            missing.join(", "),
            provided.join(", ")
        ),
    })
}

/// `plugin.toml`'s `[config]`, as JSON for the plugin's `Config`.
fn config(candidate: &Candidate) -> Result<serde_json::Value, LoadError> {
    serde_json::to_value(&candidate.manifest.config).map_err(|e| LoadError::Invalid {
        path: candidate.entry.clone(),
        message: format!("[config] cannot be handed to the plugin: {e}"),
    })
}

/// What the shape on Node is told: the `[config]`, the entry (its packages
/// are found from it), and the grants the services map onto: the real
/// paths of the read and write grants, whether commands may run, and the
/// workspace (the working directory when a write grant holds it, else the
/// first write grant, else the working directory). The plugin's data
/// folder is not among them: DSH's services work in the workspace its
/// manifest grants, and its mode (`read-only` without a write grant) stays
/// as the manifest says.
fn node_settings(candidate: &Candidate, grants: &Grants) -> Result<serde_json::Value, LoadError> {
    let data = candidate
        .data_dir
        .as_ref()
        .and_then(|d| d.canonicalize().ok());
    let real = |access: Access| -> Vec<PathBuf> {
        grants
            .iter()
            .filter(|g| g.access() == access && Some(g.real()) != data.as_deref())
            .map(|g| g.real().to_path_buf())
            .collect()
    };
    let (read, write) = (real(Access::Read), real(Access::Write));
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .unwrap_or_else(|_| candidate.base_dir().to_path_buf());
    let workspace = match write.iter().find(|w| cwd.starts_with(w)) {
        Some(_) => cwd.clone(),
        None => write.first().cloned().unwrap_or(cwd),
    };
    let entry = candidate
        .entry
        .canonicalize()
        .unwrap_or_else(|_| candidate.entry.clone());
    Ok(serde_json::json!({
        "config": config(candidate)?,
        "entry": entry,
        "host": {
            "workspace": workspace,
            "read": read,
            "write": write,
            "exec": candidate.manifest.capabilities.exec && !candidate.dry_run,
        },
    }))
}

/// A failed load, with what to run when it failed on a package: the
/// plugin's missing peer dependencies, and how to install them.
fn peers_explained(candidate: &Candidate, error: LoadError) -> LoadError {
    peers::explained(candidate.base_dir(), error)
}
