//! `engine = "auto"`: a JavaScript or TypeScript plugin whose import graph
//! needs something the embedded engine lacks runs on Node.
//!
//! The embedded engine walks the whole import graph before any code runs
//! ([`modules`](crate::engines::js::modules)). What only Node has does not
//! stop the walk: a Node built-in module outside the flavor's table, or an
//! npm package with a native addon (a `.node` file, a `binding.gyp`, or
//! `"gypfile": true`), or a package file over the embedded engine's source
//! limit, is collected as a [`NodeNeed`]. Anything the walk
//! refuses for another reason (an import that leads outside the folder, a
//! package that is not installed) refuses the plugin whatever it needs, since
//! Node would not fix it. Only a graph whose one lack is Node comes back as
//! [`LoadError::NeedsNode`](crate::LoadError::NeedsNode), and
//! [`Adapters::load`](crate::adapter::Adapters::load) routes it:
//! - `engine = "auto"` with Node present: the plugin loads through the
//!   (node, ecosystem) adapter, and [`Loaded::routed`](crate::Loaded::routed)
//!   says why;
//! - `engine = "auto"` without Node: refused, naming what it needs and
//!   saying that installing Node would load it;
//! - `engine = "embedded"`: refused, naming what it needs.

use crate::model::EngineKind;
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
    /// Members a file reads from the namespace of a Node built-in
    /// (`fs.realpathSync` after `import * as fs from "node:fs"`) that the
    /// flavor's stand-in lacks. Unlike an imported name, reading a missing
    /// member is legal (it is `undefined`), so this need is soft: a plugin
    /// with no other need stays on the embedded engine when Node cannot
    /// take it, warned of the members.
    Members {
        /// The file that reads them.
        file: PathBuf,
        /// The module, as Node names it (`node:fs`).
        module: String,
        /// The members, quoted and joined (`` `realpathSync` ``).
        names: String,
    },
    /// A service the plugin injects, which its adapter provides only on
    /// Node (DSH's `shell`, say).
    Service {
        /// The plugin's entry, which declares it.
        file: PathBuf,
        /// The service, as the plugin names it.
        service: String,
    },
    /// A file of an npm package over the embedded engine's source limit
    /// (a bundle).
    Large {
        /// The file.
        file: PathBuf,
        /// The limit, in bytes.
        limit: u64,
    },
    /// An npm package that exports itself only under Node's `node`
    /// condition (`"exports": {"node": …}`), which only Node resolves.
    NodeCondition {
        /// The file that imports it.
        file: PathBuf,
        /// The package's name.
        package: String,
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
            NodeNeed::Members {
                file,
                module,
                names,
            } => write!(
                f,
                "{} reads {names} of \"{module}\", which the embedded engine's `{module}` does not provide",
                file.display()
            ),
            NodeNeed::Service { file, service } => write!(
                f,
                "{} injects `{service}`, a service its adapter provides only on Node",
                file.display()
            ),
            NodeNeed::Large { file, limit } => write!(
                f,
                "{} is over the limit of {limit} bytes of the embedded engine, which Node does not have",
                file.display()
            ),
            NodeNeed::NodeCondition { file, package } => write!(
                f,
                "{} imports \"{package}\", which exports itself only for Node (its `node` condition)",
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

    /// Whether every need is soft: members read from a built-in's
    /// namespace ([`NodeNeed::Members`]).
    pub fn only_members(&self) -> bool {
        self.0.iter().all(|n| matches!(n, NodeNeed::Members { .. }))
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
