//! One server's entry in an `mcp.json`, read and checked against the
//! plugin's grants: `{command, args, env, cwd}` (stdio) or `{url, headers}`
//! (HTTP).

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
    },
}

/// A server's entry, checked, and what a person should know about it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerConfig {
    pub transport: Transport,
    pub warnings: Vec<String>,
}

/// Fields of the common format this adapter reads or knows to pass over.
const KNOWN: &[&str] = &["command", "args", "env", "cwd", "url", "headers", "type"];

/// Read the entry of the server `candidate.name` from its `mcp.json`.
/// `Err` is the reason it is refused, in words a person can act on.
pub(crate) fn read(candidate: &Candidate) -> Result<ServerConfig, String> {
    let text = read_text(&candidate.entry, MAX_SOURCE_BYTES).map_err(|e| e.to_string())?;
    let config: Value = serde_json::from_str(&text).map_err(|e| format!("not valid JSON: {e}"))?;
    let key = &candidate.name;
    let entry = config
        .get("mcpServers")
        .and_then(|s| s.get(key))
        .ok_or_else(|| format!("`mcpServers` has no server `{key}`"))?;
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
            Transport::Http { url, headers }
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

/// `value` with each `${VAR}` replaced by the host's `VAR`, which must be
/// granted and set.
fn expand(value: &str, granted: &[String], field: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{field}` opens `${{` without closing it"))?;
        let name = &after[..end];
        if !granted.iter().any(|g| g == name) {
            return Err(format!("`{field}` reads the environment variable `{name}`, which the plugin is not granted: add it to `env` under [capabilities]"));
        }
        let set = std::env::var(name).map_err(|_| {
            format!("`{field}` reads the environment variable `{name}`, which is not set")
        })?;
        out.push_str(&set);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
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
}
