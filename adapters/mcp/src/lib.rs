//! Model Context Protocol servers in yohost.
//!
//! A `*.mcp.json` file in a plugin directory, or a folder with an
//! `mcp.json` (other clients' files too: `.mcp.json`, `.cursor/`,
//! `.vscode/`, `claude_desktop_config.json`), in the common format:
//!
//! ```json
//! {"mcpServers": {"time": {"command": "venv/bin/mcp-server-time"}}}
//! ```
//!
//! Each server is a plugin named after its key, with the `tools` and
//! `call_tool` hooks: its tools run under the same policy chain, argument
//! checks, grants and deadlines as every plugin's. [`McpAdapter`] serves
//! the (mcp, mcp) pair of yohost's adapter table. Register it with
//! `PluginHost::builder(dir).adapter(yohost_adapter_mcp::adapter())`.
//!
//! - A server started with `command` is a process: it needs
//!   `capabilities.exec`, runs in yohost's kernel sandbox made from its
//!   grants, and gets only the granted environment and its own `env`. One
//!   started as its README says (`npx -y NAME`, `uvx NAME`) runs from the
//!   copy installed in its folder, never through the launcher (`yohost add
//!   mcp:npm:NAME` installs one; see [`installed_version`]).
//! - A server reached at `url` needs a network grant that covers its host;
//!   a header's `${VAR}` reads a granted environment variable. One that
//!   asks for OAuth is authorized through an [`Authorizer`]
//!   ([`McpAdapter::with_authorizer`]).
//! - A call whose caller listens for progress (`CallLimits::progress`)
//!   carries a progress token of its own; the server's
//!   `notifications/progress` for it reach the listener as messages, at most
//!   256 a call.
//! - What a server asks of the user (elicitation) or the model (sampling)
//!   goes to the embedder's [`ServerRequestHandler`]
//!   ([`McpAdapter::with_requests`]), and is declined without one.
//!
//! The client is the MCP Rust SDK's (`rmcp`): over the sandboxed
//! process's pipes, which the host starts itself, and over streamable HTTP
//! for remote servers.

mod config;
mod convert;
mod discover;
mod launcher;
mod link;
mod oauth;
mod plugin;
mod progress;
mod requests;
mod stdio;
mod tokens;

use config::Transport;
pub use config::{listed_servers, variables};
use launcher::Launch;
pub use launcher::{console_scripts, installed_version, launched_package, LaunchedPackage, VENV};
use link::{Answers, Remote};
pub use oauth::Authorizer;
pub use requests::{Answer, ServerRequestHandler};
/// The shapes of a server's requests and their answers, as the MCP Rust
/// SDK (`rmcp`) has them. (Sampling is deprecated by the specification's
/// next version, SEP-2577; the versions yohost speaks have it.)
#[allow(deprecated)]
pub mod model {
    pub use crate::requests::{
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    };
    pub use rmcp::model::{ElicitationAction, SamplingMessage};
}
use plugin::{McpPlugin, Server, Start, State};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use yohost::adapter::grants::Grants;
use yohost::adapter::sandbox::ProcessSandbox;
use yohost::adapter::{Adapter, Candidate, Ecosystem, EngineKind, Found, LoadError, Loaded};
use yohost::contract::Hook;
use yohost::manifest::LOAD_TIMEOUT_KEY;

/// The MCP ecosystem's id.
pub const ECOSYSTEM: Ecosystem = Ecosystem::new("mcp");

/// The id of the engine that runs MCP servers: this adapter's client.
pub const ENGINE: EngineKind = EngineKind::new("mcp");

/// How long starting a server, its handshake and listing its tools may
/// take unless `[timeouts] load` says otherwise: longer than a plugin's
/// load, as a server may import much before it answers (a Python one), or
/// be remote.
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Loads MCP servers: the (mcp, mcp) entry of yohost's adapter table.
/// Without an [`Authorizer`], a remote server that asks for authorization
/// is refused, saying so; without a [`ServerRequestHandler`], a server's
/// questions for the user are declined and its sampling refused.
#[derive(Default, Clone)]
pub struct McpAdapter {
    authorizer: Option<Arc<dyn Authorizer>>,
    requests: Option<Arc<dyn ServerRequestHandler>>,
}

impl McpAdapter {
    /// The adapter, showing `authorizer` where to authorize each remote
    /// server that asks for OAuth ([`Authorizer`]).
    pub fn with_authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> McpAdapter {
        self.authorizer = Some(authorizer);
        self
    }

    /// The adapter, asking `handler` what servers ask of the user
    /// (elicitation) and of the model (sampling), and offering both to
    /// every server ([`ServerRequestHandler`]).
    pub fn with_requests(mut self, handler: Arc<dyn ServerRequestHandler>) -> McpAdapter {
        self.requests = Some(handler);
        self
    }
}

