//! A manifest's text around the TOML parser: nesting too deep is refused
//! before it parses, and a parser's message about an unknown field or value
//! names the one meant.

/// The deepest nesting of `[` and `{` in `text`, counting brackets outside
/// comments and strings. A table header `[a]` counts one level, as an array
/// does.
pub(super) fn nesting_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut chars = text.chars().peekable();
    // The quote that closes the string being read, and whether it is a
    // multi-line string (closed by three quotes).
    let mut string: Option<(char, bool)> = None;
    while let Some(c) = chars.next() {
        match string {
            Some((quote, multi)) => {
                if c == '\\' && quote == '"' {
                    chars.next();
                } else if c == quote {
                    if !multi {
                        string = None;
                    } else if chars.peek() == Some(&quote) {
                        chars.next();
                        if chars.peek() == Some(&quote) {
                            chars.next();
                            string = None;
                        }
                    }
                }
            }
            None => match c {
                '#' => {
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '"' | '\'' => {
                    let multi = chars.peek() == Some(&c) && {
                        chars.next();
                        if chars.peek() == Some(&c) {
                            chars.next();
                            true
                        } else {
                            // An empty string: already closed.
                            continue;
                        }
                    };
                    string = Some((c, multi));
                }
                '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

/// `message` with the known key or value closest to the unknown one it
/// names, if one is close (`unknown field \`entyr\`, expected one of
/// \`name\`, …`; `unknown variant \`requird\`, expected …`).
pub(super) fn did_you_mean(message: String) -> String {
    let Some(rest) = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))
    else {
        return message;
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message;
    };
    let known = expected.split('`').skip(1).step_by(2);
    match crate::model::names::closest(unknown, known) {
        Some(meant) => format!("{message}; did you mean `{meant}`?"),
        None => message,
    }
}
