#!/usr/bin/env bash
# Build the example plugins and run the agent on examples/ with the built-in
# scripted model. Extra arguments go to `yohost run` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")"
# The examples' plugin.toml files point into ./target, so build there.
unset CARGO_TARGET_DIR
# The Rust dylib examples, and the yohost command.
cargo build --quiet -p yohost --examples
cargo build --quiet -p yohost-cli
# The Wasm component example (examples/wasm-redactor).
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
cargo build --quiet --release --target wasm32-wasip2 --examples \
  --manifest-path tests/plugins/wasm/Cargo.toml --target-dir target/wasm-guests
root=$PWD
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
cd "$workdir"
"$root/target/debug/yohost" run "$root/examples" \
  --prompt "Count the words of our motto, clean the build folder, and show me the deploy key." "$@"
