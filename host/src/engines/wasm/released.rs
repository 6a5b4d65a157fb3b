//! Every version of the WIT package this host speaks: the one list a new
//! version's module (`since_v<version>`) is added to.

use super::since_v0_1_0::V0_1_0;
use super::version::WitVersion;

/// Every version this host speaks, oldest first; the last is the one
/// [`WIT_PACKAGE`](yohost_contract::WIT_PACKAGE) names and the SDK builds.
pub(super) static RELEASED: [&dyn WitVersion; 1] = [&V0_1_0];

#[cfg(test)]
mod tests {
    use super::super::version::{numbers, PACKAGE};
    use super::*;

    #[test]
    fn the_newest_released_version_is_the_one_the_contract_names() {
        let newest = RELEASED.last().unwrap().version();
        assert_eq!(format!("{PACKAGE}@{newest}"), yohost_contract::WIT_PACKAGE);
    }

    #[test]
    fn every_frozen_version_of_the_contract_is_bound() {
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../contract/wit");
        let mut frozen: Vec<String> = std::fs::read_dir(wit)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|name| name.strip_prefix("since_v").map(str::to_string))
            .collect();
        frozen.sort_by_key(|version| numbers(version));
        let bound: Vec<&str> = RELEASED.iter().map(|v| v.version()).collect();
        assert_eq!(
            frozen, bound,
            "each contract/wit/since_v* needs its since_v* module in RELEASED"
        );
    }

    #[test]
    fn released_versions_are_listed_oldest_first() {
        for pair in RELEASED.windows(2) {
            assert!(numbers(pair[0].version()) < numbers(pair[1].version()));
        }
    }
}
