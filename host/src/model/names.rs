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

/// The edit distance between `a` and `b`, in characters, where swapping
/// two neighbours is one edit (`entyr` is one from `entry`): the optimal
/// string alignment distance.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: the distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
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
        assert_eq!(closest("tool_clal", known), Some("tool_call"));
        assert_eq!(closest("my_own_event", known), None);
    }
}
