//! `plugin.toml`: the optional manifest beside a plugin.
//!
//! Every field is optional. What each means when absent is said on the
//! field. Unknown fields are an error, so a typo is reported instead of
//! silently ignored.
//!
//! ```toml
//! name = "guard"            # default: the plugin's own name, else the file or folder name
//! mode = "required"         # default: "advisory"
//! priority = 10             # default: 100; lower runs first
//! ecosystem = "pi"          # default: detected from the source's imports
//! entry = "src/main.ts"     # default: the obvious entry of the folder
//! engine = "node"           # JS/TS only: "auto" (default: embedded, Node when the import graph needs it), "embedded" or "node"
//!
//! [timeouts]                # milliseconds, 1 to 86400000 (a day); default: the contract's per hook
//! before_tool = 2000
//! load = 3000               # loading a Python plugin (its import); default: 10 s
//!
//! [limits]
//! memory_mib = 128          # 1 to 65536 (64 GiB); default: 64 (enforced by the Wasm and JS engines)
//!
//! [capabilities]            # default: nothing is granted
//! read = ["data"]           # directories the plugin may read (relative to the plugin)
//! write = ["out"]           # directories it may read and write
//! env = ["HOME"]            # environment variables it may see
//! network = false           # whether it may open connections: false, true (any host),
//!                           # or the hosts it may reach, e.g. ["api.example.com", "*.example.org"]
//! exec = false              # whether it may start processes (pi's `pi.exec`)
//!
//! [config]                  # settings for the plugin, read by its adapter
//! allowParallelInProgress = true   # (DSH: checked against the plugin's `Config`)
//! ```
//!
//! A plugin's name, wherever it comes from, is 1 to 64 characters: letters,
//! digits, and `-`, `_`, `.`, `@`, `/`, `+` or `:` (see [`check_name`]).
//! Names appear in log lines and in messages the model reads, so a name
//! with spaces, quotes or control characters is refused.

mod capabilities;
mod names;
mod text;

pub use capabilities::{Capabilities, Network};
pub use names::{check_name, NameError, MAX_NAME_CHARS};

use crate::load::source::{read_text, ReadError};
use crate::model::limits::MAX_SOURCE_BYTES;
use crate::model::{Ecosystem, Mode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use text::{nesting_depth, one_line};
use yohost_contract::Hook;

/// The manifest file's name.
pub const MANIFEST_FILE: &str = "plugin.toml";

/// The `[timeouts]` key that bounds loading the plugin rather than a hook.
pub const LOAD_TIMEOUT_KEY: &str = "load";

/// How long loading a plugin may take when `[timeouts] load` is absent.
/// Python imports honour it; the Wasm and JS engines bound their loads with
/// limits of their own.
pub const DEFAULT_LOAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The priority of a plugin whose manifest sets none.
pub const DEFAULT_PRIORITY: i64 = 100;

/// The memory limits `[limits] memory_mib` accepts, in MiB.
pub const MEMORY_MIB: std::ops::RangeInclusive<u64> = 1..=65536;

/// The timeouts `[timeouts]` accepts, in milliseconds (up to a day).
pub const TIMEOUT_MS: std::ops::RangeInclusive<u64> = 1..=86_400_000;

/// How deeply `[`/`{` may nest in a manifest. Deeper text is refused before
/// it is parsed, so no manifest can exhaust the parser's stack.
pub const MAX_NESTING: usize = 32;

/// Why a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot be read: {0}")]
    Unreadable(ReadError),
    /// Arrays or tables nest deeper than [`MAX_NESTING`].
    #[error("arrays or tables nest deeper than {MAX_NESTING} levels")]
    TooDeep,
    /// Not valid TOML, or a field of the wrong type or unknown.
    #[error("{0}")]
    Syntax(String),
    /// `[timeouts]` names a hook that does not exist.
    #[error("[timeouts] names unknown hook `{hook}` (known: {known}, load)", known = Hook::ALL.map(|h| h.as_str()).join(", "))]
    UnknownHook {
        /// The name it used.
        hook: String,
    },
    /// A number outside what the field accepts.
    #[error("`{field}` is {value}, but must be between {min} and {max} {unit}")]
    OutOfRange {
        /// The field, as the manifest spells it.
        field: String,
        /// The value it has.
        value: u64,
        /// The least value accepted.
        min: u64,
        /// The greatest value accepted.
        max: u64,
        /// The unit of the field.
        unit: &'static str,
    },
    /// `name` is not a valid plugin name.
    #[error("`name`: {0}")]
    Name(NameError),
    /// `capabilities.network` lists something that is not a host name.
    #[error("`capabilities.network` lists {host:?}, which is not a host name: list names such as \"api.example.com\" or \"*.example.org\", without scheme, port or path")]
    NetworkHost {
        /// The entry as written.
        host: String,
    },
}

