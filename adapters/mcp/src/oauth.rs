//! OAuth for a remote server that asks for authorization (HTTP 401, or 403
//! for a scope), by `rmcp`'s OAuth client: discovery from the server's
//! challenge, then one of
//! - the authorization code with PKCE, for a client registered
//!   dynamically, named by its metadata document's URL
//!   (`clientMetadataUrl`, where the server takes one), or given in the
//!   entry's `oauth` (`clientId`, and `clientSecret` for a confidential
//!   one). The person who authorizes is
//!   reached through an [`Authorizer`] the embedder registers: it is shown
//!   the authorization page's URL, and their browser comes back to a
//!   listener on the loopback address (on `callbackPort`, when the client
//!   was registered with one), which finishes the flow. Without an
//!   authorizer the server is refused, saying so;
//! - client credentials (`"grant": "client_credentials"`), with the
//!   client's secret or a key that signs a JWT (`privateKeyFile`, a PEM
//!   file in the plugin's folder): no person takes part.
//!
//! Tokens given for the authorization code are kept in the per-user token
//! store (`crate::tokens`), so a later run starts authorized; those of
//! client credentials, which need no person, only by the connection.

use crate::link::Failure;
use crate::tokens::TokenFile;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthState,
    WWWAuthenticateParams,
};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How yohost authorizes with a server's authorization server: the
/// entry's `oauth` object, checked (defaults: a client registered
/// dynamically, the authorization code, the scopes the server asks for).
#[derive(Clone, PartialEq, Default)]
pub(crate) struct OAuthSettings {
    /// A client registered beforehand (`clientId`).
    pub client_id: Option<String>,
    /// The HTTPS URL of the client's metadata document
    /// (`clientMetadataUrl`), its id where the authorization server takes
    /// one (a Client ID Metadata Document).
    pub client_metadata_url: Option<String>,
    /// Its secret (`clientSecret`, `${VAR}` expanded from a granted one).
    pub client_secret: Option<String>,
    /// The port of the loopback address the browser comes back to
    /// (`callbackPort`), for a client registered with that redirect.
    pub callback_port: Option<u16>,
    /// The scopes to ask for (`scopes`), beyond those the server names.
    pub scopes: Vec<String>,
    /// Client credentials, not a person's approval (`"grant":
    /// "client_credentials"`).
    pub client_credentials: bool,
    /// The PEM file, relative to the plugin's folder, whose key signs the
    /// client's JWT (`privateKeyFile`), for client credentials.
    pub private_key_file: Option<PathBuf>,
    /// The key's algorithm (`signingAlgorithm`: ES256, ES384, RS256, …).
    pub signing_algorithm: Option<String>,
    /// The PEM of `private_key_file`, read by the load.
    pub private_key: Option<Vec<u8>>,
}

impl std::fmt::Debug for OAuthSettings {
    /// Without the secret and the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_metadata_url", &self.client_metadata_url)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("callback_port", &self.callback_port)
            .field("scopes", &self.scopes)
            .field("client_credentials", &self.client_credentials)
            .field("private_key_file", &self.private_key_file)
            .finish_non_exhaustive()
    }
}

/// The fields of an entry's `oauth`.
const OAUTH_FIELDS: &[&str] = &[
    "clientId",
    "clientMetadataUrl",
    "clientSecret",
    "callbackPort",
    "scopes",
    "grant",
    "privateKeyFile",
    "signingAlgorithm",
];

