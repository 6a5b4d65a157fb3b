//! pi extensions for yohost, unchanged, on yohost's JavaScript engine.
//!
//! A pi extension's default export is pi's factory, `(pi) => void`. This
//! adapter is a flavor of the engine: its JavaScript (in `js/`, embedded
//! here) provides the `pi` object, maps pi's events to yohost hooks (the
//! shape, in `js/shape/`, by concern), and provides the modules pi
//! extensions import at run time. `README.md` has the table of what maps,
//! what is refused and what is not available.
//!
//! Register it with the host (the `yohost` command registers it):
//!
//! ```no_run
//! # fn demo() -> Result<(), yohost::HostError> {
//! let host = yohost::PluginHost::builder("plugins")
//!     .adapter(yohost_adapter_pi::adapter())
//!     .open()?;
//! # Ok(()) }
//! ```

mod by_design;
mod package;

use package::pi_extensions;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use yohost::adapter::grants::Grants;
use yohost::adapter::js::modules::Builtin;
use yohost::adapter::js::{load_with, Flavor, RelativeTo, ServiceApi};
use yohost::adapter::node;
use yohost::adapter::{Adapter, Candidate, FolderEntry};
use yohost::{Ecosystem, EngineKind, LoadError, Loaded};

macro_rules! module {
    ($specifier:literal, $file:literal) => {
        Builtin {
            specifier: $specifier,
            source: include_str!(concat!("../js/", $file)),
        }
    };
}

/// The pi ecosystem's id, as a manifest's `ecosystem = "pi"` names it.
pub const ECOSYSTEM: Ecosystem = Ecosystem::new("pi");

/// The version of pi whose extension API the adapter follows (pi's
/// `VERSION`).
pub const PI_VERSION: &str = "1.6.0";

/// The modules a pi extension may import at run time, under pi's current
/// (`@earendil-works/*`) and former (`@mariozechner/*`) names, and Node's
/// modules as far as a plugin host goes. Anything else (`node:zlib`,
/// packages that are not installed in the extension's folder) refuses the
/// extension, naming the import.
pub const BUILTINS: &[Builtin] = &[
    module!("@earendil-works/pi-coding-agent", "coding-agent.js"),
    module!("@mariozechner/pi-coding-agent", "coding-agent.js"),
    module!("@earendil-works/pi-ai", "pi-ai.js"),
    module!("@mariozechner/pi-ai", "pi-ai.js"),
    module!("@earendil-works/pi-ai/compat", "pi-ai.js"),
    module!("@mariozechner/pi-ai/compat", "pi-ai.js"),
    module!("@earendil-works/pi-agent-core", "agent-core.js"),
    module!("@mariozechner/pi-agent-core", "agent-core.js"),
    module!("@earendil-works/pi-tui", "pi-tui.js"),
    module!("@mariozechner/pi-tui", "pi-tui.js"),
    module!("typebox", "typebox.js"),
    module!("@sinclair/typebox", "typebox.js"),
    module!("typebox/value", "typebox-value.js"),
    module!("@sinclair/typebox/value", "typebox-value.js"),
    module!("node:path", "path.js"),
    module!("path", "path.js"),
    module!("node:url", "url.js"),
    module!("url", "url.js"),
    module!("node:fs", "fs.js"),
    module!("fs", "fs.js"),
    module!("node:fs/promises", "fs-promises.js"),
    module!("fs/promises", "fs-promises.js"),
    module!("node:os", "os.js"),
    module!("os", "os.js"),
    module!("node:crypto", "crypto.js"),
    module!("crypto", "crypto.js"),
    module!("node:child_process", "child-process.js"),
    module!("child_process", "child-process.js"),
    module!("node:util", "util.js"),
    module!("util", "util.js"),
    module!("node:events", "events.js"),
    module!("events", "events.js"),
    module!("node:readline", "readline.js"),
    module!("readline", "readline.js"),
];

/// pi's own packages, which the adapter serves whatever version the
/// extension's `node_modules` holds, as pi does: a path inside one that
/// [`BUILTINS`] does not list (`@earendil-works/pi-ai/oauth`) refuses the
/// extension, naming it.
pub const OWNED: &[&str] = &[
    "@earendil-works/pi-coding-agent",
    "@mariozechner/pi-coding-agent",
    "@earendil-works/pi-ai",
    "@mariozechner/pi-ai",
    "@earendil-works/pi-agent-core",
    "@mariozechner/pi-agent-core",
    "@earendil-works/pi-tui",
    "@mariozechner/pi-tui",
];

