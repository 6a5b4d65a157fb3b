//! The WIT of the plugin interface, one folder per released version
//! (`wit/since_v<version>/plugin.wit`):
//! - a released version is frozen: its file never changes (a component
//!   built for it must keep loading), so each one's SHA-256 is pinned here,
//!   and a new version is a new folder and a new line;
//! - each version only adds to the one before: its `hook` enum starts with
//!   the previous version's hooks, in order;
//! - the newest version is the package [`WIT_PACKAGE`] names, and its
//!   `hook` enum lists exactly the contract's hooks, in order.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use yohost_contract::{Hook, WIT_PACKAGE};

/// Every released version and the SHA-256 of its `plugin.wit`, oldest
/// first.
const RELEASED: &[(&str, &str)] = &[(
    "0.1.0",
    "eddf12d3e9ce82baec6495490eabbae811c6ada04f617867c13fdcedf28c7c1d",
)];

/// The folder of every version.
fn wit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("wit")
}

/// The text of `version`'s `plugin.wit`.
fn read(version: &str) -> String {
    let path = wit().join(format!("since_v{version}/plugin.wit"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The cases of the `hook` enum in a WIT text.
fn hooks(text: &str) -> Vec<String> {
    let after = &text[text.find("enum hook").expect("an `enum hook`")..];
    let inside = &after[after.find('{').unwrap() + 1..after.find('}').unwrap()];
    inside
        .split(',')
        .map(|case| case.trim().to_string())
        .filter(|case| !case.is_empty())
        .collect()
}

#[test]
fn every_version_folder_is_a_released_version_and_none_has_changed() {
    let mut folders: Vec<String> = std::fs::read_dir(wit())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_prefix("since_v").map(str::to_string))
        .collect();
    folders.sort();
    let mut released: Vec<String> = RELEASED.iter().map(|(v, _)| v.to_string()).collect();
    released.sort();
    assert_eq!(
        folders, released,
        "a new version's folder needs its line in RELEASED"
    );
    for (version, sha256) in RELEASED {
        let digest = Sha256::digest(read(version).as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            &hex, sha256,
            "wit/since_v{version}/plugin.wit changed: a released version is frozen; add the change as a new version"
        );
    }
}

#[test]
fn each_version_names_its_package_and_adds_hooks_after_the_previous_ones() {
    let mut before: Vec<String> = Vec::new();
    for (version, _) in RELEASED {
        let text = read(version);
        assert!(
            text.contains(&format!("package yohost:plugin@{version};")),
            "since_v{version} declares another package"
        );
        let now = hooks(&text);
        assert_eq!(
            now[..before.len().min(now.len())],
            before[..],
            "since_v{version} must keep the hooks of the version before it, in order"
        );
        before = now;
    }
}

#[test]
fn the_newest_version_is_the_contract_s_package_and_lists_its_hooks() {
    let (newest, _) = RELEASED.last().unwrap();
    assert_eq!(WIT_PACKAGE, format!("yohost:plugin@{newest}"));
    let contract: Vec<String> = Hook::ALL
        .iter()
        .filter(|hook| !Hook::APP.contains(hook))
        .map(|hook| hook.as_str().replace('_', "-"))
        .collect();
    assert_eq!(hooks(&read(newest)), contract);
}