/// Which engine runs a JavaScript or TypeScript plugin (`engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// The engine the entry's extension names; a JavaScript or TypeScript
    /// plugin whose import graph needs what only Node has (a Node built-in
    /// outside the flavor's table, a native addon) runs on Node
    /// (the Node routing ([`NodeNeeds`](crate::NodeNeeds))).
    #[default]
    Auto,
    /// The embedded engine only: a plugin that needs Node is refused.
    Embedded,
    /// A `node` process: for plugins that need all of Node.
    Node,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Memory for the plugin's instance in MiB. Absent: 64 MiB.
    pub memory_mib: Option<u64>,
    /// How many processes the plugin may run at once (the Node engine's,
    /// `exec`'s, an MCP server's). Absent:
    /// [`PROCESSES_PER_PLUGIN`](crate::sandbox::PROCESSES_PER_PLUGIN).
    pub processes: Option<u32>,
}

/// A parsed `plugin.toml` (all defaults when the file is absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The plugin's name. Absent: the plugin's own name, else the file stem.
    pub name: Option<String>,
    /// Advisory or required. Absent: advisory.
    #[serde(default)]
    pub mode: Mode,
    /// Lower runs first; ties keep the order of names. Absent: 100.
    pub priority: Option<i64>,
    /// The plugin's API. Absent: detected from the source's imports.
    pub ecosystem: Option<Ecosystem>,
    /// The entry file, relative to the plugin's folder. Absent: the obvious
    /// entry (`index.ts`, `__init__.py`, the only `.wasm`/`.so`, ...).
    pub entry: Option<PathBuf>,
    /// The engine of a JavaScript or TypeScript plugin. Absent: `auto`.
    #[serde(default)]
    pub engine: EngineChoice,
    /// Per-hook timeouts in milliseconds, and `load`. Absent: the contract's
    /// defaults, and [`DEFAULT_LOAD_TIMEOUT`].
    #[serde(default)]
    pub timeouts: BTreeMap<String, u64>,
    /// Resource limits.
    #[serde(default)]
    pub limits: Limits,
    /// What the plugin is granted.
    #[serde(default)]
    pub capabilities: Capabilities,
    /// Settings for the plugin, which its adapter hands it (a DSH plugin's
    /// config). Absent: empty, so the plugin's own defaults apply.
    #[serde(default)]
    pub config: toml::Table,
    /// The manifests of the servers of an MCP plugin's `mcp.json`, by their
    /// key (`[servers.NAME]`): a server with a table here has that manifest
    /// instead of the rest of this one. Absent: every server has this one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, Manifest>,
}

impl Manifest {
    /// Read `path` (a regular file of at most
    /// [`crate::model::limits::MAX_SOURCE_BYTES`]). A missing
    /// file is the default manifest. The error does not name the file: the
    /// caller, who knows it, does.
    pub fn read(path: &Path) -> Result<Manifest, ManifestError> {
        match read_text(path, MAX_SOURCE_BYTES) {
            Ok(text) => Manifest::parse(&text),
            Err(e) if e.is_not_found() => Ok(Manifest::default()),
            Err(e) => Err(ManifestError::Unreadable(e)),
        }
    }

