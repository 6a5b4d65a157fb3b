//! Adapters: which code loads a plugin, by its engine and its ecosystem.
//!
//! Every plugin the host finds has an engine (the kind of file: dylib, Wasm,
//! JS, Python) and an ecosystem (the API it is written against: yohost's own,
//! pi, DSH, rutis-agent). [`Adapters`] is the one table, keyed by that pair,
//! that [`engines::load`](crate::engines::load) dispatches through. yohost's
//! own pairs are served by the engines; foreign ecosystems are served by
//! adapter crates (`adapters/<ecosystem>/`), registered with
//! [`PluginHostBuilder::adapter`](crate::PluginHostBuilder::adapter).
//! A pair with no entry is refused, naming the ecosystem, the engine and the
//! crate that serves it.
//!
//! An adapter may also *recognise* files of its engine whose manifest names
//! no ecosystem ([`Adapter::recognises`]); that is how a rutis-agent shared
//! library, which has no yohost entry point, reaches its adapter. The engines
//! themselves know nothing of any foreign ecosystem, and this module knows no
//! engine: the built-in engines register themselves here as every adapter
//! does (`Adapters::default()`, in `engines`), and a plugin the embedded
//! engine finds needs Node is routed to whatever serves the (node,
//! ecosystem) pair, once the (node, yohost) entry says Node is
//! [available](Adapter::available).

use crate::load::data_dir::grant_data_folder;
use crate::load::discovery::{inspect, Candidate, FolderEntry, Found};
use crate::load::error::LoadError;
use crate::load::grants::{Access, GrantError, Grants};
use crate::load::listing::{entries, hidden_entries};
use crate::load::loaded::Loaded;
use crate::load::manifest::EngineChoice;
use crate::load::routing::{NodeNeeds, Routed};
use crate::load::source::read_text;
use crate::model::ids::check_id;
use crate::model::limits::MAX_SOURCE_BYTES;
use crate::model::{Ecosystem, EngineKind, KnownEcosystem, KNOWN_ECOSYSTEMS};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Loads the plugins of one ecosystem on one engine.
pub trait Adapter: Send + Sync {
    /// The engine whose files this adapter loads.
    fn engine(&self) -> EngineKind;

    /// The ecosystem whose plugins this adapter loads.
    fn ecosystem(&self) -> Ecosystem;

    /// Turn a candidate of this (engine, ecosystem) pair into a plugin, or
    /// say why it is refused, in words a person can act on.
    /// `grants` are the plugin's file grants, already opened (a granted
    /// directory that cannot be opened refused the plugin before this).
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError>;

    /// Whether a file of this adapter's engine, whose manifest names no
    /// ecosystem, is written for this adapter's ecosystem. It must not run
    /// the file's code (read its bytes, bounded). Default: never.
    fn recognises(&self, _candidate: &Candidate) -> bool {
        false
    }

    /// Claim an entry of the plugin directory (a file or a folder) as this
    /// ecosystem's, before the host's own rules read it: its plugins (one
    /// file may hold several, as an MCP configuration does), each made with
    /// [`Candidate::new`], or why it is refused. `None` leaves the entry to
    /// the other adapters, then to the host. It must not run the entry's
    /// code. Default: none.
    fn discover(&self, _entry: &Path) -> Option<Vec<Found>> {
        None
    }

    /// The entry file of a folder whose manifest names none, as this
    /// ecosystem lays its packages out (a pi package's first extension).
    /// Default: none.
    fn folder_entry(&self, _folder: &Path) -> Option<FolderEntry> {
        None
    }

