//! Error positions in the file the author wrote. A TypeScript module runs
//! as the JavaScript oxc made of it, so QuickJS's stack names lines of that
//! code; oxc's source map (kept per module as a [`LineMap`]) takes them
//! back to the TypeScript source, in load errors and in hooks' throws.

use std::collections::BTreeMap;

/// For each line of the generated code (0-based), the mapped points on it:
/// `(generated column, source line, source column)`, all 0-based, by
/// generated column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMap {
    lines: Vec<Vec<(u32, u32, u32)>>,
}

impl LineMap {
    /// The map of `tokens`: `(generated line, generated column, source
    /// line, source column)`, 0-based.
    pub fn new(tokens: impl Iterator<Item = (u32, u32, u32, u32)>) -> Self {
        let mut lines: Vec<Vec<(u32, u32, u32)>> = Vec::new();
        for (line, col, src_line, src_col) in tokens {
            let line = line as usize;
            if lines.len() <= line {
                lines.resize_with(line + 1, Vec::new);
            }
            lines[line].push((col, src_line, src_col));
        }
        for points in &mut lines {
            points.sort_unstable();
        }
        Self { lines }
    }

    /// The source position (1-based line and column, as stacks show them)
    /// of generated position `line:column` (1-based): the last mapped point
    /// at or before it on its line, else the line's first one.
    fn source(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let points = self.lines.get(line.checked_sub(1)? as usize)?;
        let column = column.saturating_sub(1);
        let point = points
            .iter()
            .rev()
            .find(|p| p.0 <= column)
            .or_else(|| points.first())?;
        Some((point.1 + 1, point.2 + 1))
    }
}

/// Rewrite every `name:line:column` (or `name:line`) of a module with a map
/// in `text` to the position in its source. A name only counts at the
/// start of the text or after a space or `(`, so `a.ts` never matches
/// inside `data.ts`; a position the map does not know is left as it is.
pub fn in_source(maps: &BTreeMap<String, LineMap>, text: &str) -> String {
    let mut text = text.to_string();
    for (name, map) in maps {
        let pattern = format!("{name}:");
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&pattern) {
            let before = rest[..at].chars().last().or_else(|| out.chars().last());
            let starts = matches!(before, None | Some(' ' | '('));
            let after = &rest[at + pattern.len()..];
            let line_len = after.bytes().take_while(u8::is_ascii_digit).count();
            let col_len = after[line_len..]
                .strip_prefix(':')
                .map_or(0, |c| c.bytes().take_while(u8::is_ascii_digit).count());
            let line = after[..line_len].parse::<u32>().ok();
            let column = if col_len > 0 {
                after[line_len + 1..line_len + 1 + col_len]
                    .parse::<u32>()
                    .ok()
            } else {
                None
            };
            let mapped = line
                .filter(|_| starts)
                .and_then(|l| map.source(l, column.unwrap_or(1)));
            out.push_str(&rest[..at + pattern.len()]);
            match mapped {
                Some((l, c)) => {
                    out.push_str(&l.to_string());
                    if column.is_some() {
                        out.push_str(&format!(":{c}"));
                    }
                    let used = line_len + if col_len > 0 { 1 + col_len } else { 0 };
                    rest = &after[used..];
                }
                None => rest = after,
            }
        }
        out.push_str(rest);
        text = out;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maps() -> BTreeMap<String, LineMap> {
        // Generated line 1 (col 0) is source line 3; generated line 2 has
        // points at col 0 (source 5:1) and col 10 (source 6:3).
        let map = LineMap::new([(0, 0, 2, 0), (1, 0, 4, 0), (1, 10, 5, 2)].into_iter());
        BTreeMap::from([("a.ts".to_string(), map)])
    }

    #[test]
    fn generated_positions_become_source_positions() {
        let maps = maps();
        assert_eq!(
            in_source(&maps, "Error: boom (at f (a.ts:2:12))"),
            "Error: boom (at f (a.ts:6:3))"
        );
        assert_eq!(
            in_source(&maps, "a.ts:1 and a.ts:2:1"),
            "a.ts:3 and a.ts:5:1"
        );
    }

    #[test]
    fn other_names_and_unknown_positions_stay() {
        let maps = maps();
        for text in ["data.ts:2:12", "a.ts:99:1", "a.ts:", "a.ts:x", "b.ts:2:1"] {
            assert_eq!(in_source(&maps, text), text);
        }
    }
}
