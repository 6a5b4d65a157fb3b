//! The messages host and bootstrap exchange, one per frame: a JSON object
//! whose `t` names it.
//!
//! Host to Node: `init` (once, first), `call`, `abort`, and `source` (the
//! answer to a source request). Node to host: `source` (strip the types of
//! a TypeScript file), `ready` or `refused` (once, after `init`), one of
//! `done`, `fail`, `bad_reply` or `too_large` per call, and `log`.

use crate::engines::js::glue::{Shaped, UnknownName};
use crate::engines::js::services::FileOp;
use crate::load::loaded::AppSurface;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The flavor's modules, by specifier, and its shape's specifier.
#[derive(Debug, Serialize)]
pub struct FlavorSources {
    /// What plugins may import by bare name (a stand-in for a package the
    /// flavor owns with the names this plugin imports that it lacks, bound
    /// to `undefined`).
    pub builtins: BTreeMap<&'static str, std::borrow::Cow<'static, str>>,
    /// The packages the flavor serves whole (see `Flavor::owned`).
    pub owned: &'static [&'static str],
    /// What only the flavor's modules may import.
    pub internals: BTreeMap<&'static str, &'static str>,
    /// The shape module.
    pub shape: &'static str,
    /// The module run before the plugin's code, if any.
    pub prelude: Option<&'static str>,
}

/// The host's services, as the bootstrap offers them to the flavor.
#[derive(Debug, Serialize)]
pub struct ServiceSettings {
    /// The module error messages start with.
    pub module: &'static str,
    /// What relative file paths start from.
    pub relative_to: PathBuf,
    /// The host's working directory.
    pub cwd: PathBuf,
    /// Whether `exec` is offered.
    pub exec: bool,
    /// The file operations the bootstrap does not serve, with why
    /// ([`FileOp::lacking_on_node`]).
    pub lacks: BTreeMap<FileOp, &'static str>,
}

/// A message to the bootstrap.
#[derive(Debug, Serialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ToNode<'a> {
    /// Load the plugin.
    Init {
        /// The entry file.
        entry: &'a std::path::Path,
        /// The plugin's other entries (a pi package's other extensions),
        /// loaded after it, in order.
        also: &'a [std::path::PathBuf],
        /// The plugin's folder (`ctx.pluginDir`).
        plugin_dir: &'a std::path::Path,
        /// The plugin's own paths, resolved: the only places it may import
        /// from (`Candidate::own_paths`).
        own: &'a [std::path::PathBuf],
        /// What the shape receives besides the module.
        settings: &'a serde_json::Value,
        /// The granted environment variables.
        env: &'a BTreeMap<String, String>,
        /// The flavor.
        flavor: &'a FlavorSources,
        /// The host's services, for flavors that offer them.
        services: Option<&'a ServiceSettings>,
        /// Loaded for a check: requests are noted, not made.
        dry_run: bool,
        /// The longest log message the bootstrap sends.
        log_limit: usize,
        /// The largest reply the bootstrap sends.
        reply_limit: usize,
    },
    /// Run a hook.
    Call {
        /// The call's id.
        id: u64,
        /// The hook's contract name.
        hook: &'a str,
        /// Its argument, as JSON text ([`encode_json_args`](crate::call::codec::encode_json_args)).
        args: &'a RawValue,
        /// The run it belongs to.
        run_id: &'a str,
        /// The call may ask the app's user (`ctx.ui`).
        asks: bool,
    },
    /// The host gave up on a call: abort its `ctx.signal`.
    Abort {
        /// The call's id.
        id: u64,
        /// `AbortError` (cancelled) or `TimeoutError` (past its deadline).
        name: &'a str,
        /// Why.
        message: &'a str,
    },
    /// The app's user answered a call's request ([`FromNode::Ask`]).
    Answer {
        /// The request's id.
        id: u64,
        /// `{"ok": answer}` or `{"error": why}` ([`crate::call::ui`]).
        reply: &'a RawValue,
    },
    /// A stripped TypeScript source, or why there is none.
    Source {
        /// The request's id.
        id: u64,
        /// The JavaScript.
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<&'a str>,
        /// Why it could not be given.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    },
}

impl ToNode<'_> {
    /// The message as frame text.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Strings, paths, maps and JSON values only: serializing cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// A message from the bootstrap.
#[derive(Debug)]
pub enum FromNode {
    /// Strip the types of `path`.
    Source {
        /// The request's id.
        id: u64,
        /// The file.
        path: PathBuf,
    },
    /// The plugin loaded, shaped as its flavor's shape made it.
    Ready(Shaped),
    /// The plugin ran its `unload` after stdin closed, and waits to be
    /// ended with everything it started.
    Unloaded,
    /// A call asks the app's user ([`crate::call::ui`]); answered by
    /// [`ToNode::Answer`].
    Ask {
        /// The request's id.
        id: u64,
        /// The call that asks.
        call: u64,
        /// The request, as JSON text.
        request: String,
    },
    /// The plugin could not load.
    Refused {
        /// Why.
        message: String,
    },
    /// A call's reply, as JSON text.
    Done {
        /// The call's id.
        id: u64,
        /// The reply.
        reply: Box<RawValue>,
    },
    /// A call threw or rejected: the plugin's own answer.
    Fail {
        /// The call's id.
        id: u64,
        /// What it threw.
        message: String,
    },
    /// How a call goes, for its progress listener.
    Progress {
        /// The call's id.
        id: u64,
        /// The message.
        message: String,
    },
    /// A call's reply cannot be turned into JSON.
    BadReply {
        /// The call's id.
        id: u64,
        /// Why.
        message: String,
    },
    /// A call's reply is over the limit.
    TooLarge {
        /// The call's id.
        id: u64,
        /// Its size.
        bytes: usize,
    },
    /// A log line, of a call when `id` is set.
    Log {
        /// The call it belongs to.
        id: Option<u64>,
        /// The run it names.
        run_id: Option<String>,
        /// `info`, `warn`, `error` or `debug`.
        level: String,
        /// The line.
        message: String,
    },
}