/// The adapter's own modules: the shape, by concern, and the file
/// functions `node:fs` and `node:fs/promises` share.
const INTERNALS: &[Builtin] = &[
    module!("pi:shape", "shape/index.js"),
    module!("pi:shape/api", "shape/api.js"),
    module!("pi:shape/context", "shape/context.js"),
    module!("pi:shape/entries", "shape/entries.js"),
    module!("pi:shape/events", "shape/events.js"),
    module!("pi:shape/hooks", "shape/hooks.js"),
    module!("pi:shape/refusals", "shape/refusals.js"),
    module!("pi:shape/tools", "shape/tools.js"),
    // The table of refusals by design, which the Rust side searches too.
    Builtin {
        specifier: "pi:shape/refused",
        source: concat!(
            "export default ",
            include_str!("../js/shape/refused.json"),
            ";"
        ),
    },
    module!("pi:host", "host.js"),
    module!("pi:intl", "intl.js"),
    module!("pi:fs-core", "fs-core.js"),
    module!("pi:tools", "tools.js"),
    module!("pi:globals", "globals.js"),
    // `fetch` and the bytes it shares with `Buffer`: the host's, which
    // yohost's own plugins get too.
    yohost::adapter::js::modules::FETCH,
    yohost::adapter::js::modules::BYTES,
    module!("pi:settings", "settings.js"),
    module!("pi:settings-manager", "settings-manager.js"),
];

/// The pi flavor: pi's modules, and a shape that runs the extension's
/// factory against a `pi` object and maps its handlers to hooks. Files and
/// processes go through the host's services, within the manifest's grants.
pub const PI: Flavor = Flavor {
    builtins: BUILTINS,
    owned: OWNED,
    internals: INTERNALS,
    shape: "pi:shape",
    prelude: Some("pi:globals"),
    services: Some(ServiceApi {
        module: "node:fs",
        relative_to: RelativeTo::WorkingDir,
        fetch: true,
    }),
};

/// Loads pi extensions on the JavaScript engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiAdapter;

/// The adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn adapter() -> Arc<dyn Adapter> {
    Arc::new(PiAdapter)
}

/// Loads pi extensions on the Node engine (`engine = "node"` in their
/// `plugin.toml`): the same flavor, in a `node` process, where Node's own
/// built-ins replace the flavor's `node:fs` and `node:path`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiOnNode;

/// The Node adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn node_adapter() -> Arc<dyn Adapter> {
    Arc::new(PiOnNode)
}

impl Adapter for PiOnNode {
    fn engine(&self) -> EngineKind {
        EngineKind::NODE
    }

    fn ecosystem(&self) -> Ecosystem {
        ECOSYSTEM
    }

    fn recognises(&self, candidate: &Candidate) -> bool {
        package::recognises(candidate)
    }

    fn folder_entry(&self, folder: &Path) -> Option<FolderEntry> {
        package::folder_entry(folder)
    }

    /// Load a pi extension on Node: refused, naming the event or call, when
    /// it would rewrite history or the request, as on the embedded engine.
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        let entries = extensions(candidate);
        let mut loaded = node::load_with(candidate, &entries, &PI, &settings(candidate), grants)?;
        loaded.ecosystem = Some(ECOSYSTEM);
        Ok(loaded)
    }
}

impl Adapter for PiAdapter {
    fn engine(&self) -> EngineKind {
        EngineKind::JS
    }

    fn ecosystem(&self) -> Ecosystem {
        ECOSYSTEM
    }

    fn recognises(&self, candidate: &Candidate) -> bool {
        package::recognises(candidate)
    }

    fn folder_entry(&self, folder: &Path) -> Option<FolderEntry> {
        package::folder_entry(folder)
    }

    /// Load a pi extension: refused, naming the event or call, when it
    /// would rewrite history or the request and nothing else of it stands
    /// alone (even when an import the host does not provide, or a module
    /// its code imports while it loads, stopped the load first). One that
    /// needs Node goes there, whose shape judges it the same way.
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        let entries = extensions(candidate);
        let settings = settings(candidate);
        let mut loaded = match load_with(candidate, &entries, &PI, &settings, grants.clone()) {
            Ok(loaded) => loaded,
            // A package that needs Node goes there whole.
            Err(error) if entries.len() > 1 && !matches!(error, LoadError::NeedsNode { .. }) => {
                load_those_that_stand_alone(candidate, &entries, &settings, grants)
                    .ok_or_else(|| by_design_first(candidate, error))?
            }
            Err(error) => return Err(by_design_first(candidate, error)),
        };
        loaded.ecosystem = Some(ECOSYSTEM);
        Ok(loaded)
    }
}

