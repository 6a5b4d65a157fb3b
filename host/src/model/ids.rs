//! The open ids of engines and ecosystems.
//!
//! An engine ([`EngineKind`]) and an ecosystem ([`Ecosystem`]) are each an
//! id: a short lowercase name. yohost's own engines have constants here;
//! an adapter crate brings its own ids as constants of its own
//! (`Ecosystem::new("pi")`) and registers them with its adapter, so a new
//! engine or ecosystem touches its own crate, not the host.
//!
//! A manifest names an ecosystem by its id. It reads as an [`Ecosystem`]
//! when the id is yohost's, one of the [`KNOWN_ECOSYSTEMS`] (whose crate a
//! refusal can then name), or one an adapter registered in this process;
//! any other id is refused, with the ids that are known.

use crate::model::names::closest;
use crate::model::sync::{read, write};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{OnceLock, RwLock};

/// The longest id, in bytes.
const MAX_ID_BYTES: usize = 32;

/// The engine a plugin runs on: one of yohost's, or one an adapter crate
/// brings ([`EngineKind::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EngineKind(&'static str);

impl EngineKind {
    /// Rust closures in the host's own process ([`NativePlugin`](crate::NativePlugin)).
    pub const NATIVE: EngineKind = EngineKind("native");
    /// A Rust dylib through the C ABI.
    pub const DYLIB: EngineKind = EngineKind("dylib");
    /// A Wasm component on wasmtime.
    pub const WASM: EngineKind = EngineKind("wasm");
    /// TypeScript or JavaScript on QuickJS.
    pub const JS: EngineKind = EngineKind("js");
    /// Python on embedded CPython.
    pub const PYTHON: EngineKind = EngineKind("python");
    /// TypeScript or JavaScript in a `node` process (`engine = "node"`).
    pub const NODE: EngineKind = EngineKind("node");

    /// An engine id an adapter crate brings: lowercase ASCII letters,
    /// digits and hyphens, at most 32 bytes (checked when an adapter that
    /// names it is registered).
    pub const fn new(id: &'static str) -> Self {
        EngineKind(id)
    }

    /// The engine's id.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for EngineKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

/// The plugin API a plugin is written against: yohost's own, or one an
/// adapter crate serves ([`Ecosystem::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ecosystem(&'static str);

impl Ecosystem {
    /// yohost's own contract.
    pub const YOHOST: Ecosystem = Ecosystem("yohost");

    /// An ecosystem id an adapter crate brings: lowercase ASCII letters,
    /// digits and hyphens, at most 32 bytes (checked when an adapter that
    /// names it is registered).
    pub const fn new(id: &'static str) -> Self {
        Ecosystem(id)
    }

    /// The ecosystem's id, as a manifest spells it.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The ecosystem a manifest's `ecosystem = "ID"` names: yohost's, a
    /// known one, or one an adapter registered in this process; `None`
    /// for any other id.
    pub fn named(id: &str) -> Option<Ecosystem> {
        if id == Self::YOHOST.0 {
            return Some(Self::YOHOST);
        }
        if let Some(known) = KNOWN_ECOSYSTEMS.iter().find(|k| k.ecosystem.0 == id) {
            return Some(known.ecosystem);
        }
        read(registered()).get(id).map(|id| Ecosystem(id))
    }

    /// Every id [`named`](Self::named) reads, sorted.
    pub fn known_ids() -> Vec<&'static str> {
        let mut ids: BTreeSet<&'static str> = read(registered()).clone();
        ids.insert(Self::YOHOST.0);
        ids.extend(KNOWN_ECOSYSTEMS.iter().map(|k| k.ecosystem.0));
        ids.into_iter().collect()
    }

    /// Make `self` nameable in manifests of this process: its adapter was
    /// registered. An id that is not one ([`check_id`]) is refused.
    pub(crate) fn register(self) -> Result<(), String> {
        check_id(self.0)?;
        write(registered()).insert(self.0);
        Ok(())
    }
}

impl Default for Ecosystem {
    fn default() -> Self {
        Self::YOHOST
    }
}

impl fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Ecosystem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Ecosystem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        Ecosystem::named(&id).ok_or_else(|| {
            let known = Ecosystem::known_ids();
            let hint = closest(&id, known.iter().copied())
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            serde::de::Error::custom(format!(
                "unknown ecosystem `{id}`{hint}: known are {}; an adapter crate registered with the host adds its own",
                known.join(", ")
            ))
        })
    }
}

