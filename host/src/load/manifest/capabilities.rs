//! `[capabilities]`: what a plugin is granted (files, environment
//! variables, network hosts, processes), everything else denied.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[capabilities]`: everything is denied unless granted here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Directories the plugin may read, relative to the plugin's folder (or
    /// absolute). Empty: no file may be read.
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Directories the plugin may read and write. Empty: no file may be
    /// written.
    #[serde(default)]
    pub write: Vec<PathBuf>,
    /// Environment variables the plugin may see. Empty: none.
    #[serde(default)]
    pub env: Vec<String>,
    /// Whether the plugin may open network connections, and to which
    /// hosts. Absent: none.
    #[serde(default)]
    pub network: Network,
    /// Whether the plugin may start processes. Absent: no.
    #[serde(default)]
    pub exec: bool,
    /// Whether the plugin's processes (the Node engine's, `exec`'s) may run
    /// without the kernel sandbox where the kernel has none (no Landlock
    /// ABI 6). Absent: no, and such a plugin is refused there. Where the
    /// kernel has the sandbox, it always applies.
    #[serde(default)]
    pub unconfined: bool,
}

/// `capabilities.network`: `false` (the default, no connections), `true`
/// (any host), or a list of the hosts the plugin may reach (`"*.example.org"`
/// is every host below `example.org`). An engine that cannot restrict
/// connections to hosts opens none for a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Network {
    /// `false`: none; `true`: any host.
    Granted(bool),
    /// Only these hosts (names, without scheme, port or path).
    Hosts(Vec<String>),
}

impl Capabilities {
    /// What is granted, one item each, as `check` shows it: `read data/`,
    /// `write out/`, `env HOME`, `network` (any host) or `network HOST`,
    /// `exec`, `unconfined`. Empty: nothing is granted.
    pub fn granted(&self) -> Vec<String> {
        let paths = |verb: &str, paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| format!("{verb} {}", p.display()))
                .collect::<Vec<_>>()
        };
        let mut out = paths("read", &self.read);
        out.extend(paths("write", &self.write));
        out.extend(self.env.iter().map(|name| format!("env {name}")));
        match &self.network {
            Network::Granted(true) => out.push("network".into()),
            Network::Granted(false) => {}
            Network::Hosts(hosts) => out.extend(hosts.iter().map(|h| format!("network {h}"))),
        }
        out.extend(self.exec.then(|| "exec".to_string()));
        out.extend(self.unconfined.then(|| "unconfined".to_string()));
        out
    }
}

impl Default for Network {
    fn default() -> Self {
        Network::Granted(false)
    }
}

impl Network {
    /// Whether any host at all may be reached (`true`, or a non-empty list).
    pub fn is_granted(&self) -> bool {
        match self {
            Network::Granted(granted) => *granted,
            Network::Hosts(hosts) => !hosts.is_empty(),
        }
    }

    /// Whether every host may be reached (`true`).
    pub fn allows_any(&self) -> bool {
        matches!(self, Network::Granted(true))
    }

    /// Whether `host` (a name or an IP address, as a URL gives it) may be
    /// reached. Names compare without regard to case.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match self {
            Network::Granted(granted) => *granted,
            Network::Hosts(hosts) => hosts.iter().any(|pattern| {
                let pattern = pattern.to_ascii_lowercase();
                match pattern.strip_prefix("*.") {
                    Some(domain) => host
                        .strip_suffix(domain)
                        .is_some_and(|below| below.ends_with('.') && below.len() > 1),
                    None => host == pattern,
                }
            }),
        }
    }

    /// The first listed host that is not a host name: letters, digits,
    /// `-` and `.` (optionally after `*.`), or an IPv6 address in `[]`.
    pub(super) fn invalid_host(&self) -> Option<&str> {
        let Network::Hosts(hosts) = self else {
            return None;
        };
        let name_ok = |name: &str| {
            !name.is_empty()
                && name.len() <= 253
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        };
        let ipv6_ok = |host: &str| {
            host.strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .is_some_and(|inner| {
                    !inner.is_empty() && inner.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
                })
        };
        hosts
            .iter()
            .find(|host| !(name_ok(host.strip_prefix("*.").unwrap_or(host)) || ipv6_ok(host)))
            .map(String::as_str)
    }
}
