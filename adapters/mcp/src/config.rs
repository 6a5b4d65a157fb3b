//! One server's entry in an MCP configuration file, read and checked
//! against the plugin's grants: `{command, args, env, cwd}` (stdio) or
//! `{url, headers}` (HTTP), as each client writes it:
//!
//! - the servers are listed under `mcpServers` (Claude Desktop, Claude
//!   Code, Cursor), `servers` (VS Code) or `context_servers` (Zed);
//! - the file may hold `//` and `/* */` comments (JSONC, as VS Code and Zed
//!   write it);
//! - Zed's `command` may be an object `{path, args, env}`;
//! - a value may name a granted environment variable as `${VAR}`,
//!   `${env:VAR}` (Cursor, VS Code) or `${VAR:-default}` (Claude Code).

use crate::oauth::OAuthSettings;
use json_comments::{CommentSettings, StripComments};
use serde_json::{Map, Value};
use std::path::PathBuf;
use yohost::adapter::limits::MAX_SOURCE_BYTES;
use yohost::adapter::source::read_text;
use yohost::adapter::Candidate;

/// How the server is reached.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Transport {
    /// A process started with `command` and `args`, speaking JSON-RPC on
    /// its standard input and output.
    Stdio {
        command: String,
        args: Vec<String>,
        /// The entry's own `env`, with `${VAR}` expanded.
        env: Vec<(String, String)>,
        /// Absent: the folder the `mcp.json` is in.
        cwd: Option<PathBuf>,
    },
    /// A remote server over streamable HTTP.
    Http {
        url: String,
        /// With `${VAR}` expanded.
        headers: Vec<(String, String)>,
        /// How to authorize, if the server asks (its `oauth`).
        oauth: OAuthSettings,
    },
}

/// A server's entry, checked, and what a person should know about it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerConfig {
    pub transport: Transport,
    pub warnings: Vec<String>,
}

/// Fields of the clients' formats this adapter reads or knows to pass over
/// (`disabled` is read by discovery; `source` is Zed's, `dev` VS Code's).
const KNOWN: &[&str] = &[
    "command", "args", "env", "cwd", "url", "headers", "oauth", "type", "disabled", "source", "dev",
];

/// The keys under which the clients list their servers: Claude Desktop,
/// Claude Code and Cursor (`mcpServers`), VS Code (`servers`), Zed
/// (`context_servers`).
pub(crate) const SERVER_LISTS: [&str; 3] = ["mcpServers", "servers", "context_servers"];

/// The servers a configuration lists, under whichever client's key it uses.
pub(crate) fn servers(config: &Value) -> Option<&Map<String, Value>> {
    SERVER_LISTS
        .iter()
        .find_map(|key| config.get(key)?.as_object())
}

/// The JSON of a configuration file, its `//` and `/* */` comments read as
/// blanks (so an error's line and column are the file's own).
pub(crate) fn parse_file(text: &str) -> Result<Value, String> {
    let stripped = StripComments::with_settings(CommentSettings::c_style(), text.as_bytes());
    serde_json::from_reader(stripped).map_err(|e| {
        let hint = if e.to_string().contains("trailing comma") {
            ": remove the comma after the last item"
        } else {
            ""
        };
        format!("not valid JSON (comments are allowed): {e}{hint}")
    })
}

/// Whether a server's entry says `"disabled": true`: discovery passes it over.
pub(crate) fn disabled(entry: &Value) -> bool {
    entry.get("disabled").and_then(Value::as_bool) == Some(true)
}

/// Read the entry of the server `candidate.name` from its `mcp.json`.
/// `Err` is the reason it is refused, in words a person can act on.
pub(crate) fn read(candidate: &Candidate) -> Result<ServerConfig, String> {
    let text = read_text(&candidate.entry, MAX_SOURCE_BYTES).map_err(|e| e.to_string())?;
    let config = parse_file(&text)?;
    let key = &candidate.name;
    let entry = servers(&config)
        .and_then(|s| s.get(key))
        .ok_or_else(|| format!("the file lists no server `{key}`"))?;
    let entry = entry
        .as_object()
        .ok_or_else(|| format!("the server `{key}` is not an object: give it a `command` (a process) or a `url` (HTTP)"))?;
    parse(key, entry, &candidate.manifest.capabilities.env)
}

