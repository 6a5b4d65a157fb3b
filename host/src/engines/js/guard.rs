//! The guard every parse of a plugin's source goes through (here and in
//! the CommonJS analysis and the package reader): [`guarded`].
//!
//! Sources are untrusted, and oxc recurses once per level of nesting with
//! no limit of its own: 10,000 nested brackets overflow an 8 MiB stack and
//! abort the process. So:
//! - a source may be at most [`MAX_SOURCE_BYTES`];
//! - a quick lexical scan refuses brackets (and template substitutions)
//!   nested deeper than [`MAX_NESTING`], naming the line, before oxc runs;
//! - oxc runs on a thread of its own whose stack holds
//!   [`STACK_PER_SOURCE_BYTE`] for every byte of the source. Every level of
//!   nesting takes at least one byte, and the most stack a byte was measured
//!   to cost (an unclosed TypeScript tuple type `[`) is about 1.8 KiB, so no
//!   source that fits the size limit can overflow it, whatever the scan
//!   missed. The stack is reserved, not used: only what the parse touches
//!   costs memory.
//!
//! A refusal, like a syntax error, is a [`TranspileError`] naming the file,
//! the line and the column.

use oxc::diagnostics::OxcDiagnostic;
use std::path::Path;

/// The largest source file a plugin may have: 1 MiB.
pub const MAX_SOURCE_BYTES: u64 = 1024 * 1024;

/// The deepest brackets (`(`, `[`, `{`, and template `${`) may nest.
pub const MAX_NESTING: usize = 1000;

/// The parser thread's stack for each byte of source (see the module docs).
pub const STACK_PER_SOURCE_BYTE: usize = 4 * 1024;

/// The parser thread's stack beside what the source's bytes earn.
const BASE_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Why a source could not be turned into JavaScript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranspileError {
    /// `file:line:column: message`, for the first error found.
    pub message: String,
}

/// Run `parse`, a parse of plugin source `source` (named `file` in
/// messages), as every parse of a plugin's JavaScript or TypeScript runs
/// (see the module docs): refused when the source is over
/// [`MAX_SOURCE_BYTES`] or its brackets nest deeper than [`MAX_NESTING`]
/// (naming the line), and otherwise run on a thread whose stack fits the
/// source.
pub fn guarded<T: Send>(
    file: &Path,
    source: &str,
    parse: impl FnOnce() -> T + Send,
) -> Result<T, TranspileError> {
    let refuse = |message: String| TranspileError {
        message: format!("{}: {message}", file.display()),
    };
    if source.len() as u64 > MAX_SOURCE_BYTES {
        return Err(refuse(format!(
            "the source is {} bytes, over the limit of {MAX_SOURCE_BYTES}",
            source.len()
        )));
    }
    if let Some(offset) = too_deep(source, MAX_NESTING) {
        return Err(at(
            file,
            source,
            offset,
            &format!("brackets nest deeper than {MAX_NESTING} levels"),
        ));
    }
    let stack = BASE_STACK_BYTES + STACK_PER_SOURCE_BYTE * source.len();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("yohost-parse".into())
            .stack_size(stack)
            .spawn_scoped(scope, parse)
            .map_err(|e| {
                refuse(format!(
                    "cannot start the parser ({stack} bytes of stack): {e}"
                ))
            })?
            .join()
            .map_err(|_| refuse("the parser panicked".into()))
    })
}

/// `file:line:column: message` for the diagnostic's first label.
pub(crate) fn located(file: &Path, source: &str, error: &OxcDiagnostic) -> TranspileError {
    let offset = error
        .labels
        .first()
        .map(|l| l.span().start as usize)
        .unwrap_or(0);
    at(file, source, offset, &error.message)
}

/// `file:line:column: message` for byte `offset` of `source`.
fn at(file: &Path, source: &str, offset: usize, message: &str) -> TranspileError {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    TranspileError {
        message: format!("{}:{line}:{column}: {message}", file.display()),
    }
}

/// Words after which a `/` starts a regular expression, not a division.
const BEFORE_REGEX: [&str; 16] = [
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
    "extends",
    "default",
];