    /// Whether this adapter's engine can run on this machine, or why not,
    /// in words that say what would make it run (the Node engine needs a
    /// `node` of a supported version). Asked of the (engine, yohost) entry
    /// before a plugin is routed to that engine. Default: it can.
    fn available(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The candidate's file grants, opened: a granted directory that cannot be
/// opened refuses the plugin whatever its engine, and so does a write grant
/// over what the host later trusts: the plugin directory outside the
/// plugin's own folder (a file written there would load as a plugin, in
/// the host's process for a Python or dylib file), or the host's private
/// cache (compiled Wasm components and dylib copies, which run unchecked);
/// and any grant that reaches the OAuth tokens kept there; so is its [data folder](crate::load::data_dir).
pub(crate) fn open_grants(candidate: &Candidate) -> Result<Grants, LoadError> {
    let refuse = |error| LoadError::Grant {
        path: candidate.entry.clone(),
        error,
    };
    let grants =
        Grants::open(candidate.base_dir(), &candidate.manifest.capabilities).map_err(refuse)?;
    let own = candidate.root.canonicalize().ok();
    let directory = candidate.root.parent().and_then(|d| d.canonicalize().ok());
    let cache = crate::load::private_dir::cache_root();
    let cache = cache.canonicalize().unwrap_or(cache);
    let problem = |real: &Path| -> Option<String> {
        if cache.starts_with(real) || real.starts_with(&cache) {
            return Some(format!(
                "reaches the host's private cache {}: what is written there runs unchecked",
                cache.display()
            ));
        }
        let (own, directory) = (own.as_ref()?, directory.as_ref()?);
        if directory.starts_with(real) {
            Some("holds the plugin directory: a file written there would load as a plugin".into())
        } else if real.starts_with(directory) && !real.starts_with(own) {
            Some(format!(
                "is in the plugin directory {}, outside the plugin's own folder: a file written there would load as a plugin",
                directory.display()
            ))
        } else {
            None
        }
    };
    // The tokens' folder, whether or not it exists yet.
    let tokens = cache.join(crate::load::private_dir::TOKENS);
    let secret = |real: &Path| {
        (tokens.starts_with(real) || real.starts_with(&tokens)).then(|| {
            format!(
                "reaches {}, where yohost keeps the OAuth tokens servers gave it (grant narrower folders, or set YOHOST_CACHE_DIR to a folder outside it)",
                tokens.display()
            )
        })
    };
    let over = grants.iter().find_map(|grant| {
        let problem = match grant.access() {
            Access::Write => problem(grant.real()),
            Access::Read => secret(grant.real()),
        }?;
        Some(GrantError {
            access: grant.access(),
            grant: grant.written().to_path_buf(),
            path: grant.real().to_path_buf(),
            problem,
        })
    });
    match over {
        Some(error) => Err(refuse(error)),
        None => grant_data_folder(candidate, grants, problem),
    }
}

/// The crate that serves an ecosystem's plugins, when yohost knows of it
/// ([`KNOWN_ECOSYSTEMS`]).
pub fn serving_crate(ecosystem: Ecosystem) -> Option<&'static str> {
    known(ecosystem).map(|k| k.serving_crate)
}

fn known(ecosystem: Ecosystem) -> Option<&'static KnownEcosystem> {
    KNOWN_ECOSYSTEMS.iter().find(|k| k.ecosystem == ecosystem)
}

/// Whether an entry's file name is one of `patterns` (`*` stands for any
/// name: `*.mcp.json`), or it is a folder holding a file of a plain one.
fn bears_file_mark(entry: &Path, patterns: &[&str]) -> bool {
    let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
    patterns
        .iter()
        .any(|pattern| match pattern.strip_prefix('*') {
            Some(suffix) => name.len() > suffix.len() && name.ends_with(suffix),
            None => name == *pattern || entry.join(pattern).is_file(),
        })
}

/// The plugins an adapter discovered, of its `ecosystem` unless their
/// manifest names another.
fn owned(ecosystem: Ecosystem, mut found: Vec<Found>) -> Vec<Found> {
    for candidate in found.iter_mut().filter_map(|f| match f {
        Found::Plugin(candidate) => Some(candidate),
        Found::Refused { .. } => None,
    }) {
        if candidate.manifest.ecosystem.is_none() {
            candidate.ecosystem = ecosystem;
        }
    }
    found
}