/// Check one entry. `granted` are the environment variables the manifest
/// grants: the only ones `${VAR}` may name.
pub(crate) fn parse(
    key: &str,
    entry: &Map<String, Value>,
    granted: &[String],
) -> Result<ServerConfig, String> {
    let mut warnings = Vec::new();
    // Zed's `command` is an object with the process's path, args and env.
    let mut entry = entry.clone();
    if let Some(Value::Object(command)) = entry.get("command").cloned() {
        for (from, to) in [("path", "command"), ("args", "args"), ("env", "env")] {
            match command.get(from) {
                Some(value) => entry.insert(to.to_string(), value.clone()),
                None => entry.remove(to),
            };
        }
    }
    let entry = &entry;
    if entry.contains_key("envFile") {
        return Err(format!("the server `{key}` reads its environment from `envFile`, which yohost does not read: write the variables under `env`, each granted value as `${{VAR}}`"));
    }
    if entry.get("disabled").and_then(Value::as_bool) == Some(true) {
        return Err(format!(
            "the server `{key}` is marked `\"disabled\": true`; remove that to load it"
        ));
    }
    for field in entry.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
        warnings.push(format!(
            "`{field}` in the server's entry is not used by yohost"
        ));
    }
    let kind = entry.get("type").and_then(Value::as_str);
    let string = |field: &str| -> Result<Option<String>, String> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{field}` of the server `{key}` must be a string")),
        }
    };
    let map = |field: &str| -> Result<Vec<(String, String)>, String> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| match value {
                    Value::String(value) => Ok((name.clone(), value.clone())),
                    _ => Err(format!(
                        "`{field}.{name}` of the server `{key}` must be a string"
                    )),
                })
                .collect(),
            Some(_) => Err(format!(
                "`{field}` of the server `{key}` must be an object of strings"
            )),
        }
    };
    if let Some(other) = kind.filter(|k| !matches!(*k, "stdio" | "http" | "sse")) {
        return Err(format!("the server `{key}` has `\"type\": \"{other}\"`; yohost speaks `stdio` (a `command`) and `http` (a `url`)"));
    }
    if kind == Some("sse") {
        return Err(format!("the server `{key}` uses the old HTTP+SSE transport (`\"type\": \"sse\"`), which yohost does not speak; point `url` at its streamable HTTP endpoint"));
    }
    let transport = match (string("command")?, string("url")?) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "the server `{key}` has both `command` and `url`: keep one"
            ))
        }
        (Some(command), None) if !command.trim().is_empty() => {
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|a| a.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("`args` of the server `{key}` must be strings"))?,
                Some(_) => return Err(format!("`args` of the server `{key}` must be an array of strings")),
            };
            let env = map("env")?
                .into_iter()
                .map(|(name, value)| Ok((name.clone(), expand(&value, granted, &format!("env.{name}"))?)))
                .collect::<Result<Vec<_>, String>>()?;
            Transport::Stdio {
                command,
                args,
                env,
                cwd: string("cwd")?.map(PathBuf::from),
            }
        }
        (None, Some(url)) => {
            let mut headers = Vec::new();
            for (name, value) in map("headers")? {
                if looks_secret(&name) && !value.contains("${") {
                    warnings.push(format!("the header `{name}` holds a secret in plain text in the file; put it in an environment variable granted under [capabilities] env and write `\"${{VAR}}\"`"));
                }
                let value = expand(&value, granted, &format!("headers.{name}"))?;
                headers.push((name, value));
            }
            let oauth = match entry.get("oauth") {
                None | Some(Value::Null) => OAuthSettings::default(),
                Some(oauth) => OAuthSettings::parse(key, oauth, &|value, field| {
                    expand(value, granted, field)
                })?,
            };
            Transport::Http {
                url,
                headers,
                oauth,
            }
        }
        (Some(_), None) | (None, None) => {
            return Err(format!(
                "the server `{key}` has no `command` (a process to start) and no `url` (an HTTP server): give it one"
            ))
        }
    };
    Ok(ServerConfig {
        transport,
        warnings,
    })
}

/// Whether a header's name says it carries a credential.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "token",
        "key",
        "secret",
        "password",
        "auth",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// `value` with each `${VAR}`, `${env:VAR}` or `${VAR:-default}` replaced