/// The adapter, ready for `PluginHost::builder(dir).adapter(..)`.
pub fn adapter() -> Arc<dyn Adapter> {
    Arc::new(McpAdapter::default())
}

impl Adapter for McpAdapter {
    fn engine(&self) -> EngineKind {
        ENGINE
    }

    fn ecosystem(&self) -> Ecosystem {
        ECOSYSTEM
    }

    /// A `*.mcp.json` file, or a folder with an `mcp.json`: each server a
    /// candidate.
    fn discover(&self, entry: &Path) -> Option<Vec<Found>> {
        discover::discover(entry)
    }

    /// Check the server's entry against its grants, start it (a check
    /// opens no connection to a remote one) and list its tools, or refuse
    /// it with the reason.
    fn load(&self, candidate: &Candidate, grants: Grants) -> Result<Loaded, LoadError> {
        load(candidate, grants, self)
    }
}

fn load(candidate: &Candidate, grants: Grants, adapter: &McpAdapter) -> Result<Loaded, LoadError> {
    let name = &candidate.name;
    let file = candidate.entry.display();
    let refused = |message: String| LoadError::Refused {
        path: candidate.entry.clone(),
        message,
    };
    let config = config::read(candidate).map_err(|message| LoadError::Invalid {
        path: candidate.entry.clone(),
        message,
    })?;
    let mut warnings = config.warnings;
    let capabilities = &candidate.manifest.capabilities;
    let (start, processes) = match config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if !capabilities.exec {
                let grant = if candidate.root.is_dir() {
                    format!(
                        "in the plugin.toml beside {file} (or under [servers.{name}.capabilities])"
                    )
                } else {
                    // A lone file has no manifest: it needs a folder.
                    format!("in a plugin.toml, which a lone file cannot have: move {file} into a folder as `mcp.json`, with a `plugin.toml` beside it")
                };
                return Err(refused(format!("the MCP server `{name}` is a process (`{command}`): it runs only with `exec = true` under [capabilities] {grant}")));
            }
            // A launcher (`npx -y NAME`) starts the copy in the folder.
            let folder = candidate.base_dir();
            let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
            let (command, args, reads) = match launcher::resolve(&command, &args, &folder) {
                Launch::AsWritten => (command, args, Vec::new()),
                Launch::Installed {
                    command,
                    args,
                    reads,
                } => (command, args, reads),
                Launch::Missing(why) => {
                    return Err(refused(format!("the MCP server `{name}`: {why}")))
                }
            };
            let sandbox = ProcessSandbox::for_plugin(candidate, &grants).map_err(&refused)?;
            warnings.extend(sandbox.warnings().iter().cloned());
            // Absolute, so a relative plugin directory is not joined to the
            // server's working folder a second time when it starts.
            let cwd = candidate.base_dir().join(cwd.unwrap_or_default());
            let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
            let path = sandbox
                .env()
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
            let program = find_program(&command, &cwd, &path).ok_or_else(|| {
                refused(format!("the MCP server `{name}`'s command `{command}` is not a program on the PATH it gets ({path}) or a file under {}", cwd.display()))
            })?;
            let extra = program.canonicalize().into_iter().chain(reads).collect();
            let processes = Some(sandbox.confinement());
            let start = Start::Stdio {
                sandbox: Box::new(sandbox),
                program,
                args,
                env,
                cwd,
                extra,
            };
            (start, processes)
        }
        Transport::Http {
            url,
            headers,
            mut oauth,
        } => {
            let (url, host) = parse_url(&url).ok_or_else(|| {
                refused(format!(
                    "the MCP server `{name}`'s `url` {url:?} is not an http:// or https:// URL"
                ))
            })?;
            if !capabilities.network.allows(&host) {
                return Err(refused(format!("the MCP server `{name}` is at {host}, which the plugin may not reach: grant it with `network = [\"{host}\"]` under [capabilities]")));
            }
            if let Some(file) = &oauth.private_key_file {
                oauth.private_key = Some(own_file(candidate, file).map_err(|why| {
                    refused(format!(
                        "the MCP server `{name}`'s `oauth.privateKeyFile` {}: {why}",
                        file.display()
                    ))
                })?);
            }
            let url = url.to_string();
            let tokens = tokens::TokenFile::of(&candidate.entry, name, &url);
            (
                Start::Http(Remote {
                    url,
                    headers,
                    oauth,
                    tokens,
                }),
                None,
            )
        }
    };
    let unconnected = matches!(start, Start::Http(_)) && candidate.dry_run;
    // A process works in the plugin's granted folders; a remote server
    // reaches none of them, and is not told this machine's paths.
    let roots = match start {
        Start::Stdio { .. } => grants
            .iter()
            .filter(|grant| !grant.is_file())
            .filter_map(|grant| url::Url::from_directory_path(grant.real()).ok())
            .map(String::from)
            .collect(),
        Start::Http(_) => Vec::new(),
    };
    let server = Arc::new(Server {
        name: name.clone(),
        start,
        connect_timeout: if candidate.manifest.timeouts.contains_key(LOAD_TIMEOUT_KEY) {
            candidate.manifest.load_timeout()
        } else {
            DEFAULT_CONNECT_TIMEOUT
        },
        unconnected,
        authorizer: adapter.authorizer.clone(),
        answers: Answers {
            roots,
            handler: adapter.requests.clone(),
        },
        state: tokio::sync::Mutex::new(State::default()),
    });
    if unconnected {
        warnings
            .push("a check opens no connection: its tools are listed when a run connects".into());
    } else {
        let connected = block_on(server.connect()).map_err(|message| LoadError::Invalid {
            path: candidate.entry.clone(),
            message,
        })?;
        warnings.extend(connected.warnings);
        tracing::debug!(target: "yohost::plugin", plugin = %name, server = %connected.info, "MCP server connected");
        let mut state = server
            .state
            .try_lock()
            .expect("nothing else holds a new server");
        state.tools = Arc::new(connected.tools);
        state.seen = connected.seen;
        // The connection lives on, on the client's own runtime: runs share
        // one process, or one HTTP session.
        state.link = Some(Arc::new(connected.link));
        state.started = Some(std::time::Instant::now());
    }
    let mut loaded = Loaded::new(Arc::new(McpPlugin(server)), [Hook::Tools, Hook::CallTool]);
    loaded.warnings = warnings;
    loaded.ecosystem = Some(ECOSYSTEM);
    loaded.processes = processes;
    Ok(loaded)
}