/// An ecosystem yohost knows of before its adapter is registered, and the
/// crate that serves it.
#[derive(Debug, Clone, Copy)]
pub struct KnownEcosystem {
    /// Its id.
    pub ecosystem: Ecosystem,
    /// The adapter crate that serves its plugins.
    pub serving_crate: &'static str,
    /// How the npm packages of its API begin: a JavaScript or TypeScript
    /// plugin that imports one, or whose `package.json` depends on one, is
    /// written for it.
    pub packages: &'static [&'static str],
    /// The names of its plugins' files in a plugin directory (`*` stands
    /// for any name), as an entry or in a folder.
    pub files: &'static [&'static str],
}

/// The ecosystems yohost knows of, and the crate to register for each: a
/// plugin that bears one's marks (`packages`, `files`) while no adapter
/// here serves it is refused, naming the crate, instead of loading as
/// something it is not. With its adapter registered, the adapter alone
/// recognises its plugins.
pub const KNOWN_ECOSYSTEMS: &[KnownEcosystem] = &[
    KnownEcosystem {
        ecosystem: Ecosystem("pi"),
        serving_crate: "yohost-adapter-pi",
        packages: &["@earendil-works/pi-", "@mariozechner/pi-"],
        files: &[],
    },
    KnownEcosystem {
        ecosystem: Ecosystem("dsh"),
        serving_crate: "yohost-adapter-dsh",
        packages: &["@deepseek-ai/dsh"],
        files: &[],
    },
    KnownEcosystem {
        ecosystem: Ecosystem("rutis-agent"),
        serving_crate: "yohost-adapter-rutis-agent",
        packages: &[],
        files: &[],
    },
    KnownEcosystem {
        ecosystem: Ecosystem("mcp"),
        serving_crate: "yohost-adapter-mcp",
        packages: &[],
        files: &["mcp.json", "*.mcp.json", "claude_desktop_config.json"],
    },
];

/// The ecosystem ids adapters registered in this process.
fn registered() -> &'static RwLock<BTreeSet<&'static str>> {
    static REGISTERED: OnceLock<RwLock<BTreeSet<&'static str>>> = OnceLock::new();
    REGISTERED.get_or_init(Default::default)
}

/// Whether `id` is an id: 1 to 32 bytes of lowercase ASCII letters, digits
/// and hyphens, starting with a letter; else what is wrong with it.
pub(crate) fn check_id(id: &str) -> Result<(), String> {
    let well_formed = id.len() <= MAX_ID_BYTES
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if well_formed {
        Ok(())
    } else {
        Err(format!(
            "`{id}` is not an id: 1 to {MAX_ID_BYTES} lowercase ASCII letters, digits and hyphens, starting with a letter"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_ecosystem_reads_before_its_adapter_is_registered() {
        let pi: Ecosystem = serde_json::from_str("\"pi\"").unwrap();
        assert_eq!(pi, Ecosystem::new("pi"));
        assert_eq!(Ecosystem::named("yohost"), Some(Ecosystem::YOHOST));
    }

    #[test]
    fn an_unknown_ecosystem_is_refused_with_the_known_ids_until_it_is_registered() {
        let err = serde_json::from_str::<Ecosystem>("\"lisp-tools\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown ecosystem `lisp-tools`"), "{err}");
        assert!(err.contains("rutis-agent"), "{err}");
        let near = serde_json::from_str::<Ecosystem>("\"ip\"")
            .unwrap_err()
            .to_string();
        assert!(near.contains("did you mean `pi`"), "{near}");

        Ecosystem::new("lisp-tools").register().unwrap();
        let lisp: Ecosystem = serde_json::from_str("\"lisp-tools\"").unwrap();
        assert_eq!(lisp.as_str(), "lisp-tools");
    }

    #[test]
    fn an_id_is_short_lowercase_and_plain() {
        assert!(check_id("rutis-agent").is_ok());
        for bad in ["", "Pi", "1pi", "p i", "pi/x", &"a".repeat(33)] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
        assert!(Ecosystem::new("Bad Id").register().is_err());
    }
}
