//! A redaction filter and tool, one source for two targets: built as a Wasm
//! component (sandboxed) or as a dylib.
//!
//! - `after_tool`: replaces secrets in every tool's text output with
//!   `[redacted]` (tokens starting `sk-` or `AKIA`, and the value of
//!   `password=`/`token=` pairs), and notes how many it removed.
//! - the `redact` tool: redacts the `text` it is given.

use yohost_sdk::*;

#[derive(Default)]
struct Redactor;

/// The replacement for a secret.
const REDACTED: &str = "[redacted]";

/// Text with its secrets replaced, and how many were replaced.
fn redact(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut count = 0;
    for piece in text.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end();
        let space = &piece[word.len()..];
        let token = word.trim_end_matches(['.', ',', ';', ')', '"', '\'']);
        let tail = &word[token.len()..];
        if let Some((key, _)) = token.split_once('=').filter(|(k, v)| {
            !v.is_empty()
                && *v != REDACTED
                && ["password", "token"].contains(&k.to_ascii_lowercase().as_str())
        }) {
            out.push_str(&format!("{key}={REDACTED}{tail}{space}"));
            count += 1;
        } else if (token.starts_with("sk-") && token.len() > 8)
            || (token.starts_with("AKIA") && token.len() >= 16)
        {
            out.push_str(&format!("{REDACTED}{tail}{space}"));
            count += 1;
        } else {
            out.push_str(piece);
        }
    }
    (out, count)
}

#[plugin]
impl Plugin for Redactor {
    const NAME: &'static str = "wasm-redactor";

    fn tools(&self, _run: &RunInfo) -> Result<Vec<ToolSpec>, String> {
        Ok(vec![ToolSpec {
            name: "redact".into(),
            description: "Replace secrets (API keys, passwords, tokens) in a text with [redacted]"
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            }),
            label: Some("Redact".into()),
            prepares_arguments: false,
        }])
    }

    fn call_tool(&self, call: CallToolArgs) -> Result<ToolReply, String> {
        let text = call.args["text"]
            .as_str()
            .ok_or("`text` must be a string")?;
        let (redacted, count) = redact(text);
        info(&format!("redact: replaced {count} secrets"));
        Ok(ToolReply::text(redacted))
    }

    fn after_tool(&self, call: AfterToolArgs) -> Result<AfterToolReply, String> {
        let mut total = 0;
        let content: Vec<ContentBlock> = call
            .output
            .content
            .into_iter()
            .map(|block| match block {
                ContentBlock::Text { text } => {
                    let (text, count) = redact(&text);
                    total += count;
                    ContentBlock::Text { text }
                }
                image => image,
            })
            .collect();
        if total == 0 {
            return Ok(AfterToolReply::default());
        }
        info(&format!("{} output: redacted {total} secrets", call.tool));
        Ok(AfterToolReply {
            content: Some(content),
            ..AfterToolReply::default()
        })
    }
}

export_plugin!(Redactor);