/// The table of adapters, one per (engine, ecosystem) pair.
#[derive(Clone)]
pub struct Adapters {
    entries: BTreeMap<(&'static str, &'static str), Entry>,
}

#[derive(Clone)]
struct Entry {
    engine: EngineKind,
    ecosystem: Ecosystem,
    adapter: Arc<dyn Adapter>,
}

impl Adapters {
    /// A table with no entries, not even the built-in engines'
    /// ([`Adapters::default`] has those).
    pub(crate) fn empty() -> Self {
        Adapters {
            entries: BTreeMap::new(),
        }
    }

    /// Add `adapter`, replacing any entry for its (engine, ecosystem)
    /// pair; its ecosystem's id reads in manifests from now on.
    ///
    /// # Panics
    ///
    /// When the adapter's engine or ecosystem id is not an id (lowercase
    /// ASCII letters, digits and hyphens, starting with a letter, at most
    /// 32 bytes): ids are constants of the adapter's crate.
    pub fn register(&mut self, adapter: Arc<dyn Adapter>) {
        let (engine, ecosystem) = (adapter.engine(), adapter.ecosystem());
        if let Err(problem) = check_id(engine.as_str()).and_then(|()| ecosystem.register()) {
            panic!("an adapter's id is malformed: {problem}");
        }
        self.entries.insert(
            (engine.as_str(), ecosystem.as_str()),
            Entry {
                engine,
                ecosystem,
                adapter,
            },
        );
    }

    /// The adapter for a pair, if one is registered.
    pub fn get(&self, engine: EngineKind, ecosystem: Ecosystem) -> Option<&Arc<dyn Adapter>> {
        self.entries
            .get(&(engine.as_str(), ecosystem.as_str()))
            .map(|e| &e.adapter)
    }

    /// Every plugin of `dir`, in the order of the entries' names. An entry
    /// that an adapter [discovers](Adapter::discover) is that adapter's,
    /// of its ecosystem unless a manifest names another (each ecosystem's
    /// adapters are asked once, in the order of their ids); an entry bearing the file marks of a known ecosystem that no
    /// adapter here serves is refused, naming the crate; any other is read
    /// by the host's rules, with the entries adapters
    /// [propose](Adapter::folder_entry) for folders. Only a directory that
    /// cannot be read is an error.
    pub fn scan(&self, dir: &Path) -> std::io::Result<Vec<Found>> {
        let mut asked: Vec<Ecosystem> = Vec::new();
        let foreign: Vec<&Arc<dyn Adapter>> = self
            .entries
            .values()
            .filter(|e| e.ecosystem != Ecosystem::YOHOST)
            .filter(|e| {
                let first = !asked.contains(&e.ecosystem);
                asked.push(e.ecosystem);
                first
            })
            .map(|e| &e.adapter)
            .collect();
        let proposals = |folder: &Path| -> Vec<FolderEntry> {
            foreign
                .iter()
                .filter_map(|a| a.folder_entry(folder))
                .collect()
        };
        let discovered = |path: &Path| {
            foreign
                .iter()
                .find_map(|a| Some(owned(a.ecosystem(), a.discover(path)?)))
        };
        // A hidden entry is a plugin only if an adapter recognises it.
        let hidden = hidden_entries(dir)?
            .into_iter()
            .filter_map(|path| discovered(&path))
            .flatten();
        let open = entries(dir)?.into_iter().flat_map(|path| {
            discovered(&path)
                .or_else(|| self.unserved_file(&path).map(|found| vec![found]))
                .unwrap_or_else(|| vec![inspect(&path, &proposals)])
        });
        Ok(hidden.chain(open).collect())
    }

