//! Every problem of a manifest at once, each where it is: the text is
//! parsed to a table with spans first, then each key is checked on its own
//! (known, of the right type, in range), so one problem hides no other.
//! What does parse is kept, and gives the mode the manifest asks for.

use super::capabilities::{Capabilities, Network};
use super::model::{
    in_range, Limits, Manifest, ManifestError, Problem, LOAD_TIMEOUT_KEY, MEMORY_MIB, TIMEOUT_MS,
};
use super::names::check_name;
use super::text::did_you_mean;
use crate::model::names::closest;
use crate::model::Mode;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::ops::Range;
use toml::de::{DeString, DeTable, DeValue, ValueDeserializer};
use toml::Spanned;
use yohost_contract::Hook;

/// The keys of a manifest (and of a `[servers.NAME]` table, but `servers`).
const FIELDS: [&str; 11] = [
    "name",
    "mode",
    "priority",
    "ecosystem",
    "entry",
    "engine",
    "timeouts",
    "limits",
    "capabilities",
    "config",
    "servers",
];
const LIMITS: [&str; 2] = ["memory_mib", "processes"];
const CAPABILITIES: [&str; 6] = ["read", "write", "env", "network", "exec", "unconfined"];

/// What reading a manifest's text gave.
pub(super) struct Reading {
    /// Its valid keys (the defaults for the others).
    pub manifest: Manifest,
    /// Every problem, in file order.
    pub problems: Vec<Problem>,
    /// The mode it asks for (see [`super::intended_mode`]).
    pub mode: Mode,
}

/// Read `text` key by key (it is not nested too deep: the caller checked).
pub(super) fn read(text: &str) -> Reading {
    let (table, errors) = DeTable::parse_recoverable(text);
    let mut walk = Walk {
        text,
        problems: Vec::new(),
        mode: None,
        misspelt_mode: Vec::new(),
    };
    if !errors.is_empty() {
        // Not TOML: what it asks for cannot be known. Fail closed.
        for e in errors {
            let message = did_you_mean(e.message().trim().replace('\n', " "));
            walk.at(e.span().unwrap_or(0..0), ManifestError::Syntax(message));
        }
        walk.problems.sort_by_key(|p| (p.line, p.column));
        return Reading {
            manifest: Manifest::default(),
            problems: walk.problems,
            mode: Mode::Required,
        };
    }
    let manifest = walk.manifest(table.get_ref(), "", false);
    walk.problems.sort_by_key(|p| (p.line, p.column));
    let mode = match walk.mode {
        Some(Some(mode)) => mode,
        // A `mode` the host does not know: it may be a required policy's.
        Some(None) => Mode::Required,
        // No `mode`, but a key misspelling it: what that key says, and
        // required unless it says advisory.
        None if walk
            .misspelt_mode
            .iter()
            .all(|v| *v == Some(Mode::Advisory)) =>
        {
            Mode::Advisory
        }
        None => Mode::Required,
    };
    Reading {
        manifest,
        problems: walk.problems,
        mode,
    }
}

struct Walk<'t> {
    text: &'t str,
    problems: Vec<Problem>,
    /// The top-level `mode`: `Some(None)` when it is not a mode.
    mode: Option<Option<Mode>>,
    /// What each unknown top-level key closest to `mode` holds, as a mode.
    misspelt_mode: Vec<Option<Mode>>,
}

type Key<'i> = Spanned<DeString<'i>>;
type Value<'i> = Spanned<DeValue<'i>>;

