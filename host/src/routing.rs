//! `engine = "auto"`: a JavaScript or TypeScript plugin whose import graph
//! needs something the embedded engine lacks runs on Node.
//!
//! The embedded engine walks the whole import graph before any code runs
//! ([`modules`](crate::engines::js::modules)). What only Node has does not
//! stop the walk: a Node built-in module outside the flavor's table, or an
//! npm package with a native addon (a `.node` file, a `binding.gyp`, or
//! `"gypfile": true`), is collected as a [`NodeNeed`]. Anything the walk
//! refuses for another reason (an import that leads outside the folder, a
//! package that is not installed) refuses the plugin whatever it needs, since
//! Node would not fix it. Only a graph whose one lack is Node comes back as
//! [`LoadError::NeedsNode`], and [`Adapters::load`] hands it to `route`:
//! - `engine = "auto"` with Node present: the plugin loads through the
//!   (node, ecosystem) adapter, and [`Loaded::routed`] says why;
//! - `engine = "auto"` without Node: refused, naming what it needs and
//!   saying that installing Node would load it;
//! - `engine = "embedded"`: refused, naming what it needs.

use crate::adapter::{open_grants, Adapters};
use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::manifest::EngineChoice;
use crate::plugin::{EngineKind, Loaded};
use std::path::PathBuf;

/// Something in a plugin's import graph that only Node provides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeNeed {
    /// A Node built-in module the flavor does not provide.
    Builtin {
        /// The file that imports or requires it.
        file: PathBuf,
        /// The module, as Node names it (`node:net`).
        module: String,
    },
    /// Names the flavor's stand-in for a Node built-in does not export.
    Names {
        /// The file that imports them.
        file: PathBuf,
        /// The module, as Node names it (`node:fs`).
        module: String,
        /// The names, quoted and joined (`` `createReadStream` ``).
        names: String,
    },
    /// An npm package with a native addon.
    NativeAddon {
        /// The file that imports or requires it.
        file: PathBuf,
        /// The package's name, or the addon file.
        package: String,
        /// What shows it is native: `binding.gyp`, `"gypfile": true`, or a
        /// `.node` file's path inside the package.
        evidence: String,
    },
}

impl std::fmt::Display for NodeNeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeNeed::Builtin { file, module } => write!(
                f,
                "{} imports \"{module}\": `{module}` is a Node built-in module the embedded engine does not provide",
                file.display()
            ),
            NodeNeed::Names {
                file,
                module,
                names,
            } => write!(
                f,
                "{} imports {names} from \"{module}\", which the embedded engine's `{module}` does not provide",
                file.display()
            ),
            NodeNeed::NativeAddon {
                file,
                package,
                evidence,
            } => write!(
                f,
                "{} imports \"{package}\", a native addon ({evidence}), which only Node loads",
                file.display()
            ),
        }
    }
}

/// Everything a plugin's import graph needs from Node, in the order the
/// walk found it (each one once).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeNeeds(pub Vec<NodeNeed>);

impl NodeNeeds {
    /// Record `need`, once.
    pub fn add(&mut self, need: NodeNeed) {
        if !self.0.contains(&need) {
            self.0.push(need);
        }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for NodeNeeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, need) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{need}")?;
        }
        Ok(())
    }
}

/// Why a plugin runs on the engine it does, when `engine = "auto"` chose
/// another than its file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed {
    /// The engine it runs on.
    pub engine: EngineKind,
    /// What made it go there, for `yohost check`.
    pub because: String,
}

/// Load `candidate`, whose embedded load found it `needs` Node: on Node
/// when its manifest leaves the engine to the host and Node is present;
/// else refused, naming what it needs and what would load it.
pub(crate) fn route(
    adapters: &Adapters,
    candidate: &Candidate,
    needs: NodeNeeds,
) -> Result<Loaded, LoadError> {
    let refused = |message: String| LoadError::Refused {
        path: candidate.entry.clone(),
        message,
    };
    if candidate.engine != EngineKind::Js || candidate.manifest.engine == EngineChoice::Embedded {
        return Err(refused(format!(
            "{needs} (`engine = \"embedded\"` in its plugin.toml keeps it off Node)"
        )));
    }
    if let Err(missing) = node_present() {
        return Err(refused(format!("{needs}; {missing}")));
    }
    let Some(adapter) = adapters.get(EngineKind::Node, candidate.ecosystem) else {
        return Err(refused(format!(
            "{needs}; it would run on Node, where no adapter serves {} plugins ({})",
            candidate.ecosystem.as_str(),
            adapters.serving(candidate.ecosystem)
        )));
    };
    let on_node = Candidate {
        engine: EngineKind::Node,
        ..candidate.clone()
    };
    let mut loaded = adapter.load(&on_node, open_grants(&on_node)?)?;
    loaded.routed = Some(Routed {
        engine: EngineKind::Node,
        because: needs.to_string(),
    });
    Ok(loaded)
}

/// Whether the Node engine can run here, or why not.
#[cfg(feature = "js")]
fn node_present() -> Result<(), crate::engines::node::NodeMissing> {
    crate::engines::node::node().map(|_| ())
}

/// Without the `js` feature no load finds a need for Node.
#[cfg(not(feature = "js"))]
fn node_present() -> Result<(), &'static str> {
    Err("this host was built without the `js` feature, which runs the Node engine")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_are_named_once_each_in_the_order_found() {
        let mut needs = NodeNeeds::default();
        let net = NodeNeed::Builtin {
            file: PathBuf::from("/p/index.ts"),
            module: "node:net".into(),
        };
        needs.add(net.clone());
        needs.add(NodeNeed::NativeAddon {
            file: PathBuf::from("/p/index.ts"),
            package: "fast-hash".into(),
            evidence: "binding.gyp".into(),
        });
        needs.add(net);
        assert_eq!(
            needs.to_string(),
            "/p/index.ts imports \"node:net\": `node:net` is a Node built-in module the embedded engine does not provide; \
             /p/index.ts imports \"fast-hash\", a native addon (binding.gyp), which only Node loads"
        );
    }
}