    /// The refusal of an entry that bears the file marks of a known
    /// ecosystem no adapter here serves, if it does.
    fn unserved_file(&self, path: &Path) -> Option<Found> {
        let unserved = KNOWN_ECOSYSTEMS
            .iter()
            .filter(|k| !self.serves(k.ecosystem))
            .find(|k| bears_file_mark(path, k.files))?;
        let name = path.file_name()?.to_string_lossy();
        let name = name.split('.').next().unwrap_or(&name).to_string();
        Some(Found::Refused {
            name,
            file: path.to_path_buf(),
            reason: LoadError::Unserved {
                path: path.to_path_buf(),
                ecosystem: unserved.ecosystem,
                serving: self.serving(unserved.ecosystem),
            },
        })
    }

    /// Whether any adapter here serves `ecosystem`.
    fn serves(&self, ecosystem: Ecosystem) -> bool {
        self.entries.values().any(|e| e.ecosystem == ecosystem)
    }

    /// Give a candidate whose manifest names no ecosystem to the first
    /// foreign adapter of its engine that recognises it (in the order of
    /// ecosystem ids). A JavaScript or TypeScript plugin that no adapter
    /// recognises, but that bears the package marks of a known ecosystem
    /// no adapter serves on its engine, is given that ecosystem, so that it
    /// is refused naming the crate rather than loaded as yohost's; one
    /// whose source cannot be read is refused, not guessed. A manifest's
    /// `ecosystem` always wins.
    pub fn classify(&self, candidate: &mut Candidate) -> Result<(), LoadError> {
        if candidate.manifest.ecosystem.is_some() || candidate.ecosystem != Ecosystem::YOHOST {
            return Ok(());
        }
        let source = match [EngineKind::JS, EngineKind::NODE].contains(&candidate.engine) {
            true => Some(
                read_text(&candidate.entry, MAX_SOURCE_BYTES).map_err(|problem| {
                    LoadError::Unreadable {
                        path: candidate.entry.clone(),
                        problem,
                    }
                })?,
            ),
            false => None,
        };
        let recognised = self
            .entries
            .values()
            .find(|e| {
                e.engine == candidate.engine
                    && e.ecosystem != Ecosystem::YOHOST
                    && e.adapter.recognises(candidate)
            })
            .map(|e| e.ecosystem);
        let unserved = || self.unserved_packages(candidate, source.as_deref()?);
        if let Some(ecosystem) = recognised.or_else(unserved) {
            candidate.ecosystem = ecosystem;
        }
        Ok(())
    }

    /// The known ecosystem with no adapter on the candidate's engine whose
    /// packages its `source` imports or its `package.json` depends on, if
    /// any.
    fn unserved_packages(&self, candidate: &Candidate, source: &str) -> Option<Ecosystem> {
        let unserved: Vec<&KnownEcosystem> = KNOWN_ECOSYSTEMS
            .iter()
            .filter(|k| !k.packages.is_empty() && self.get(candidate.engine, k.ecosystem).is_none())
            .collect();
        if unserved.is_empty() {
            return None;
        }
        let package = match candidate.root.is_dir() {
            true => read_text(&candidate.root.join("package.json"), MAX_SOURCE_BYTES)
                .unwrap_or_default(),
            false => String::new(),
        };
        unserved
            .iter()
            .find(|k| {
                k.packages.iter().any(|prefix| {
                    source.contains(prefix) || package.contains(&format!("\"{prefix}"))
                })
            })
            .map(|k| k.ecosystem)
    }

    /// Load a candidate through the entry for its (engine, ecosystem) pair.
    /// A pair with no entry is refused with [`LoadError::NoAdapter`]; a
    /// plugin the embedded engine finds needs Node is routed
    /// (the Node routing ([`NodeNeeds`](crate::NodeNeeds))).
    pub fn load(&self, candidate: &Candidate) -> Result<Loaded, LoadError> {
        match self.get(candidate.engine, candidate.ecosystem) {
            Some(adapter) => match adapter.load(candidate, open_grants(candidate)?) {
                Err(LoadError::NeedsNode { needs, .. }) => self.route(candidate, needs),
                loaded => loaded,
            },
            None => Err(LoadError::NoAdapter {
                path: candidate.entry.clone(),
                engine: candidate.engine,
                ecosystem: candidate.ecosystem,
                serving: self.serving(candidate.ecosystem),
            }),
        }
    }

