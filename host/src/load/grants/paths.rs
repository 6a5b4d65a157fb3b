//! Paths on their text: `.` and `..` taken out ([`lexical`]), and the
//! existing part of a path resolved through symlinks.

use std::path::{Component, Path, PathBuf};

/// `path` without `.` components and with each `..` taken back where it
/// can be, on its text (it need not exist): `..` at the root stays at the
/// root, and the leading `..` of a relative path are kept (`../plugins`
/// stays above the working directory).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// `path` (without `..`) with its longest existing ancestor resolved
/// through symlinks.
pub(crate) fn resolve_existing(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_drops_dots_and_stops_at_the_root() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(lexical(Path::new("/../../etc")), PathBuf::from("/etc"));
        assert_eq!(
            lexical(Path::new("../../plugins/./a/../reader/data")),
            PathBuf::from("../../plugins/reader/data")
        );
        assert_eq!(lexical(Path::new("a/../../b")), PathBuf::from("../b"));
    }
}
