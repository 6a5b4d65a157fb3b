//! What `rutis_plugin_tool_invoke` returned, as a yohost tool result, read
//! as rutis's own loader reads it (`crates/rutis-agent/src/tools/hotplug.rs`):
//!
//! | The library returned | The model gets |
//! |---|---|
//! | JSON with `"ok": true` | a result: its `notes`, as text when it is a string and as JSON otherwise, or `ok` without `notes`; the whole object is the result's `details` |
//! | any other JSON | an error result: `error: ` and the whole JSON |
//! | UTF-8 text that is not JSON | an error result: `error: ` and the text as a JSON string |
//! | a null pointer, bytes that are not UTF-8, more than the reply limit | the call fails (the host's fail-closed message); rutis would crash or show nothing |

use crate::library::Returned;
use serde_json::Value;
use yohost::contract::{Hook, ReplyError, ToolReply};
use yohost::CallError;

/// Turn what the library returned into the tool's result.
pub fn tool_reply(returned: Returned) -> Result<ToolReply, CallError> {
    let bad = |problem: &str| {
        CallError::BadReply(ReplyError {
            hook: Hook::CallTool,
            problem: problem.to_string(),
        })
    };
    let bytes = match returned {
        Returned::Null => return Err(bad("the tool returned no result (a null pointer)")),
        Returned::TooLong => {
            return Err(CallError::ReplyTooLarge(
                yohost::adapter::limits::MAX_REPLY_BYTES + 1,
            ))
        }
        Returned::Bytes(bytes) => bytes,
    };
    let text = String::from_utf8(bytes).map_err(|_| bad("the tool's result is not UTF-8"))?;
    let value = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
    if value.get("ok").and_then(Value::as_bool) != Some(true) {
        return Ok(ToolReply::error(format!("error: {value}")));
    }
    let shown = match value.get("notes") {
        Some(Value::String(notes)) => notes.clone(),
        Some(notes) => notes.to_string(),
        None => "ok".to_string(),
    };
    let mut reply = ToolReply::text(shown);
    reply.details = value;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use yohost::contract::ContentBlock;

    fn reply(text: &[u8]) -> Result<ToolReply, CallError> {
        tool_reply(Returned::Bytes(text.to_vec()))
    }

    fn text(reply: &ToolReply) -> &str {
        match &reply.content[..] {
            [ContentBlock::Text { text }] => text,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ok_true_shows_its_notes_and_anything_else_is_an_error_as_rutis_shows_it() {
        for (raw, shown) in [
            (
                &br#"{"ok":true,"notes":"v0.2.0: hot-loading"}"#[..],
                "v0.2.0: hot-loading",
            ),
            (br#"{"ok":true,"notes":{"n":1}}"#, r#"{"n":1}"#),
            (br#"{"ok":true,"count":3}"#, "ok"),
        ] {
            let ok = reply(raw).unwrap();
            assert!(!ok.is_error, "{shown}");
            assert_eq!(text(&ok), shown);
        }
        assert_eq!(
            reply(br#"{"ok":true,"count":3}"#).unwrap().details["count"],
            3
        );
        // The whole JSON, as serde_json writes it (as rutis's loader does).
        let whole = |raw: &str| format!("error: {}", serde_json::from_str::<Value>(raw).unwrap());
        for (raw, shown) in [
            (
                &br#"{"ok":false,"error":"no such file"}"#[..],
                whole(r#"{"ok":false,"error":"no such file"}"#),
            ),
            (br#"{"error":"denied"}"#, whole(r#"{"error":"denied"}"#)),
            (br#"{"ok":"true"}"#, whole(r#"{"ok":"true"}"#)),
            (b"plain words", r#"error: "plain words""#.to_string()),
            (b"[true]", "error: [true]".to_string()),
        ] {
            let error = reply(raw).unwrap();
            assert!(error.is_error, "{shown}");
            assert_eq!(text(&error), shown);
        }
    }

    #[test]
    fn unreadable_results_fail_the_call() {
        assert!(matches!(reply(b"\xff\xfe"), Err(CallError::BadReply(_))));
        assert!(matches!(
            tool_reply(Returned::Null),
            Err(CallError::BadReply(_))
        ));
        assert!(matches!(
            tool_reply(Returned::TooLong),
            Err(CallError::ReplyTooLarge(_))
        ));
    }
}