impl Walk<'_> {
    fn at(&mut self, span: Range<usize>, error: ManifestError) {
        let mut start = span.start.min(self.text.len());
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |at| at + 1) + 1;
        self.problems.push(Problem {
            line,
            column,
            error,
        });
    }

    /// `value` as a `T`, or a problem naming `field`.
    fn value<T: DeserializeOwned>(&mut self, field: &str, value: &Value) -> Option<T> {
        match T::deserialize(ValueDeserializer::from(value.clone())) {
            Ok(v) => Some(v),
            Err(e) => {
                let message = did_you_mean(e.message().trim().replace('\n', " "));
                let span = e.span().unwrap_or_else(|| value.span());
                self.at(span, ManifestError::Syntax(format!("`{field}`: {message}")));
                None
            }
        }
    }

    /// `value` as a table, or a problem naming `field`.
    fn table<'v, 'i>(&mut self, field: &str, value: &'v Value<'i>) -> Option<&'v DeTable<'i>> {
        let table = value.get_ref().as_table();
        if table.is_none() {
            let found = value.get_ref().type_str();
            let problem = format!("`{field}` must be a table, not {found}");
            self.at(value.span(), ManifestError::Syntax(problem));
        }
        table
    }

    fn unknown(&mut self, key: &Key, field: &str, known: &[&str]) {
        let message = match closest(key.get_ref(), known.iter().copied()) {
            Some(meant) => format!("unknown key `{field}`; did you mean `{meant}`?"),
            None => format!("unknown key `{field}` (known: {})", known.join(", ")),
        };
        self.at(key.span(), ManifestError::Syntax(message));
    }

    /// The manifest of `table`, whose keys are named after `prefix`; a
    /// `nested` one (a server's) holds no servers.
    fn manifest(&mut self, table: &DeTable, prefix: &str, nested: bool) -> Manifest {
        let mut m = Manifest::default();
        for (key, value) in table.iter() {
            let name: &str = key.get_ref();
            let field = format!("{prefix}{name}");
            match name {
                "name" => {
                    m.name = self.value(&field, value);
                    if let Some(Err(e)) = m.name.as_deref().map(check_name) {
                        self.at(value.span(), ManifestError::Name(e));
                    }
                }
                "mode" => {
                    let mode = self.value(&field, value);
                    m.mode = mode.unwrap_or_default();
                    if prefix.is_empty() {
                        self.mode = Some(mode);
                    }
                }
                "priority" => m.priority = self.value(&field, value),
                "ecosystem" => m.ecosystem = self.value(&field, value),
                "entry" => m.entry = self.value(&field, value),
                "engine" => m.engine = self.value(&field, value).unwrap_or_default(),
                "timeouts" => self.timeouts(&mut m, &field, value),
                "limits" => m.limits = self.limits(&field, value),
                "capabilities" => m.capabilities = self.capabilities(&field, value),
                "config" => m.config = self.value(&field, value).unwrap_or_default(),
                "servers" if !nested => {
                    for (server, manifest) in self.table(&field, value).into_iter().flatten() {
                        let field = format!("{field}.{}", server.get_ref());
                        if let Some(table) = self.table(&field, manifest) {
                            let server_manifest = self.manifest(table, &format!("{field}."), true);
                            m.servers
                                .insert(server.get_ref().to_string(), server_manifest);
                        }
                    }
                }
                "servers" => self.at(
                    key.span(),
                    ManifestError::Syntax(
                        "a [servers.NAME] table cannot hold servers of its own".into(),
                    ),
                ),
                _ => {
                    if prefix.is_empty() && closest(name, FIELDS) == Some("mode") {
                        let mode = Mode::deserialize(ValueDeserializer::from(value.clone()));
                        self.misspelt_mode.push(mode.ok());
                    }
                    self.unknown(key, &field, &FIELDS);
                }
            }
        }
        m
    }

    fn timeouts(&mut self, m: &mut Manifest, field: &str, value: &Value) {
        for (hook, ms) in self.table(field, value).into_iter().flatten() {
            let name: &str = hook.get_ref();
            let field = format!("{field}.{name}");
            if name != LOAD_TIMEOUT_KEY && Hook::from_name(name).is_none() {
                let unknown = ManifestError::UnknownHook {
                    hook: name.to_string(),
                };
                self.at(hook.span(), unknown);
                continue;
            }
            if let Some(v) = self.value::<u64>(&field, ms) {
                if let Err(e) = in_range(&field, v, TIMEOUT_MS, "milliseconds") {
                    self.at(ms.span(), e);
                }
                m.timeouts.insert(name.to_string(), v);
            }
        }
    }

    fn limits(&mut self, field: &str, value: &Value) -> Limits {
        let mut limits = Limits::default();
        for (key, v) in self.table(field, value).into_iter().flatten() {
            let field = format!("{field}.{}", key.get_ref());
            match &**key.get_ref() {
                "memory_mib" => {
                    limits.memory_mib = self.value(&field, v);
                    if let Some(Err(e)) = limits
                        .memory_mib
                        .map(|mib| in_range(&field, mib, MEMORY_MIB, "MiB"))
                    {
                        self.at(v.span(), e);
                    }
                }
                "processes" => limits.processes = self.value(&field, v),
                _ => self.unknown(key, &field, &LIMITS),
            }
        }
        limits
    }

    fn capabilities(&mut self, field: &str, value: &Value) -> Capabilities {
        let mut c = Capabilities::default();
        for (key, v) in self.table(field, value).into_iter().flatten() {
            let field = format!("{field}.{}", key.get_ref());
            match &**key.get_ref() {
                "read" => c.read = self.value(&field, v).unwrap_or_default(),
                "write" => c.write = self.value(&field, v).unwrap_or_default(),
                "env" => c.env = self.value(&field, v).unwrap_or_default(),
                "network" => {
                    c.network = self.value(&field, v).unwrap_or_default();
                    if let Some(host) = c.network.invalid_host() {
                        let host = host.to_string();
                        c.network = Network::default();
                        self.at(v.span(), ManifestError::NetworkHost { host });
                    }
                }
                "exec" => c.exec = self.value(&field, v).unwrap_or_default(),
                "unconfined" => c.unconfined = self.value(&field, v).unwrap_or_default(),
                _ => self.unknown(key, &field, &CAPABILITIES),
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::super::intended_mode;
    use super::*;

    #[test]
    fn every_problem_is_reported_in_file_order_with_its_line() {
        // `servers` sorts before `zz` and after `mdoe`: the order is the
        // file's, not the keys'.
        let text = "zz = 1\nmdoe = \"advisory\"\npriority = \"high\"\n[limits]\nmemory_mb = 5\n[servers.a]\nmode = 1\n";
        let reading = read(text);
        let found: Vec<(usize, String)> = reading
            .problems
            .iter()
            .map(|p| (p.line, p.error.to_string()))
            .collect();
        assert_eq!(found.len(), 5, "{found:?}");
        assert_eq!(
            found.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
            [1, 2, 3, 5, 7]
        );
        assert!(found[0].1.contains("unknown key `zz`"), "{found:?}");
        assert!(!found[0].1.contains("did you mean"), "{found:?}");
        assert!(found[1].1.ends_with("did you mean `mode`?"), "{found:?}");
        assert!(
            found[2].1.starts_with("`priority`: invalid type"),
            "{found:?}"
        );
        assert!(
            found[3].1.contains("did you mean `memory_mib`?"),
            "{found:?}"
        );
        assert!(found[4].1.starts_with("`servers.a.mode`"), "{found:?}");
        assert_eq!(reading.mode, Mode::Advisory);
    }

    #[test]
    fn key_by_key_reads_what_serde_reads() {
        let text = "name = \"g\"\nmode = \"required\"\npriority = -3\necosystem = \"pi\"\nentry = \"src/a.ts\"\nengine = \"node\"\n[timeouts]\nbefore_tool = 250\nload = 1500\n[limits]\nmemory_mib = 8\nprocesses = 2\n[capabilities]\nread = [\"data\"]\nwrite = [\"out\"]\nenv = [\"HOME\"]\nnetwork = [\"*.example.org\"]\nexec = true\nunconfined = true\n[config]\nwhen = 1979-05-27T07:32:00Z\nnested = { on = true }\n[servers.s]\nmode = \"advisory\"\n[servers.s.capabilities]\nnetwork = true\n";
        let reading = read(text);
        assert!(reading.problems.is_empty(), "{:?}", reading.problems);
        let by_serde: Manifest = toml::from_str(text).unwrap();
        assert_eq!(reading.manifest, by_serde);
        assert_eq!(reading.mode, Mode::Required);
    }

    #[test]
    fn a_misspelt_mode_counts_unless_it_says_advisory() {
        assert_eq!(intended_mode("mdoe = \"advisory\"\n"), Mode::Advisory);
        assert_eq!(intended_mode("mdoe = \"required\"\n"), Mode::Required);
        assert_eq!(intended_mode("mode_ = 1\n"), Mode::Required);
        assert_eq!(intended_mode("mode = 1\n"), Mode::Required);
        assert_eq!(
            intended_mode("mode = \"advisory\"\nmdoe = 1\n"),
            Mode::Advisory
        );
        assert_eq!(intended_mode("priority = \"x\"\n"), Mode::Advisory);
        assert_eq!(
            intended_mode("[servers.a]\nmode = \"required\"\n"),
            Mode::Advisory
        );
    }
}
