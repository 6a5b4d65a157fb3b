//! `plugin.toml`: the optional manifest beside a plugin.
//!
//! Every field is optional. What each means when absent is said on the
//! field. Unknown fields are an error, so a typo is reported instead of
//! silently ignored. Every problem of a manifest is reported at once, in
//! file order, each with its line, and an unknown key or value with the
//! one meant when one is close (`mdoe`: did you mean `mode`?). A plugin
//! whose manifest has problems is refused, with the mode the manifest asks
//! for ([`intended_mode`]).
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
mod model;
mod names;
mod problems;
mod text;

pub use capabilities::{Capabilities, Network};
pub use model::{
    EngineChoice, Limits, Manifest, ManifestError, Problem, DEFAULT_LOAD_TIMEOUT, DEFAULT_PRIORITY,
    LOAD_TIMEOUT_KEY, MANIFEST_FILE, MAX_NESTING, MEMORY_MIB, TIMEOUT_MS,
};
pub use names::{check_name, NameError, MAX_NAME_CHARS};

use crate::load::source::read_text;
use crate::model::limits::MAX_SOURCE_BYTES;
use crate::model::Mode;
use std::path::Path;
use std::time::Duration;
use text::nesting_depth;
use yohost_contract::Hook;

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
    /// names in `[timeouts]`, the ranges of numbers, and the name. Every
    /// key is checked: one problem is returned as itself (a syntax error,
    /// an unknown key or a wrong type as [`ManifestError::Syntax`], which
    /// starts with its line), several as [`ManifestError::Problems`].
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        if nesting_depth(text) > MAX_NESTING {
            return Err(ManifestError::TooDeep);
        }
        let mut reading = problems::read(text);
        match reading.problems.len() {
            0 => Ok(reading.manifest),
            // One problem keeps its own kind; a syntax error says its line.
            1 => Err(match reading.problems.remove(0) {
                Problem {
                    error: ManifestError::Syntax(message),
                    line,
                    column,
                } => ManifestError::Syntax(format!("line {line}, column {column}: {message}")),
                Problem { error, .. } => error,
            }),
            _ => Err(ManifestError::Problems(reading.problems)),
        }
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

/// The mode a plugin's manifest `text` asks for, even when it does not
/// parse as a manifest: its `mode` key when the text is TOML and the key
/// holds a mode; advisory without a `mode` key, unless a key misspelling
/// it (`mdoe`) holds something other than `"advisory"`; and required when
/// the text is not TOML at all or `mode` holds no mode the host knows (it
/// may be a required policy's: fail closed).
pub fn intended_mode(text: &str) -> Mode {
    if nesting_depth(text) > MAX_NESTING {
        return Mode::Required;
    }
    problems::read(text).mode
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::source::ReadError;
    use crate::model::Ecosystem;
    use std::path::PathBuf;

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
        let err = Manifest::parse("[timeouts]\nbefore_tol = 5").unwrap_err();
        assert!(
            err.to_string().contains("did you mean `before_tool`?"),
            "{err}"
        );
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