/// Run `future` to its end on a runtime of its own, on a thread of its
/// own (a load is synchronous, and may be called from within a runtime).
fn block_on<T: Send>(future: impl std::future::Future<Output = T> + Send) -> T {
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _log = tracing::dispatcher::set_default(&dispatch);
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for loading an MCP server")
                    .block_on(future)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The bytes of `file` (relative to the plugin's folder), which must be
/// one of the plugin's own files: a setting cannot have the host read
/// (and use) a file the plugin could not.
fn own_file(candidate: &Candidate, file: &Path) -> Result<Vec<u8>, String> {
    let path = candidate
        .base_dir()
        .join(file)
        .canonicalize()
        .map_err(|e| e.to_string())?;
    if !candidate
        .own_paths()
        .iter()
        .any(|own| path.starts_with(own))
    {
        return Err("is not a file of the plugin's own folder".into());
    }
    yohost::adapter::source::read_bytes(&path, 64 << 10).map_err(|e| e.to_string())
}

/// The program `command` names: a path (relative to `cwd`), or a name
/// found on `path`.
fn find_program(command: &str, cwd: &Path, path: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let program = cwd.join(command);
        return program.is_file().then_some(program);
    }
    std::env::split_paths(path)
        .map(|dir| dir.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The host of a server's `url` as the network grant must name it: the one
/// the client connects to. `None` for anything but an `http://` or
/// `https://` URL with a host.
pub fn url_host(url: &str) -> Option<String> {
    parse_url(url).map(|(_, host)| host)
}

/// `url` as the HTTP client will read it (the `url` crate, which reqwest
/// uses), and its host: the one parse that both the network grant's check
/// and the connection use, so that no spelling of a URL (a backslash, an
/// `@` in the path) connects to a host the check did not see. `None` for
/// anything but an `http://` or `https://` URL with a host.
fn parse_url(url: &str) -> Option<(url::Url, String)> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = match parsed.host()? {
        url::Host::Domain(domain) => domain.to_ascii_lowercase(),
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => ip.to_string(),
    };
    (!host.is_empty()).then_some((parsed, host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_of_a_url_is_the_one_the_client_connects_to() {
        let host = url_host;
        assert_eq!(
            host("https://mcp.example.com/mcp").as_deref(),
            Some("mcp.example.com")
        );
        assert_eq!(
            host("http://user:pw@Localhost:3001/mcp?x").as_deref(),
            Some("localhost")
        );
        assert_eq!(host("http://[::1]:8080/").as_deref(), Some("::1"));
        assert_eq!(host("ftp://x/"), None);
        assert_eq!(host("https:///path").as_deref(), Some("path"));
        // A backslash ends the authority, as the HTTP client reads it: the
        // host is the loopback address, not the name after the `@`.
        let (parsed, tricked) = parse_url("http://127.0.0.1:47810\\@allowed.invalid/mcp").unwrap();
        assert_eq!(tricked, "127.0.0.1");
        assert_eq!(parsed.host_str(), Some("127.0.0.1"));
        assert_eq!(
            host("http://allowed.invalid@127.0.0.1/").as_deref(),
            Some("127.0.0.1")
        );
    }
}