/// A package of several extensions, one or more of which cannot load:
/// each is tried alone, as a check tries it (it writes nothing and starts
/// nothing), and the package loads with those that load, each one left
/// out said in a warning with its reason (as pi loads the rest of a
/// package when one of its extensions fails). `None` when none loads, or
/// when one needs Node (the package then goes there whole).
fn load_those_that_stand_alone(
    candidate: &Candidate,
    entries: &[PathBuf],
    settings: &serde_json::Value,
    grants: Grants,
) -> Option<Loaded> {
    let mut trial = candidate.clone();
    trial.dry_run = true;
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    for entry in entries {
        match load_with(
            &trial,
            std::slice::from_ref(entry),
            &PI,
            settings,
            grants.clone(),
        ) {
            Ok(_) => kept.push(entry.clone()),
            // One that needs Node sends the package there whole.
            Err(LoadError::NeedsNode { .. }) => return None,
            Err(error) => {
                let shown = entry.strip_prefix(&candidate.root).unwrap_or(entry);
                left_out.push(format!("left out {}: {error}", shown.display()));
            }
        }
    }
    if kept.is_empty() {
        return None;
    }
    let mut loaded = load_with(candidate, &kept, &PI, settings, grants).ok()?;
    loaded.warnings.extend(left_out);
    Some(loaded)
}

/// The extensions to load: every one of a pi package, as pi reads its
/// `package.json` and its `extensions/` folder, when the candidate's entry
/// is one of them (a manifest may name another); else the entry alone.
fn extensions(candidate: &Candidate) -> Vec<PathBuf> {
    let all = match candidate.root.is_dir() {
        true => pi_extensions(
            &candidate.root,
            package::package_of(&candidate.root).as_ref(),
        ),
        false => Vec::new(),
    };
    match all.contains(&candidate.entry) {
        true => all,
        false => vec![candidate.entry.clone()],
    }
}

/// A failed load, refused by design instead when the extension's source
/// listens for an event or calls a method refused by design: those are
/// named first, then what stopped the load. One that needs Node is routed
/// there as it is: the shape there leaves out what it would rewrite when
/// the rest stands alone, and refuses it otherwise.
fn by_design_first(candidate: &Candidate, error: LoadError) -> LoadError {
    let (path, detail) = match &error {
        LoadError::Refused { path, message } | LoadError::Invalid { path, message } => {
            (path, message)
        }
        _ => return error,
    };
    // What the failure already names (the shape refused it) is not named
    // twice.
    let by_design: Vec<String> = by_design::found_in_source(candidate)
        .into_iter()
        .filter(|why| !detail.contains(named(why)))
        .collect();
    if by_design.is_empty() {
        return error;
    }
    let message = format!("the pi extension {}; and {detail}", by_design.join("; "));
    LoadError::Refused {
        path: path.clone(),
        message,
    }
}

/// What a refusal by design names, up to the event or method's name
/// ("listens for \`context", "calls \`pi.registerProvider"), which the
/// shape and the source search phrase alike.
fn named(why: &str) -> &str {
    let second = why
        .match_indices('`')
        .nth(1)
        .map_or(why.len(), |(at, _)| at);
    &why[..second]
}

/// The extension's per-user folder (pi's `getAgentDir()`): yohost's, not
/// pi's `~/.pi/agent`, under `$XDG_CONFIG_HOME/yohost/pi-agent` or
/// `~/.config/yohost/pi-agent`. The host does not create it, and the
/// extension reads or writes it only when its manifest grants it.
pub fn agent_dir() -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("XDG_CONFIG_HOME")
        .or_else(|| env("HOME").map(|home| home.join(".config")))
        .unwrap_or_else(std::env::temp_dir)
        .join("yohost/pi-agent")
}

/// What the adapter's modules are told (`pi:settings`): the platform as
/// Node names it, the folders `node:os` and `getAgentDir` answer, pi's
/// version, and the extension's entry (`process.argv[1]`).
fn settings(candidate: &Candidate) -> serde_json::Value {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    serde_json::json!({
        "platform": platform,
        "arch": arch,
        "home": home,
        "tmp": std::env::temp_dir(),
        "agentDir": agent_dir(),
        "piVersion": PI_VERSION,
        "versions": { "yohost": env!("CARGO_PKG_VERSION"), "pi": PI_VERSION },
        "entry": candidate.entry,
        // A required extension is whole or refused: nothing of it is left
        // out (the shape's `refuse`).
        "required": candidate.manifest.mode == yohost::Mode::Required,
    })
}
