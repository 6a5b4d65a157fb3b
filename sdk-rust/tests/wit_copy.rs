//! The SDK builds components for the newest version of the plugin
//! interface: its `wit/plugin.wit`, which its guest bindings read and its
//! package ships, is a copy of the newest frozen version the contract holds
//! (`contract/wit/since_v<version>/plugin.wit`), byte for byte.

use std::path::Path;

/// A version's numbers, for ordering (`0.10.0` after `0.9.0`).
fn numbers(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

#[test]
fn the_sdk_s_wit_is_the_newest_version_the_contract_holds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let versions = root.join("../contract/wit");
    let newest = std::fs::read_dir(&versions)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_prefix("since_v").map(str::to_string))
        .max_by_key(|version| numbers(version))
        .expect("a released version");
    let frozen = std::fs::read(versions.join(format!("since_v{newest}/plugin.wit"))).unwrap();
    let copy = std::fs::read(root.join("wit/plugin.wit")).unwrap();
    assert!(
        copy == frozen,
        "sdk-rust/wit/plugin.wit is not contract/wit/since_v{newest}/plugin.wit: copy it over"
    );
}