/// A frame that is not a message of the protocol.
#[derive(Debug, thiserror::Error)]
#[error("not a message of the protocol: {0}")]
pub struct ProtocolError(String);

/// Every field any message from the bootstrap has. (A reply kept as raw
/// JSON cannot be read through serde's internally tagged enums.)
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    t: String,
    id: Option<u64>,
    path: Option<PathBuf>,
    name: Option<String>,
    hooks: Option<Vec<String>>,
    warnings: Option<Vec<String>>,
    unknown: Option<Vec<UnknownName>>,
    unloads: Option<bool>,
    app: Option<AppSurface>,
    call: Option<u64>,
    request: Option<String>,
    message: Option<String>,
    #[serde(default, deserialize_with = "raw")]
    reply: Option<Box<RawValue>>,
    bytes: Option<usize>,
    run_id: Option<String>,
    level: Option<String>,
}

/// A field kept as its JSON text, `null` included (which `Option` alone
/// would read as absent).
fn raw<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

impl FromNode {
    /// Read a frame's body.
    pub fn parse(body: &[u8]) -> Result<FromNode, ProtocolError> {
        let f: Fields = serde_json::from_slice(body).map_err(|e| ProtocolError(e.to_string()))?;
        let missing = |field: &str| ProtocolError(format!("`{}` has no `{field}`", f.t));
        let id = || f.id.ok_or_else(|| missing("id"));
        let message = || f.message.clone().ok_or_else(|| missing("message"));
        Ok(match f.t.as_str() {
            "source" => FromNode::Source {
                id: id()?,
                path: f.path.clone().ok_or_else(|| missing("path"))?,
            },
            "ready" => FromNode::Ready(Shaped {
                name: f.name.clone(),
                hooks: f.hooks.clone().ok_or_else(|| missing("hooks"))?,
                warnings: f.warnings.clone().unwrap_or_default(),
                unknown: f.unknown.clone().unwrap_or_default(),
                unloads: f.unloads.unwrap_or(false),
                app: f.app.clone().unwrap_or_default(),
            }),
            "unloaded" => FromNode::Unloaded,
            "ask" => FromNode::Ask {
                id: id()?,
                call: f.call.ok_or_else(|| missing("call"))?,
                request: f.request.clone().ok_or_else(|| missing("request"))?,
            },
            "refused" => FromNode::Refused {
                message: message()?,
            },
            "done" => FromNode::Done {
                id: id()?,
                reply: f.reply.clone().ok_or_else(|| missing("reply"))?,
            },
            "fail" => FromNode::Fail {
                id: id()?,
                message: message()?,
            },
            "progress" => FromNode::Progress {
                id: id()?,
                message: message()?,
            },
            "bad_reply" => FromNode::BadReply {
                id: id()?,
                message: message()?,
            },
            "too_large" => FromNode::TooLarge {
                id: id()?,
                bytes: f.bytes.ok_or_else(|| missing("bytes"))?,
            },
            "log" => FromNode::Log {
                id: f.id,
                run_id: f.run_id.clone(),
                level: f.level.clone().ok_or_else(|| missing("level"))?,
                message: message()?,
            },
            other => return Err(ProtocolError(format!("unknown message `{other}`"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_kept_as_the_json_text_the_plugin_sent() {
        let done = FromNode::parse(br#"{"t":"done","id":3,"reply":{"deny":"no"}}"#).unwrap();
        assert!(
            matches!(done, FromNode::Done { id: 3, ref reply } if reply.get() == r#"{"deny":"no"}"#)
        );
        // `null` is a reply (allow), not a missing one.
        let allow = FromNode::parse(br#"{"t":"done","id":4,"reply":null}"#).unwrap();
        assert!(matches!(allow, FromNode::Done { id: 4, ref reply } if reply.get() == "null"));
    }

    #[test]
    fn a_call_carries_its_argument_as_the_encoder_wrote_it() {
        let args = RawValue::from_string(r#"{"text":"hi"}"#.into()).unwrap();
        let frame = ToNode::Call {
            id: 1,
            hook: "on_input",
            args: &args,
            run_id: "r",
            asks: false,
        }
        .to_bytes();
        let back: serde_json::Value = serde_json::from_slice(&frame).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"t": "call", "id": 1, "hook": "on_input", "args": {"text": "hi"}, "run_id": "r", "asks": false})
        );
    }

    #[test]
    fn frames_outside_the_protocol_are_errors() {
        for hostile in [
            &br#"{"t":"done","reply":null}"#[..],
            br#"{"t":"launch","id":1}"#,
            br#"{"t":"log","level":"info","message":"x","extra":1}"#,
            b"not json",
            br#"[1,2]"#,
        ] {
            assert!(FromNode::parse(hostile).is_err(), "{hostile:?}");
        }
    }
}
