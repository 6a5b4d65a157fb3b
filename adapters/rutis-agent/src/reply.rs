//! What `rutis_plugin_tool_invoke` returned, as a yohost tool result.
//!
//! | The library returned | The model gets |
//! |---|---|
//! | a JSON object with `"ok": true` | a result: the object without `ok`, as JSON text (and as `details`) |
//! | a JSON object with `"error": "…"` and no `"ok": true` | an error result with that text |
//! | any other UTF-8 text | an error result with that text |
//! | a null pointer, bytes that are not UTF-8, more than the reply limit | the call fails (the host's fail-closed message) |

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
                yohost::limits::MAX_REPLY_BYTES + 1,
            ))
        }
        Returned::Bytes(bytes) => bytes,
    };
    let text = String::from_utf8(bytes).map_err(|_| bad("the tool's result is not UTF-8"))?;
    Ok(match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut map)) if map.get("ok") == Some(&Value::Bool(true)) => {
            map.remove("ok");
            let details = Value::Object(map);
            let mut reply = ToolReply::text(details.to_string());
            reply.details = details;
            reply
        }
        Ok(Value::Object(map)) => match map.get("error") {
            Some(Value::String(error)) => ToolReply::error(error.clone()),
            _ => ToolReply::error(text),
        },
        _ => ToolReply::error(text),
    })
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
    fn ok_true_is_a_result_and_anything_else_an_error() {
        let ok = reply(br#"{"ok":true,"count":3}"#).unwrap();
        assert!(!ok.is_error);
        assert_eq!(text(&ok), r#"{"count":3}"#);
        assert_eq!(ok.details["count"], 3);
        for (raw, shown) in [
            (
                &br#"{"ok":false,"error":"no such file"}"#[..],
                "no such file",
            ),
            (br#"{"error":"denied"}"#, "denied"),
            (br#"{"ok":"true"}"#, r#"{"ok":"true"}"#),
            (br#"{"ok":1,"error":7}"#, r#"{"ok":1,"error":7}"#),
            (b"plain words", "plain words"),
            (b"[true]", "[true]"),
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
