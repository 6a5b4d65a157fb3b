//! "Did you mean": the known name closest to a misspelt one.

/// The name in `known` closest to `name` by edit distance, if one is close
/// enough to be a misspelling of it: at most a third of its length away
/// (and at least one edit).
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let most = (name.chars().count() / 3).max(1);
    known
        .into_iter()
        .map(|k| (edits(name, k), k))
        .filter(|(d, _)| *d <= most)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The Levenshtein distance between `a` and `b`, in characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelling_finds_its_name_and_a_stranger_none() {
        let known = ["tool_call", "tool_result", "input"];
        assert_eq!(closest("tool_cal", known), Some("tool_call"));
        assert_eq!(closest("tool_reslt", known), Some("tool_result"));
        assert_eq!(closest("imput", known), Some("input"));
        assert_eq!(closest("my_own_event", known), None);
    }
}