impl OAuthSettings {
    /// The server `key`'s `oauth` object, each string through `expand`
    /// (which reads only granted variables).
    pub(crate) fn parse(
        key: &str,
        oauth: &Value,
        expand: &dyn Fn(&str, &str) -> Result<String, String>,
    ) -> Result<OAuthSettings, String> {
        let Value::Object(oauth) = oauth else {
            return Err(format!("`oauth` of the server `{key}` must be an object"));
        };
        if let Some(field) = oauth.keys().find(|k| !OAUTH_FIELDS.contains(&k.as_str())) {
            return Err(format!(
                "`oauth.{field}` of the server `{key}` is not one yohost reads ({})",
                OAUTH_FIELDS.join(", ")
            ));
        }
        let text = |field: &str| -> Result<Option<String>, String> {
            match oauth.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => expand(s, &format!("oauth.{field}")).map(Some),
                Some(_) => Err(format!(
                    "`oauth.{field}` of the server `{key}` must be a string"
                )),
            }
        };
        let scopes = match oauth.get("scopes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(scopes)) => scopes
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("`oauth.scopes` of the server `{key}` must be strings"))?,
            Some(Value::String(scopes)) => scopes.split_whitespace().map(str::to_string).collect(),
            Some(_) => {
                return Err(format!(
                    "`oauth.scopes` of the server `{key}` must be an array of strings"
                ))
            }
        };
        let callback_port = match oauth.get("callbackPort") {
            None | Some(Value::Null) => None,
            Some(port) => Some(
                port.as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .filter(|p| *p != 0)
                    .ok_or_else(|| {
                        format!("`oauth.callbackPort` of the server `{key}` must be a port number")
                    })?,
            ),
        };
        let client_credentials = match text("grant")?.as_deref() {
            None | Some("authorization_code") => false,
            Some("client_credentials") => true,
            Some(other) => return Err(format!("`oauth.grant` of the server `{key}` is `{other}`; yohost knows `authorization_code` and `client_credentials`")),
        };
        let settings = OAuthSettings {
            client_id: text("clientId")?,
            client_metadata_url: text("clientMetadataUrl")?,
            client_secret: text("clientSecret")?,
            callback_port,
            scopes,
            client_credentials,
            private_key_file: text("privateKeyFile")?.map(PathBuf::from),
            signing_algorithm: text("signingAlgorithm")?,
            private_key: None,
        };
        if settings.client_secret.is_some() && settings.client_id.is_none() {
            return Err(format!(
                "`oauth.clientSecret` of the server `{key}` needs the `clientId` it belongs to"
            ));
        }
        if settings.client_credentials
            && (settings.client_id.is_none()
                || settings.client_secret.is_none() == settings.private_key_file.is_none())
        {
            return Err(format!("client credentials for the server `{key}` need `oauth.clientId` and one of `clientSecret` and `privateKeyFile`"));
        }
        Ok(settings)
    }
}

/// Shows a person where to authorize yohost to reach an MCP server. The
/// `yohost` command prints the URL and opens it with `$BROWSER` when set;
/// an embedding app shows it as it shows things to its user.
pub trait Authorizer: Send + Sync {
    /// `url` is the authorization server's page for the server `server`.
    /// Once the person approves, their browser comes back to yohost on its
    /// own: nothing is returned here.
    fn present(&self, server: &str, url: &str);
}

/// The most times one connection authorizes after its first: a server
/// that keeps asking for more (a scope it never grants) fails the call
/// instead of sending a person to approve without end.
const MAX_AUTHORIZATIONS_AGAIN: u32 = 2;

/// The authorization of one HTTP connection: the manager its `AuthClient`
/// reads the token from on every request (none until the server asks),
/// and what is needed to authorize again when the server asks in the
/// middle of the session (a token it no longer takes, 401, or a scope it
/// needs, 403 `insufficient_scope`).
pub(crate) struct Session {
    /// Shared with the connection's `AuthClient`.
    pub(crate) manager: Arc<tokio::sync::Mutex<AuthorizationManager>>,
    server: String,
    url: String,
    authorizer: Option<Arc<dyn Authorizer>>,
    settings: OAuthSettings,
    /// Where the tokens it is given are kept.
    tokens: Option<TokenFile>,
    /// How many times it authorized after the first.
    again: AtomicU32,
}

