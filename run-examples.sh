#!/usr/bin/env bash
# Build the example plugins and run the agent on examples/ with the built-in
# scripted model. Extra arguments go to `yohost run` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")"
# The examples' plugin.toml files point into ./target, so build there.
unset CARGO_TARGET_DIR
cargo build --quiet -p yohost --examples --bin yohost
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
cd "$workdir"
"$OLDPWD/target/debug/yohost" run "$OLDPWD/examples" \
  --prompt "Count the words of our motto, then clean the build folder and say hello." "$@"