/// The byte offset at which the brackets of `source` (`(`, `[`, `{` and a
/// template's `${`) first nest deeper than `limit`, if they do.
///
/// A lexical scan: strings, comments, template text and regular
/// expressions are skipped, a `/` being a regular expression where an
/// operand may start (the usual rule of thumb: after an operator, an
/// opening bracket, `}`, or a keyword such as `return`). It guards against
/// hostile nesting early and with a clear message; it is not what keeps the
/// parser's stack from overflowing (see the module docs).
fn too_deep(source: &str, limit: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    // Open brackets; `$` marks a template substitution.
    let mut open: Vec<u8> = Vec::new();
    let mut operand_next = true;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        match c {
            b'/' if next == Some(b'/') => i = skip_until(bytes, i + 2, b"\n"),
            b'/' if next == Some(b'*') => i = skip_until(bytes, i + 2, b"*/"),
            b'/' if operand_next => {
                i = skip_regex(bytes, i + 1);
                operand_next = false;
            }
            b'"' | b'\'' => {
                i = skip_string(bytes, i + 1, c);
                operand_next = false;
            }
            b'`' => {
                (i, operand_next) = template_text(bytes, i + 1, &mut open);
                if open.len() > limit {
                    return Some(i - 1);
                }
            }
            b'(' | b'[' | b'{' => {
                open.push(c);
                if open.len() > limit {
                    return Some(i);
                }
                operand_next = true;
                i += 1;
            }
            b'}' if open.last() == Some(&b'$') => {
                open.pop();
                (i, operand_next) = template_text(bytes, i + 1, &mut open);
                if open.len() > limit {
                    return Some(i - 1);
                }
            }
            b')' | b']' | b'}' => {
                open.pop();
                operand_next = c == b'}';
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            c if c.is_ascii_alphanumeric()
                || matches!(c, b'_' | b'$' | b'#' | b'.')
                || c >= 0x80 =>
            {
                // The first byte is part of the word (a `#` too, which
                // the loop below does not take), so the scan always moves.
                let start = i;
                i += 1;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric()
                        || matches!(bytes[i], b'_' | b'$' | b'.')
                        || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                let word = &source[start..i];
                operand_next = BEFORE_REGEX.contains(&word) || word.ends_with('.');
            }
            _ => {
                // An operator or other punctuation; after `++`/`--` an
                // operand ended.
                operand_next = !matches!((c, next), (b'+', Some(b'+')) | (b'-', Some(b'-')));
                i += if operand_next { 1 } else { 2 };
            }
        }
    }
    None
}

/// The index after the first `end` at or after `i` (or the end).
fn skip_until(bytes: &[u8], i: usize, end: &[u8]) -> usize {
    bytes
        .get(i..)
        .and_then(|rest| rest.windows(end.len()).position(|w| w == end))
        .map_or(bytes.len(), |at| i + at + end.len())
}

/// The index after the string closed by `quote` whose text starts at `i`.
fn skip_string(bytes: &[u8], mut i: usize, quote: u8) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == quote || c == b'\n' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The index after the regular expression whose body starts at `i`.
fn skip_regex(bytes: &[u8], mut i: usize) -> usize {
    let mut in_class = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            b'[' => {
                in_class = true;
                i += 1;
            }
            b']' => {
                in_class = false;
                i += 1;
            }
            b'/' if !in_class => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Scan template text from `i` to its closing backtick, or to a `${`
/// (pushed on `open`). Returns where code resumes and whether an operand
/// comes next there.
fn template_text(bytes: &[u8], mut i: usize, open: &mut Vec<u8>) -> (usize, bool) {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => return (i + 1, false),
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                open.push(b'$');
                return (i + 2, true);
            }
            _ => i += 1,
        }
    }
    (bytes.len(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nesting_scan_counts_code_not_strings_comments_or_regexes() {
        let deep = |n: usize| format!("x = {}1{};", "[".repeat(n), "]".repeat(n));
        assert_eq!(too_deep(&deep(10), 10), None);
        assert_eq!(too_deep(&deep(11), 10), Some(14));
        let quiet = r#"const a = "((((((", b = '[[[[[[', c = /\(+[(]/g; // ((((((
/* [[[[[[ */ const t = `((((( ${ "((((" } {{{{{`; if (a) /[/]((((/.test(b); x = a / (1) / 2;"#;
        assert_eq!(too_deep(quiet, 3), None, "{quiet}");
        let templates = format!("x = {}1{};", "`${".repeat(11), "}`".repeat(11));
        assert!(too_deep(&templates, 10).is_some());
        assert_eq!(too_deep(&templates, 11), None);
    }

    #[test]
    fn private_names_and_a_lone_hash_do_not_stall_the_scan() {
        // A `#` once stopped the scan from moving: loading hung forever.
        let private =
            "class A { #x = 1; #m() { return this.#x; } static #s() {} }\nexport default A;";
        assert_eq!(too_deep(private, 10), None);
        crate::engines::js::transpile::transpile(Path::new("private.js"), private).unwrap();
        assert_eq!(too_deep("#", 10), None);
        assert_eq!(too_deep("#!shebang\n#", 10), None);
    }
}