    /// Load `candidate`, whose embedded load found it `needs` Node: on Node
    /// when its manifest leaves the engine to the host and Node is present;
    /// else refused, naming what it needs and what would load it
    /// ([`crate::NodeNeeds`]). A plugin whose only needs are members it
    /// reads from a built-in's namespace ([`NodeNeed::Members`](crate::NodeNeed::Members)) stays on
    /// the embedded engine when Node cannot take it, warned of them.
    fn route(&self, candidate: &Candidate, needs: NodeNeeds) -> Result<Loaded, LoadError> {
        let refused = |message: String| LoadError::Refused {
            path: candidate.entry.clone(),
            message,
        };
        if candidate.engine != EngineKind::JS || candidate.manifest.engine == EngineChoice::Embedded
        {
            return Err(refused(format!(
                "{needs} (`engine = \"embedded\"` in its plugin.toml keeps it off Node)"
            )));
        }
        let adapter = match self.node_adapter(candidate.ecosystem) {
            Ok(adapter) => adapter,
            Err(why_not) if needs.only_members() => {
                return self.stay_embedded(candidate, &why_not);
            }
            Err(why_not) => return Err(refused(format!("{needs}; {why_not}"))),
        };
        let on_node = Candidate {
            engine: EngineKind::NODE,
            ..candidate.clone()
        };
        let mut loaded = adapter
            .load(&on_node, open_grants(&on_node)?)
            .map_err(|error| LoadError::RefusedOnNode {
                because: needs.to_string(),
                error: Box::new(error),
            })?;
        loaded.routed = Some(Routed {
            engine: EngineKind::NODE,
            because: needs.to_string(),
        });
        Ok(loaded)
    }

    /// The adapter that runs `ecosystem`'s plugins on Node, or why there is
    /// none here.
    fn node_adapter(&self, ecosystem: Ecosystem) -> Result<&Arc<dyn Adapter>, String> {
        self.available(EngineKind::NODE)?;
        self.get(EngineKind::NODE, ecosystem).ok_or_else(|| {
            format!(
                "it would run on Node, where no adapter serves {} plugins ({})",
                ecosystem.as_str(),
                self.serving(ecosystem)
            )
        })
    }

    /// Load `candidate` on the embedded engine after all (`engine =
    /// "embedded"`), its reads of members the engine lacks being warnings:
    /// Node, which has them, cannot take it (`why_not`).
    fn stay_embedded(&self, candidate: &Candidate, why_not: &str) -> Result<Loaded, LoadError> {
        let mut embedded = candidate.clone();
        embedded.manifest.engine = EngineChoice::Embedded;
        let Some(adapter) = self.get(embedded.engine, embedded.ecosystem) else {
            return Err(LoadError::NoAdapter {
                path: embedded.entry.clone(),
                engine: embedded.engine,
                ecosystem: embedded.ecosystem,
                serving: self.serving(embedded.ecosystem),
            });
        };
        let mut loaded = adapter.load(&embedded, open_grants(&embedded)?)?;
        loaded
            .warnings
            .push(format!("it stays on the embedded engine: {why_not}"));
        Ok(loaded)
    }

    /// Whether `engine` can run here, as its (engine, yohost) entry says;
    /// an engine with no such entry is not built into this host.
    fn available(&self, engine: EngineKind) -> Result<(), String> {
        match self.get(engine, Ecosystem::YOHOST) {
            Some(adapter) => adapter.available(),
            None => Err(format!(
                "this host has no {} engine registered",
                engine.as_str()
            )),
        }
    }