    /// Parse manifest text, and check what the types alone do not: hook
    /// names in `[timeouts]`, the ranges of numbers, and the name.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        if nesting_depth(text) > MAX_NESTING {
            return Err(ManifestError::TooDeep);
        }
        let manifest: Manifest =
            toml::from_str(text).map_err(|e| ManifestError::Syntax(one_line(text, &e)))?;
        manifest.check()?;
        for server in manifest.servers.values() {
            if !server.servers.is_empty() {
                return Err(ManifestError::Syntax(
                    "a [servers.NAME] table cannot hold servers of its own".into(),
                ));
            }
            server.check()?;
        }
        Ok(manifest)
    }

    /// Check what the types alone do not (see [`Manifest::parse`]).
    fn check(&self) -> Result<(), ManifestError> {
        let manifest = self;
        if let Some(name) = &manifest.name {
            check_name(name).map_err(ManifestError::Name)?;
        }
        for (hook, ms) in &manifest.timeouts {
            if hook != LOAD_TIMEOUT_KEY && Hook::from_name(hook).is_none() {
                return Err(ManifestError::UnknownHook { hook: hook.clone() });
            }
            in_range(&format!("timeouts.{hook}"), *ms, TIMEOUT_MS, "milliseconds")?;
        }
        if let Some(mib) = manifest.limits.memory_mib {
            in_range("limits.memory_mib", mib, MEMORY_MIB, "MiB")?;
        }
        if let Some(host) = manifest.capabilities.network.invalid_host() {
            return Err(ManifestError::NetworkHost {
                host: host.to_string(),
            });
        }
        Ok(())
    }

    /// The timeout of `hook` for this plugin. A value outside
    /// [`TIMEOUT_MS`] (only a manifest built in code can hold one) is
    /// clamped into it.
    pub fn timeout(&self, hook: Hook) -> Duration {
        self.timeouts
            .get(hook.as_str())
            .map(|ms| Duration::from_millis((*ms).clamp(*TIMEOUT_MS.start(), *TIMEOUT_MS.end())))
            .unwrap_or_else(|| hook.default_timeout())
    }

    /// How long loading the plugin may take (`[timeouts] load`).
    pub fn load_timeout(&self) -> Duration {
        self.timeouts
            .get(LOAD_TIMEOUT_KEY)
            .map(|ms| Duration::from_millis(*ms))
            .unwrap_or(DEFAULT_LOAD_TIMEOUT)
    }

    /// The memory limit in bytes. A value outside [`MEMORY_MIB`] (only a
    /// manifest built in code, not parsed, can hold one) is clamped into it.
    pub fn memory_bytes(&self) -> u64 {
        self.limits
            .memory_mib
            .map(|mib| mib.clamp(*MEMORY_MIB.start(), *MEMORY_MIB.end()) * 1024 * 1024)
            .unwrap_or(crate::model::limits::DEFAULT_MEMORY_BYTES)
    }

    /// The priority (lower runs first).
    pub fn priority(&self) -> i64 {
        self.priority.unwrap_or(DEFAULT_PRIORITY)
    }
}

fn in_range(
    field: &str,
    value: u64,
    range: std::ops::RangeInclusive<u64>,
    unit: &'static str,
) -> Result<(), ManifestError> {
    if range.contains(&value) {
        return Ok(());
    }
    Err(ManifestError::OutOfRange {
        field: field.into(),
        value,
        min: *range.start(),
        max: *range.end(),
        unit,
    })
}

