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
mkdir -p "$dir/plugins/conformance"
printf '{"mcpServers": {"conformance": {"url": "%s"}}}\n' "$url" >"$dir/plugins/conformance/mcp.json"
host="$(printf '%s' "$url" | sed -E 's#^https?://([^/:]+).*#\1#')"
printf '[capabilities]\nnetwork = ["%s"]\n' "$host" >"$dir/plugins/conformance/plugin.toml"
# The tool each scenario's server offers, and its arguments.
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  tools_call) call='{"name": "add_numbers", "arguments": {"a": 2, "b": 3}}' ;;
  elicitation-sep1034-client-defaults) call='{"name": "test_client_elicitation_defaults", "arguments": {}}' ;;
  sse-retry) call='{"name": "test_reconnection", "arguments": {}}' ;;
  *) call='' ;;
esac
if [ -n "$call" ]; then
  printf '[{"tool_calls": [%s]}, {"text": "done"}]\n' "$call" >"$dir/script.json"
else
  printf '[{"text": "done"}]\n' >"$dir/script.json"
fi
cd "$dir"
exec "$yohost" run plugins --script script.json --prompt "conformance: ${MCP_CONFORMANCE_SCENARIO:-}"