    /// Who serves `ecosystem`: the engines it is registered for here, else
    /// the crate to register.
    pub(crate) fn serving(&self, ecosystem: Ecosystem) -> String {
        let engines: Vec<&str> = self
            .entries
            .values()
            .filter(|e| e.ecosystem == ecosystem)
            .map(|e| e.engine.as_str())
            .collect();
        if engines.is_empty() {
            match serving_crate(ecosystem) {
                Some(crate_name) => format!(
                    "register the adapter crate `{crate_name}` with PluginHost::builder(dir).adapter(..)"
                ),
                None => format!(
                    "register the adapter crate that serves `{}` with PluginHost::builder(dir).adapter(..)",
                    ecosystem.as_str()
                ),
            }
        } else {
            format!(
                "this host loads {} plugins only on the {} engine",
                ecosystem.as_str(),
                engines.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::manifest::Manifest;
    use std::path::PathBuf;

    const RUTIS: Ecosystem = Ecosystem::new("rutis-agent");
    const PI: Ecosystem = Ecosystem::new("pi");

    fn candidate(engine: EngineKind, ecosystem: Option<Ecosystem>) -> Candidate {
        let manifest = Manifest {
            ecosystem,
            ..Manifest::default()
        };
        Candidate {
            name: "c".into(),
            root: PathBuf::from("/nowhere/c"),
            entry: PathBuf::from("/nowhere/c/entry"),
            engine,
            named_by_manifest: false,
            ecosystem: ecosystem.unwrap_or_default(),
            manifest,
            manifest_as_read: None,
            fingerprint: Vec::new(),
            dry_run: false,
            data_dir: None,
        }
    }

    /// Claims every dylib and loads nothing.
    struct Claims;

    impl Adapter for Claims {
        fn engine(&self) -> EngineKind {
            EngineKind::DYLIB
        }
        fn ecosystem(&self) -> Ecosystem {
            RUTIS
        }
        fn load(&self, candidate: &Candidate, _grants: Grants) -> Result<Loaded, LoadError> {
            Err(LoadError::Refused {
                path: candidate.entry.clone(),
                message: "reached the claiming adapter".into(),
            })
        }
        fn recognises(&self, _candidate: &Candidate) -> bool {
            true
        }
    }

    #[test]
    fn a_pair_with_no_entry_is_refused_naming_ecosystem_engine_and_crate() {
        let table = Adapters::default();
        let err = table
            .load(&candidate(EngineKind::DYLIB, Some(RUTIS)))
            .err()
            .expect("refused");
        assert!(matches!(
            err,
            LoadError::NoAdapter {
                ecosystem,
                engine,
                ..
            } if ecosystem == RUTIS && engine == EngineKind::DYLIB
        ));
        let text = err.to_string();
        assert!(text.contains("yohost-adapter-rutis-agent"), "{text}");
        let err = table
            .load(&candidate(EngineKind::PYTHON, Some(PI)))
            .err()
            .expect("refused");
        assert!(err.to_string().contains("yohost-adapter-pi"), "{err}");
    }

    #[test]
    fn a_registered_adapter_serves_its_pair_and_recognises_unnamed_files_only() {
        let mut table = Adapters::default();
        table.register(Arc::new(Claims));
        let mut plain = candidate(EngineKind::DYLIB, None);
        table.classify(&mut plain).unwrap();
        assert_eq!(plain.ecosystem, RUTIS);
        let err = table.load(&plain).err().expect("refused by the adapter");
        assert!(err.to_string().contains("reached the claiming adapter"));

        let mut named = candidate(EngineKind::DYLIB, Some(Ecosystem::YOHOST));
        table.classify(&mut named).unwrap();
        assert_eq!(named.ecosystem, Ecosystem::YOHOST, "the manifest wins");
        let mut wasm = candidate(EngineKind::WASM, None);
        table.classify(&mut wasm).unwrap();
        assert_eq!(wasm.ecosystem, Ecosystem::YOHOST, "another engine's file");
    }
}
