#!/usr/bin/env bash
# The MCP conformance suite's client under test: `yohost run` on a plugin
# directory whose one MCP server is the suite's, at the URL the suite
# appends, driven by the built-in scripted model to call the scenario's
# tool. The suite names the scenario in MCP_CONFORMANCE_SCENARIO; YOHOST
# names the command (target/debug/yohost unless set).
set -euo pipefail
url="${!#}"
here="$(cd "$(dirname "$0")" && pwd)"
yohost="$(realpath "${YOHOST:-$here/../../target/debug/yohost}")"
# A server that asks for OAuth is authorized through $BROWSER, which
# follows the suite's authorization server back to yohost.
export BROWSER="node $here/browser.mjs"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# The tokens each scenario gives are kept in a cache of its own.
export YOHOST_CACHE_DIR="$dir/cache"
mkdir -p "$dir/plugins/conformance"
# The server's entry; a scenario whose client is registered beforehand
# (MCP_CONFORMANCE_CONTEXT holds its id, and its secret or signing key)
# gets it under `oauth`, as a person would write it.
node - "$url" "$dir/plugins/conformance" <<'JS'
const [url, folder] = process.argv.slice(2);
const fs = require("node:fs");
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const entry = { url };
const scenario = process.env.MCP_CONFORMANCE_SCENARIO || "";
// The client metadata document the suite's scenario serves for the client.
if (scenario === "auth/basic-cimd") {
  entry.oauth = { clientMetadataUrl: "https://conformance-test.local/client-metadata.json" };
}
if (context.client_id) {
  entry.oauth = { clientId: context.client_id };
  if (scenario.startsWith("auth/client-credentials")) entry.oauth.grant = "client_credentials";
  if (context.client_secret) entry.oauth.clientSecret = context.client_secret;
  if (context.private_key_pem) {
    fs.writeFileSync(`${folder}/client-key.pem`, context.private_key_pem);
    entry.oauth.privateKeyFile = "client-key.pem";
    entry.oauth.signingAlgorithm = context.signing_algorithm;
  }
}
fs.writeFileSync(`${folder}/mcp.json`, JSON.stringify({ mcpServers: { conformance: entry } }));
JS
host="$(printf '%s' "$url" | sed -E 's#^https?://([^/:]+).*#\1#')"
printf '[capabilities]\nnetwork = ["%s"]\n' "$host" >"$dir/plugins/conformance/plugin.toml"
# The tool each scenario's server offers, and its arguments.
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  tools_call) call='{"name": "add_numbers", "arguments": {"a": 2, "b": 3}}' ;;
  elicitation-sep1034-client-defaults) call='{"name": "test_client_elicitation_defaults", "arguments": {}}' ;;
  sse-retry) call='{"name": "test_reconnection", "arguments": {}}' ;;
  auth/scope-step-up | auth/scope-retry-limit) call='{"name": "test-tool", "arguments": {}}' ;;
  *) call='' ;;
esac
if [ -n "$call" ]; then
  printf '[{"tool_calls": [%s]}, {"text": "done"}]\n' "$call" >"$dir/script.json"
else
  printf '[{"text": "done"}]\n' >"$dir/script.json"
fi
cd "$dir"
exec "$yohost" run plugins --script script.json --prompt "conformance: ${MCP_CONFORMANCE_SCENARIO:-}"