/// by the host's `VAR`, which must be granted, and set unless a default is
/// given.
fn expand(value: &str, granted: &[String], field: &str) -> Result<String, String> {
    let mut out = String::new();
    for piece in pieces(value, field)? {
        let (name, default) = match piece {
            Piece::Text(text) => {
                out.push_str(text);
                continue;
            }
            Piece::Variable { name, default } => (name, default),
        };
        if !granted.iter().any(|g| g == name) {
            return Err(format!("`{field}` reads the environment variable `{name}`, which the plugin is not granted: add it to `env` under [capabilities]"));
        }
        let set = match (std::env::var(name), default) {
            (Ok(set), _) => set,
            (Err(_), Some(default)) => default.to_string(),
            (Err(_), None) => {
                return Err(format!(
                    "`{field}` reads the environment variable `{name}`, which is not set"
                ))
            }
        };
        out.push_str(&set);
    }
    Ok(out)
}

/// A piece of a string that may name variables.
enum Piece<'a> {
    /// Text as it is.
    Text(&'a str),
    /// `${VAR}`, `${env:VAR}` or `${VAR:-default}`.
    Variable {
        name: &'a str,
        default: Option<&'a str>,
    },
}

/// `value` cut into text and the variables it names; `Err` for a `${`
/// left open, or VS Code's `${input:…}`, which asks a user.
fn pieces<'a>(value: &'a str, field: &str) -> Result<Vec<Piece<'a>>, String> {
    let mut pieces = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        pieces.push(Piece::Text(&rest[..start]));
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{field}` opens `${{` without closing it"))?;
        let inner = &after[..end];
        if let Some(input) = inner.strip_prefix("input:") {
            return Err(format!("`{field}` asks the user for `${{input:{input}}}`, which a host without a user cannot do: put the value in an environment variable granted under [capabilities] env and write `${{env:VAR}}`"));
        }
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        pieces.push(match inner.split_once(":-") {
            Some((name, default)) => Piece::Variable {
                name,
                default: Some(default),
            },
            None => Piece::Variable {
                name: inner,
                default: None,
            },
        });
        rest = &after[end + 1..];
    }
    pieces.push(Piece::Text(rest));
    Ok(pieces)
}

/// The environment variables that the strings of a server's entry name,
/// each once, in order: what its plugin must be granted.
pub fn variables(entry: &Value) -> Vec<String> {
    fn walk(value: &Value, names: &mut Vec<String>) {
        match value {
            Value::String(text) => {
                for piece in pieces(text, "").unwrap_or_default() {
                    if let Piece::Variable { name, .. } = piece {
                        if !names.iter().any(|n| n == name) {
                            names.push(name.to_string());
                        }
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, names)),
            Value::Object(map) => map.values().for_each(|v| walk(v, names)),
            _ => {}
        }
    }
    let mut names = Vec::new();
    walk(entry, &mut names);
    names
}

/// The servers that the configuration `text` (any client's file, JSONC)
/// lists and does not disable, by name, with their entries.
pub fn listed_servers(text: &str) -> Result<Vec<(String, Value)>, String> {
    let config = parse_file(text)?;
    let servers = servers(&config).ok_or_else(|| {
        format!(
            "it lists no servers (under {})",
            SERVER_LISTS.map(|k| format!("`{k}`")).join(", ")
        )
    })?;
    let mut listed: Vec<(String, Value)> = servers
        .iter()
        .filter(|(_, entry)| !disabled(entry))
        .map(|(name, entry)| (name.clone(), entry.clone()))
        .collect();
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(listed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(value: Value) -> Map<String, Value> {
        value.as_object().expect("an object").clone()
    }

    #[test]
    fn a_command_with_args_env_and_cwd_is_a_stdio_server() {
        let config = parse(
            "fs",
            &entry(json!({"command": "node", "args": ["a", "b"], "env": {"X": "1"}, "cwd": "srv", "autoApprove": []})),
            &[],
        )
        .expect("a stdio server");
        assert_eq!(
            config.transport,
            Transport::Stdio {
                command: "node".into(),
                args: vec!["a".into(), "b".into()],
                env: vec![("X".into(), "1".into())],
                cwd: Some("srv".into()),
            }
        );
        assert!(
            config.warnings[0].contains("`autoApprove`"),
            "{:?}",
            config.warnings
        );
    }

    #[test]
    fn an_entry_without_command_or_url_is_refused_saying_what_to_add() {
        for bad in [json!({"args": ["x"]}), json!({"command": " "})] {
            let err = parse("broken", &entry(bad), &[]).unwrap_err();
            assert!(
                err.contains("no `command`") && err.contains("`url`"),
                "{err}"
            );
        }
        let err = parse(
            "both",
            &entry(json!({"command": "a", "url": "http://x"})),
            &[],
        )
        .unwrap_err();
        assert!(err.contains("both"), "{err}");
        let err = parse(
            "old",
            &entry(json!({"type": "sse", "url": "http://x"})),
            &[],
        )
        .unwrap_err();
        assert!(err.contains("streamable HTTP"), "{err}");
    }

    #[test]
    fn variables_come_only_from_granted_environment() {
        std::env::set_var("YOHOST_MCP_TEST_TOKEN", "s3cret");
        let granted = vec!["YOHOST_MCP_TEST_TOKEN".to_string()];
        let config = parse(
            "remote",
            &entry(json!({"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${YOHOST_MCP_TEST_TOKEN}"}})),
            &granted,
        )
        .expect("granted");
        assert_eq!(
            config.transport,
            Transport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer s3cret".into())],
                oauth: OAuthSettings::default(),
            }
        );
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
        let err = parse(
            "remote",
            &entry(json!({"url": "https://x", "headers": {"Authorization": "Bearer ${YOHOST_MCP_TEST_TOKEN}"}})),
            &[],
        )
        .unwrap_err();
        assert!(
            err.contains("not granted") && err.contains("YOHOST_MCP_TEST_TOKEN"),
            "{err}"
        );
        let err = parse(
            "local",
            &entry(json!({"command": "x", "env": {"T": "${YOHOST_MCP_TEST_TOKEN}"}})),
            &[],
        )
        .unwrap_err();
        assert!(err.contains("env.T"), "{err}");
    }

    #[test]
    fn a_secret_header_in_plain_text_is_warned_about() {
        let config = parse(
            "remote",
            &entry(json!({"url": "https://x", "headers": {"X-Api-Key": "abc", "Accept-Language": "en"}})),
            &[],
        )
        .expect("loads");
        assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
        assert!(
            config.warnings[0].contains("X-Api-Key") && config.warnings[0].contains("plain text")
        );
    }

    #[test]
    fn each_client_s_list_and_comments_are_read() {
        let vscode = parse_file(
            "{\n  // VS Code\n  \"servers\": {\"fs\": {\"type\": \"stdio\", \"command\": \"node\"}},\n  \"inputs\": []\n}",
        )
        .expect("JSONC");
        assert!(servers(&vscode).unwrap().contains_key("fs"));
        let zed = parse_file(r#"{"context_servers": {"z": {"source": "custom", "command": {"path": "node", "args": ["s.js"], "env": {"A": "1"}}}}}"#).unwrap();
        let entry = servers(&zed).unwrap()["z"].as_object().unwrap();
        let config = parse("z", entry, &[]).expect("Zed's command object");
        assert_eq!(
            config.transport,
            Transport::Stdio {
                command: "node".into(),
                args: vec!["s.js".into()],
                env: vec![("A".into(), "1".into())],
                cwd: None,
            }
        );
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
        let err = parse_file(r#"{"mcpServers": {"a": {"command": "x",}}}"#).unwrap_err();
        assert!(err.contains("remove the comma"), "{err}");
    }

    #[test]
    fn each_client_s_variables_are_expanded_from_granted_ones() {
        std::env::set_var("YOHOST_MCP_TEST_SET", "v");
        std::env::remove_var("YOHOST_MCP_TEST_UNSET");
        let granted = vec![
            "YOHOST_MCP_TEST_SET".to_string(),
            "YOHOST_MCP_TEST_UNSET".to_string(),
        ];
        let expanded = |value: &str| expand(value, &granted, "env.X");
        assert_eq!(expanded("${env:YOHOST_MCP_TEST_SET}").unwrap(), "v");
        assert_eq!(expanded("a${YOHOST_MCP_TEST_SET:-d}b").unwrap(), "avb");
        assert_eq!(expanded("${YOHOST_MCP_TEST_UNSET:-d}").unwrap(), "d");
        assert!(expanded("${YOHOST_MCP_TEST_UNSET}")
            .unwrap_err()
            .contains("not set"));
        assert!(expand("${env:HOME}", &[], "env.X")
            .unwrap_err()
            .contains("not granted"));
        assert!(expanded("${input:token}")
            .unwrap_err()
            .contains("${env:VAR}"));
    }

    #[test]
    fn an_env_file_and_an_unknown_type_are_refused_saying_why() {
        let err = parse("v", &entry(json!({"command": "x", "envFile": ".env"})), &[]).unwrap_err();
        assert!(err.contains("envFile") && err.contains("`env`"), "{err}");
        let err = parse("v", &entry(json!({"type": "ws", "url": "ws://x"})), &[]).unwrap_err();
        assert!(err.contains("\"ws\""), "{err}");
    }
}
