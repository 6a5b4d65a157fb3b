//! The state folders a pi package keeps under pi's per-user folder
//! (`~/.pi/`), found in its sources without running them: a path built
//! from the home folder and string literals only
//! (`join(homedir(), ".pi", "agent", "collaborating-agents")`), naming a
//! folder (its last part has no extension) below `~/.pi/` other than pi's
//! own `~/.pi/agent` (which holds pi's keys). A file there, or a path with a
//! part only known when the code runs, is not inferred: the load's denial
//! names it and the grant to add.

/// The state folders `source` names, relative to the home folder
/// (`.pi/agent/collaborating-agents`), each once, in order.
pub fn folders(source: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for (at, _) in source.match_indices("homedir()") {
        let before = source[..at].trim_end_matches("os.").trim_end();
        if !(before.ends_with("join(") || before.ends_with("resolve(")) {
            continue;
        }
        let Some(parts) = literal_parts(&source[at + "homedir()".len()..]) else {
            continue;
        };
        let path = parts.join("/");
        let components: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        let is_file = components
            .last()
            .is_some_and(|last| last.trim_start_matches('.').contains('.'));
        let safe = components
            .iter()
            .all(|c| *c != ".." && *c != "." && !c.contains('\\'));
        if components.first() == Some(&".pi")
            && components.len() >= 2
            && components != [".pi", "agent"]
            && !is_file
            && safe
        {
            let folder = components.join("/");
            if !found.contains(&folder) {
                found.push(folder);
            }
        }
    }
    found
}

/// The string literals of the rest of a call, `, "a", 'b')`: `None` when
/// anything else is there.
fn literal_parts(mut rest: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.starts_with(')') {
            return (!parts.is_empty()).then_some(parts);
        }
        rest = rest.strip_prefix(',')?.trim_start();
        let quote = rest.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let end = rest[1..].find(quote)? + 1;
        let part = &rest[1..end];
        if part.contains(['\n', '$', '`']) {
            return None;
        }
        parts.push(part.to_string());
        rest = &rest[end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_under_pi_s_per_user_folder_built_of_literals_is_a_state_folder() {
        let source = r#"
const base = process.env.DIR || join(homedir(), ".pi", "agent", "collaborating-agents");
const memory = path.join(os.homedir(), '.pi/agent-memory');
const again = join(homedir(), ".pi", "agent", "collaborating-agents");
const file = join(homedir(), ".pi", "agent", "system-theme.json");
const pis = join(homedir(), ".pi", "agent");
const dynamic = join(homedir(), ".pi", "agent", name);
const claude = join(homedir(), ".claude");
const up = join(homedir(), ".pi", "..", "x");
const relative = relative(homedir(), ".pi/x");
"#;
        assert_eq!(
            folders(source),
            [".pi/agent/collaborating-agents", ".pi/agent-memory"]
        );
    }
}