/// The mode a plugin's manifest `text` asks for, even when it does not
/// parse as a manifest: its `mode` key when the text is TOML (advisory
/// without one), and required when it is not TOML at all or names no mode
/// the host knows (it may be a required policy's: fail closed).
pub fn intended_mode(text: &str) -> Mode {
    let Ok(table) = text.parse::<toml::Table>() else {
        return Mode::Required;
    };
    match table.get("mode").and_then(toml::Value::as_str) {
        None if !table.contains_key("mode") => Mode::Advisory,
        Some("advisory") => Mode::Advisory,
        _ => Mode::Required,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_names_the_key_meant() {
        let refused = Manifest::parse("entyr = \"x.ts\"\n")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("did you mean `entry`?"), "{refused}");
        let refused = Manifest::parse("zzzzzz = 1\n").unwrap_err().to_string();
        assert!(!refused.contains("did you mean"), "{refused}");
    }

    #[test]
    fn a_manifest_that_does_not_parse_keeps_the_mode_it_asks_for() {
        assert_eq!(intended_mode("entyr = \"x.ts\"\n"), Mode::Advisory);
        assert_eq!(
            intended_mode("mode = \"advisory\"\nentyr = 1\n"),
            Mode::Advisory
        );
        assert_eq!(
            intended_mode("mode = \"required\"\nentyr = 1\n"),
            Mode::Required
        );
        assert_eq!(intended_mode("mode = \"requird\"\n"), Mode::Required);
        assert_eq!(intended_mode("entry = [broken"), Mode::Required);
    }

    #[test]
    fn absent_fields_take_their_documented_defaults() {
        let m = Manifest::parse("").unwrap();
        assert_eq!(m.mode, Mode::Advisory);
        assert_eq!(m.priority(), DEFAULT_PRIORITY);
        assert_eq!(m.timeout(Hook::BeforeTool), Duration::from_secs(10));
        assert_eq!(m.load_timeout(), DEFAULT_LOAD_TIMEOUT);
        assert_eq!(m.memory_bytes(), 64 * 1024 * 1024);
        assert_eq!(m.capabilities, Capabilities::default());
    }

    #[test]
    fn unknown_fields_and_hooks_are_errors_that_name_them() {
        let err = Manifest::parse("nmae = \"x\"").unwrap_err();
        assert!(matches!(err, ManifestError::Syntax(_)), "{err}");
        assert!(err.to_string().contains("nmae"), "{err}");
        let err = Manifest::parse("[timeouts]\nbefore_everything = 5").unwrap_err();
        assert_eq!(
            err,
            ManifestError::UnknownHook {
                hook: "before_everything".into()
            }
        );
        let err = Manifest::parse("mode = \"sometimes\"").unwrap_err();
        assert!(matches!(err, ManifestError::Syntax(_)), "{err}");
    }

    #[test]
    fn numbers_outside_their_range_are_refused_with_the_range() {
        for (text, field) in [
            ("[limits]\nmemory_mib = 0", "limits.memory_mib"),
            ("[limits]\nmemory_mib = 17592186044416", "limits.memory_mib"),
            ("[timeouts]\nbefore_tool = 0", "timeouts.before_tool"),
            (
                "[timeouts]\ncall_tool = 9223372036854775807",
                "timeouts.call_tool",
            ),
        ] {
            match Manifest::parse(text) {
                Err(ManifestError::OutOfRange { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{text}: {other:?}"),
            }
        }
        let m =
            Manifest::parse("[limits]\nmemory_mib = 65536\n[timeouts]\ntools = 86400000").unwrap();
        assert_eq!(m.memory_bytes(), 64 << 30);
        assert_eq!(m.timeout(Hook::Tools), Duration::from_secs(86_400));
        let negative = Manifest::parse("[limits]\nmemory_mib = -1").unwrap_err();
        assert!(matches!(negative, ManifestError::Syntax(_)), "{negative}");
    }

    #[test]
    fn names_must_be_short_printable_words() {
        for (name, problem) in [
            ("", NameError::Empty),
            ("a\u{0}b", NameError::BadChar('\0')),
            ("line\nbreak", NameError::BadChar('\n')),
            ("two words", NameError::BadChar(' ')),
            ("quote'", NameError::BadChar('\'')),
            ("rtl\u{202e}", NameError::BadChar('\u{202e}')),
        ] {
            assert_eq!(check_name(name), Err(problem), "{name:?}");
        }
        assert_eq!(check_name(&"x".repeat(65)), Err(NameError::TooLong(65)));
        for good in [
            "guard",
            "tag-a",
            "@scope/pi-tool",
            "v1.2+b:c",
            "é",
            &"x".repeat(64),
        ] {
            assert_eq!(check_name(good), Ok(()), "{good:?}");
        }
        let err = Manifest::parse("name = \"a\\u0000b\"").unwrap_err();
        assert_eq!(err, ManifestError::Name(NameError::BadChar('\0')));
        assert!(err.to_string().contains("1 to 64 characters"), "{err}");
        assert_eq!(
            Manifest::parse("name = \"\"").unwrap_err(),
            ManifestError::Name(NameError::Empty)
        );
    }

    #[test]
    fn network_is_a_flag_or_a_list_of_host_names() {
        let network = |text: &str| Manifest::parse(&format!("[capabilities]\nnetwork = {text}"));
        assert_eq!(
            network("false").unwrap().capabilities.network,
            Network::default()
        );
        let any = network("true").unwrap().capabilities.network;
        assert!(any.allows_any() && any.allows("anything.example"));
        let listed = network(r#"["api.example.com", "*.example.org", "127.0.0.1", "[::1]"]"#)
            .unwrap()
            .capabilities
            .network;
        assert!(listed.is_granted() && !listed.allows_any());
        for host in [
            "api.example.com",
            "API.Example.com.",
            "a.example.org",
            "x.y.example.org",
            "127.0.0.1",
            "[::1]",
        ] {
            assert!(listed.allows(host), "{host}");
        }
        for host in [
            "example.org",
            "evilexample.org",
            "api.example.com.evil",
            "localhost",
            "",
        ] {
            assert!(!listed.allows(host), "{host}");
        }
        assert!(!network("[]").unwrap().capabilities.network.is_granted());
        for bad in [
            "https://api.example.com",
            "api.example.com:443",
            "a/b",
            "",
            "*.",
            "[zz]",
        ] {
            let err = network(&format!("[{bad:?}]")).unwrap_err();
            assert_eq!(
                err,
                ManifestError::NetworkHost { host: bad.into() },
                "{bad}"
            );
        }
        assert!(matches!(network("\"yes\""), Err(ManifestError::Syntax(_))));
    }

    #[test]
    fn deep_dotted_keys_and_headers_are_refused_by_the_parser() {
        // No bracket nests, but each dotted part is a table: the TOML
        // parser's own depth limit refuses them, with a reason.
        let keys = vec!["a"; 10_000].join(".");
        for text in [
            format!("[config]\n{keys} = 1\n"),
            format!("[config.{keys}]\nx = 1\n"),
        ] {
            match Manifest::parse(&text) {
                Err(ManifestError::Syntax(why)) => assert!(why.contains("recursion"), "{why}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        for text in [
            "x = ".to_string() + &"[".repeat(10_000),
            "[".repeat(10_000),
            "x = ".to_string() + &"{a=".repeat(10_000),
        ] {
            assert_eq!(Manifest::parse(&text), Err(ManifestError::TooDeep));
        }
        // Brackets in strings and comments do not count.
        let text = format!(
            "name = \"{}\"  # {}\nentry = '{}'\n[capabilities]\nenv = [\"\"\"{}\"\"\"]",
            "[".repeat(40),
            "[".repeat(40),
            "[".repeat(40),
            "[".repeat(40)
        );
        assert!(matches!(
            Manifest::parse(&text),
            Err(ManifestError::Name(NameError::BadChar('[')))
        ));
    }

    #[test]
    fn a_manifest_that_is_not_a_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MANIFEST_FILE);
        std::fs::create_dir(&path).unwrap();
        assert!(matches!(
            Manifest::read(&path),
            Err(ManifestError::Unreadable(ReadError::NotRegular(_)))
        ));
        assert_eq!(
            Manifest::read(&dir.path().join("absent.toml")).unwrap(),
            Manifest::default()
        );
    }

    #[test]
    fn fields_parse() {
        let m = Manifest::parse(
            "name = \"g\"\nmode = \"required\"\npriority = 3\necosystem = \"rutis-agent\"\n[timeouts]\nbefore_tool = 250\nload = 1500\n[capabilities]\nread = [\"data\"]\nenv = [\"HOME\"]",
        )
        .unwrap();
        assert_eq!(m.mode, Mode::Required);
        assert_eq!(m.ecosystem, Some(Ecosystem::new("rutis-agent")));
        assert_eq!(m.timeout(Hook::BeforeTool), Duration::from_millis(250));
        assert_eq!(m.load_timeout(), Duration::from_millis(1500));
        assert_eq!(m.capabilities.read, vec![PathBuf::from("data")]);
        let m = Manifest::parse("[config]\nlimit = 3\nnested = { on = true }").unwrap();
        assert_eq!(m.config["limit"].as_integer(), Some(3));
        assert_eq!(m.config["nested"]["on"].as_bool(), Some(true));
    }
}
