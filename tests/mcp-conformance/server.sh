#!/usr/bin/env bash
# The MCP conformance suite's server scenarios against `yohost serve`: the
# folder served/ (TypeScript tools named as the scenarios call them) served
# over streamable HTTP on a free loopback port, without a token (the suite's
# client sends none; its DNS-rebinding scenario is for exactly such a
# server). The suite runs with the baseline of expected failures beside this
# file. CONFORMANCE_CLI names the suite's CLI; YOHOST names the command
# (target/debug/yohost unless set).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
yohost="$(realpath "${YOHOST:-$here/../../target/debug/yohost}")"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log="$(mktemp)"
"$yohost" serve "$here/served" --http --listen "127.0.0.1:$port" --no-auth 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -f "$log"' EXIT
# Ready once the port takes connections (the plugins load first).
for _ in $(seq 1 600); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
node --import "$here/node20.mjs" "$CONFORMANCE_CLI" server --url "http://localhost:$port/mcp" \
  --suite all --expected-failures "$here/baseline.yml" \
  || { echo "--- yohost serve's log:" >&2; tail -40 "$log" >&2; exit 1; }