impl Session {
    /// The session of the server `server` at `url`, whose connection reads
    /// its token from `manager` (not authorized yet).
    pub(crate) fn new(
        server: &str,
        url: &str,
        authorizer: Option<Arc<dyn Authorizer>>,
        settings: OAuthSettings,
        tokens: Option<TokenFile>,
        manager: Arc<tokio::sync::Mutex<AuthorizationManager>>,
    ) -> Session {
        Session {
            manager,
            server: server.to_string(),
            url: url.to_string(),
            authorizer,
            settings,
            tokens,
            again: AtomicU32::new(0),
        }
    }

    /// Take up the tokens kept from an earlier authorization, if there are
    /// any and the server's authorization server is still the one that
    /// gave them: the connection is then authorized with no one asked.
    pub(crate) async fn resume(&self) {
        let Some(tokens) = &self.tokens else {
            return;
        };
        let mut manager = self.manager.lock().await;
        manager.set_credential_store(tokens.clone());
        match manager.initialize_from_store().await {
            Ok(true) => {
                tracing::debug!(target: "yohost::plugin", plugin = %self.server, "authorized with the tokens kept from before")
            }
            Ok(false) => {}
            Err(e) => {
                tracing::debug!(target: "yohost::plugin", plugin = %self.server, "the tokens kept from before are not used: {e}")
            }
        }
    }

    /// Authorize as the server's `challenge` asks (the first time, when
    /// the handshake asked), keeping the scopes already granted.
    pub(crate) async fn authorize(&self, challenge: &str, first: bool) -> Result<(), Failure> {
        if !first && self.again.fetch_add(1, Ordering::SeqCst) >= MAX_AUTHORIZATIONS_AGAIN {
            return Err(Failure::Gone(format!(
                "the MCP server `{}` asks for authorization again after {MAX_AUTHORIZATIONS_AGAIN} times in this session ({challenge}); it is not asked for again",
                self.server
            )));
        }
        // The scopes granted so far, and those the challenge names.
        let mut settings = self.settings.clone();
        let held = self.manager.lock().await.get_current_scopes().await;
        let asked = url::Url::parse(&self.url)
            .ok()
            .and_then(|url| WWWAuthenticateParams::parse(challenge, &url).scope)
            .unwrap_or_default();
        let asked = asked.split_whitespace().map(str::to_string);
        for scope in held.into_iter().chain(asked) {
            if !settings.scopes.contains(&scope) {
                settings.scopes.push(scope);
            }
        }
        let manager = authorize(
            &self.server,
            &self.url,
            challenge,
            self.authorizer.as_deref(),
            &settings,
            self.tokens.as_ref(),
        )
        .await?;
        *self.manager.lock().await = manager;
        Ok(())
    }
}

/// The longest a callback request line may be.
const MAX_CALLBACK_BYTES: usize = 16 << 10;

