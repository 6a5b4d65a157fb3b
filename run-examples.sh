#!/usr/bin/env bash
# Build the example plugins and run the agent on examples/ with the built-in
# scripted model. Extra arguments go to `yohost run` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")"
# The examples' plugin.toml files point into ./target, so build there.
unset CARGO_TARGET_DIR
# Only what the demo needs: the yohost command and the Rust dylib examples
# (no dev-dependencies: no benchmarks, no test tools).
cargo build --quiet -p yohost-cli --bin yohost --example example_policy --example example_tool
# The Wasm component example (examples/wasm-redactor).
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
cargo build --quiet --release --target wasm32-wasip2 --example wasm_redactor \
  --manifest-path tests/plugins/wasm/Cargo.toml --target-dir target/wasm-guests
# The demo runs in a temporary folder of its own (see `yohost run --help`).
exec target/debug/yohost run examples \
  --prompt "Count the words of our motto, clean the build folder, push, and show me the deploy key." "$@"
