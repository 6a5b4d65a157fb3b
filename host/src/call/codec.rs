//! Turning a plugin's reply bytes into the decoded reply value, and a
//! hook's argument into bytes, for every engine.
//!
//! The size limit is checked on the bytes before anything is decoded. The
//! shape is checked later, once, by
//! [`call_hook`](crate::run::invoke::call_hook) with the contract's strict
//! reader.

use crate::call::error::CallError;
use crate::model::limits::MAX_REPLY_BYTES;
use serde::Deserialize;
use serde_json::Value;
use yohost_contract::{Hook, HookCall};

/// Decode a JSON reply (JS and Python engines cross as JSON text).
pub fn decode_json_reply(hook: Hook, text: &str) -> Result<Value, CallError> {
    check_size(text.len())?;
    serde_json::from_str(text).map_err(|e| {
        CallError::BadReply(yohost_contract::ReplyError {
            hook,
            problem: format!("not JSON: {e}"),
        })
    })
}

/// How deeply a MessagePack reply may nest: as deeply as `serde_json` lets
/// a JSON reply nest, so both forms of a reply are held to one rule (and
/// decoding never recurses deeper than that).
pub const MAX_MSGPACK_DEPTH: usize = 128;

/// Decode a MessagePack reply (the dylib ABI): exactly one value, nested at
/// most [`MAX_MSGPACK_DEPTH`] deep. Length prefixes are never trusted: a
/// string, list or map can claim no more than the bytes that follow.
pub fn decode_msgpack_reply(hook: Hook, bytes: &[u8]) -> Result<Value, CallError> {
    check_size(bytes.len())?;
    let bad = |problem: String| CallError::BadReply(yohost_contract::ReplyError { hook, problem });
    let mut rest = bytes;
    let mut decoder = rmp_serde::Deserializer::new(&mut rest);
    decoder.set_max_depth(MAX_MSGPACK_DEPTH);
    let value =
        Value::deserialize(&mut decoder).map_err(|e| bad(format!("not MessagePack: {e}")))?;
    if !rest.is_empty() {
        return Err(bad(format!(
            "not MessagePack: {} bytes after the reply",
            rest.len()
        )));
    }
    Ok(value)
}

/// The hook's argument as MessagePack bytes. An argument that cannot be
/// encoded fails the call ([`CallError::Encode`]): the plugin never receives
/// empty or partial input in its place.
pub fn encode_msgpack_args(call: &HookCall) -> Result<Vec<u8>, CallError> {
    encode_msgpack(call)
}

/// The hook's argument as JSON text (the JS and Python engines), written
/// straight from the typed argument. An argument that cannot be encoded
/// fails the call ([`CallError::Encode`]).
pub fn encode_json_args(call: &HookCall) -> Result<String, CallError> {
    serde_json::to_string(call).map_err(|e| CallError::Encode(e.to_string()))
}

/// Room for a typical argument, so encoding one does not grow the buffer
/// several times over.
const TYPICAL_ARGS_BYTES: usize = 512;

fn encode_msgpack(value: &impl serde::Serialize) -> Result<Vec<u8>, CallError> {
    let mut bytes = Vec::with_capacity(TYPICAL_ARGS_BYTES);
    rmp_serde::encode::write_named(&mut bytes, value)
        .map_err(|e| CallError::Encode(e.to_string()))?;
    Ok(bytes)
}

/// Refuse a reply over [`MAX_REPLY_BYTES`].
pub fn check_size(len: usize) -> Result<(), CallError> {
    if len > MAX_REPLY_BYTES {
        return Err(CallError::ReplyTooLarge(len));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use yohost_contract::{OnInputArgs, RunInfo};

    fn on_input() -> HookCall {
        HookCall::OnInput(OnInputArgs {
            run: RunInfo::default(),
            text: "hi".into(),
        })
    }

    #[test]
    fn oversized_and_malformed_replies_are_failures() {
        let huge = format!("\"{}\"", "x".repeat(MAX_REPLY_BYTES));
        assert!(matches!(
            decode_json_reply(Hook::OnInput, &huge),
            Err(CallError::ReplyTooLarge(_))
        ));
        assert!(matches!(
            decode_json_reply(Hook::OnInput, "{not json"),
            Err(CallError::BadReply(_))
        ));
        assert!(matches!(
            decode_msgpack_reply(Hook::OnInput, &[0xc1]),
            Err(CallError::BadReply(_))
        ));
        // `null` then a stray byte: one value and nothing after it.
        assert!(matches!(
            decode_msgpack_reply(Hook::OnInput, &[0xc0, 0xc0]),
            Err(CallError::BadReply(_))
        ));
    }

    /// A value whose encoding fails.
    struct Unencodable;

    impl serde::Serialize for Unencodable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("cannot be encoded"))
        }
    }

    #[test]
    fn an_argument_that_cannot_be_encoded_fails_the_call() {
        assert!(matches!(
            encode_msgpack(&Unencodable),
            Err(CallError::Encode(_))
        ));
        let bytes = encode_msgpack_args(&on_input()).unwrap();
        let back: serde_json::Value = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!(back["text"], "hi");
    }

    #[test]
    fn json_args_are_the_argument_s_own_fields() {
        let text = encode_json_args(&on_input()).unwrap();
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, on_input().args_json());
    }

    #[test]
    fn msgpack_replies_round_trip() {
        let bytes = rmp_serde::to_vec_named(&serde_json::json!({"reject": "no"})).unwrap();
        let reply = decode_msgpack_reply(Hook::OnInput, &bytes).unwrap();
        assert_eq!(reply, serde_json::json!({"reject": "no"}));
    }
}