/// Authorize yohost for the server at `url`, which answered with the
/// `WWW-Authenticate` header `challenge`, as `settings` say: the manager
/// that holds the tokens, for the connection to use.
pub(crate) async fn authorize(
    server: &str,
    url: &str,
    challenge: &str,
    authorizer: Option<&dyn Authorizer>,
    settings: &OAuthSettings,
    tokens: Option<&TokenFile>,
) -> Result<AuthorizationManager, Failure> {
    let failed = |e: &dyn std::fmt::Display| {
        Failure::Gone(format!(
            "the MCP server `{server}` asks for authorization, and authorizing failed: {e}"
        ))
    };
    if settings.client_credentials {
        let client_id = settings.client_id.clone().unwrap_or_default();
        let scopes = settings.scopes.clone();
        let resource = Some(url.to_string());
        let config = match (&settings.client_secret, &settings.private_key) {
            (Some(secret), _) => ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret: secret.clone(),
                scopes,
                resource,
            },
            (None, key) => ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key: key.clone().unwrap_or_default(),
                signing_algorithm: signing_algorithm(settings.signing_algorithm.as_deref())
                    .map_err(|e| failed(&e))?,
                token_endpoint_audience: None,
                scopes,
                resource,
            },
        };
        return client_credentials(url.to_string(), config)
            .await
            .map_err(|e| failed(&e));
    }
    let Some(authorizer) = authorizer else {
        return Err(Failure::Gone(format!("the MCP server `{server}` asks for authorization (HTTP 401, OAuth), and no one is there to authorize it: register an authorizer (`McpAdapter::with_authorizer`), as the `yohost` command does, or give it client credentials (`\"oauth\": {{\"grant\": \"client_credentials\", …}}`)")));
    };
    let listener =
        tokio::net::TcpListener::bind(("127.0.0.1", settings.callback_port.unwrap_or(0)))
            .await
            .map_err(|e| failed(&e))?;
    let port = listener.local_addr().map_err(|e| failed(&e))?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    // The tokens it gives are kept in the server's token file.
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e: AuthError| failed(&e))?;
    if let Some(tokens) = tokens {
        manager.set_credential_store(tokens.clone());
    }
    let mut state = OAuthState::Unauthorized(manager);
    let request = || {
        let mut request = AuthorizationRequest::new(&redirect)
            .with_client_name("yohost")
            .with_challenge(challenge);
        if !settings.scopes.is_empty() {
            request = request.with_scopes(settings.scopes.iter().cloned());
        }
        if let Some(client_id) = &settings.client_id {
            request = request.with_preregistered_client(client_id);
        }
        if let Some(document) = &settings.client_metadata_url {
            request = request.with_client_metadata_url(document);
        }
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret);
        }
        request
    };
    let started = state.start_authorization(request()).await;
    if let Err(AuthError::AuthorizationServerMismatch { .. }) = started {
        // The 2025-03-26 specification's discovery: the authorization
        // server's metadata at the MCP server's own origin, its issuer
        // another URL of that origin.
        let session = origin_session(url, request(), tokens)
            .await
            .map_err(|e| failed(&e))?;
        authorizer.present(server, session.get_authorization_url());
        let callback = callback(&listener, port).await.map_err(|e| failed(&e))?;
        session
            .handle_callback_url(&callback)
            .await
            .map_err(|e| failed(&e))?;
        return Ok(session.auth_manager);
    }
    started.map_err(|e| failed(&e))?;
    let page = state
        .get_authorization_url()
        .await
        .map_err(|e| failed(&e))?;
    authorizer.present(server, &page);
    let callback = callback(&listener, port).await.map_err(|e| failed(&e))?;
    state
        .handle_callback_url(&callback)
        .await
        .map_err(|e| failed(&e))?;
    state
        .into_authorization_manager()
        .ok_or_else(|| failed(&"the authorization did not complete"))
}

/// The most bytes of an authorization server's metadata that are read.
const MAX_METADATA_BYTES: usize = 256 << 10;

/// An authorization with the metadata that the server at `url` serves at
/// its own origin (`/.well-known/oauth-authorization-server`), as the
/// 2025-03-26 specification has it: read from the MCP server itself, so
/// its issuer is taken as that origin's word.
async fn origin_session(
    url: &str,
    request: AuthorizationRequest,
    tokens: Option<&TokenFile>,
) -> Result<AuthorizationSession, String> {
    let metadata_url = url::Url::parse(url)
        .and_then(|u| u.join("/.well-known/oauth-authorization-server"))
        .map_err(|e| e.to_string())?;
    let mut response = reqwest::Client::new()
        .get(metadata_url)
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| format!("its authorization server's metadata: {e}"))?;
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_METADATA_BYTES {
            return Err("its authorization server's metadata is too long".into());
        }
    }
    let metadata: AuthorizationMetadata = serde_json::from_slice(&body)
        .map_err(|e| format!("its authorization server's metadata: {e}"))?;
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| e.to_string())?;
    manager.set_metadata(metadata);
    if let Some(tokens) = tokens {
        manager.set_credential_store(tokens.clone());
    }
    AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| e.to_string())
}

