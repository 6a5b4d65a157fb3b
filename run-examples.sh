#!/usr/bin/env bash
# Build the example plugins and run the agent on examples/ with the built-in
# scripted model. Extra arguments go to `yohost run` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")"
# The examples' plugin.toml files point into ./target, so build there.
unset CARGO_TARGET_DIR
# The Wasm component example (examples/wasm-redactor), in a target dir of
# its own, built beside the command: the command's last steps (the host
# library, then the command) keep only one core busy.
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
cargo build --quiet --release --target wasm32-wasip2 --example wasm_redactor \
  --manifest-path tests/plugins/wasm/Cargo.toml --target-dir target/wasm-guests &
wasm_guest=$!
# Only what the demo needs: the yohost command and the Rust dylib examples
# (no dev-dependencies: no benchmarks, no test tools).
cargo build --quiet -p yohost-cli --bin yohost --example example_policy --example example_tool
wait "$wasm_guest"
# The demo runs in a temporary folder of its own (see `yohost run --help`).
exec target/debug/yohost run examples \
  --prompt "Count the words of our motto, clean the build folder, push, and show me the deploy key." "$@"