/// Authorize with client credentials, as `config` says, at the server
/// `url`'s authorization server. `rmcp`'s exchange holds what cannot move
/// between threads across its awaits, so it runs on a thread and a
/// runtime of its own.
async fn client_credentials(
    url: String,
    config: ClientCredentialsConfig,
) -> Result<AuthorizationManager, String> {
    let exchange = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let mut state = OAuthState::new(&url, None)
                .await
                .map_err(|e| e.to_string())?;
            state
                .authenticate_client_credentials(config)
                .await
                .map_err(|e| e.to_string())?;
            state
                .into_authorization_manager()
                .ok_or_else(|| "the authorization did not complete".to_string())
        })
    });
    exchange.await.map_err(|e| e.to_string())?
}

/// The algorithm `name` names (ES256 when none is named).
fn signing_algorithm(name: Option<&str>) -> Result<JwtSigningAlgorithm, String> {
    Ok(match name.unwrap_or("ES256") {
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        other => {
            return Err(format!(
                "`oauth.signingAlgorithm` `{other}` is not ES256, ES384, RS256, RS384 or RS512"
            ))
        }
    })
}

/// Wait for the browser's request to the callback, answer it, and give the
/// URL it asked for (with the code and state the flow reads). Requests for
/// other paths (a browser's favicon) are answered 404 and passed over.
async fn callback(listener: &tokio::net::TcpListener, port: u16) -> std::io::Result<String> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        let mut head = Vec::new();
        let mut buffer = [0u8; 1024];
        while !head.windows(2).any(|w| w == b"\r\n") && head.len() < MAX_CALLBACK_BYTES {
            let read = stream.read(&mut buffer).await?;
            if read == 0 {
                break;
            }
            head.extend_from_slice(&buffer[..read]);
        }
        let line = String::from_utf8_lossy(&head);
        let target = line
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default()
            .to_string();
        if target.starts_with("/callback?") {
            let body = "yohost is authorized: you may close this page.";
            let reply = format!("HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
            stream.write_all(reply.as_bytes()).await?;
            return Ok(format!("http://127.0.0.1:{port}{target}"));
        }
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(oauth: Value) -> Result<OAuthSettings, String> {
        OAuthSettings::parse("crm", &oauth, &|value, _| {
            Ok(value.replace("${env:SECRET}", "s3cret"))
        })
    }

    #[test]
    fn an_entry_s_oauth_names_its_client_grant_and_key() {
        let settings = parse(json!({"clientId": "me", "clientSecret": "${env:SECRET}", "callbackPort": 8765, "scopes": "a b"})).unwrap();
        assert_eq!(settings.client_id.as_deref(), Some("me"));
        assert_eq!(settings.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(settings.callback_port, Some(8765));
        assert_eq!(settings.scopes, ["a", "b"]);
        assert!(
            !format!("{settings:?}").contains("s3cret"),
            "the secret is not shown"
        );
        let jwt = parse(
            json!({"grant": "client_credentials", "clientId": "me", "privateKeyFile": "key.pem"}),
        )
        .unwrap();
        assert!(jwt.client_credentials);
        assert_eq!(jwt.private_key_file, Some(PathBuf::from("key.pem")));
    }

    #[test]
    fn an_oauth_that_cannot_work_is_refused_saying_why() {
        for (oauth, says) in [
            (json!({"clientSecret": "x"}), "needs the `clientId`"),
            (
                json!({"grant": "client_credentials", "clientId": "me"}),
                "one of `clientSecret` and `privateKeyFile`",
            ),
            (
                json!({"grant": "client_credentials", "clientId": "me", "clientSecret": "x", "privateKeyFile": "k"}),
                "one of `clientSecret` and `privateKeyFile`",
            ),
            (
                json!({"grant": "implicit"}),
                "`oauth.grant` of the server `crm` is `implicit`",
            ),
            (json!({"callbackPort": 70000}), "must be a port number"),
            (
                json!({"clientID": "me"}),
                "`oauth.clientID` of the server `crm` is not one yohost reads",
            ),
            (json!("me"), "must be an object"),
        ] {
            let why = parse(oauth.clone()).unwrap_err();
            assert!(why.contains(says), "{oauth}: {why}");
        }
    }
}
