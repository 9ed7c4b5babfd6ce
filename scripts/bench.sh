#!/usr/bin/env bash
# npm run bench: the shared load harness (../shared/bench) with gw beside direct, Portkey and a
# bare Node pass-through proxy. Extra arguments go to compare.sh (e.g. --duration 3 --rounds 1).
# Then /v1/responses against /v1/chat/completions on one gw, non-stream and stream
# (scripts/bench-responses.mjs; GW_BENCH_NO_RESPONSES=1 skips it), and the Redis layout: the state
# on Redis against the embedded default, then two instances on one Redis (scripts/bench-redis.mjs;
# needs redis-server; GW_BENCH_NO_REDIS=1 skips it), and a response-cache hit against the
# upstream's latency (scripts/bench-cache.mjs). GW_BENCH_TELEMETRY=http/protobuf (or http/json)
# runs every gw of it with traces on, exported to a sink that discards them (bench/start-gw.sh);
# `node scripts/bench-ab.mjs HEAD --telemetry http/protobuf` measures on against off side by side.
# Then `gw serve` start-up and memory (scripts/bench-start.mjs), and the CLI's start-up
# (scripts/bench-cli.mjs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench="${GW_BENCH_HARNESS:-$root/../shared/bench}"
[ -f "$bench/compare.sh" ] || { echo "bench: the harness is not at $bench (set GW_BENCH_HARNESS)" >&2; exit 1; }
bash "$bench/setup-peers.sh"
work=$(mktemp -d)
sed "s#{GW_ROOT}#$root#g" "$root/bench/gw.json" > "$work/gw.json"
gateways=(--gateway "$work/gw.json" --gateway "$bench/gateways/node-passthrough.json")
[ "${GW_BENCH_NO_PORTKEY:-0}" = 1 ] || gateways+=(--gateway "$bench/gateways/portkey.json")
bash "$bench/compare.sh" "${gateways[@]}" "$@"
if [ "${GW_BENCH_NO_RESPONSES:-0}" != 1 ]; then
  for mode in nonstream stream; do GW_BENCH_HARNESS="$bench" node "$root/scripts/bench-responses.mjs" --mode "$mode"; done
fi
# A response-cache hit against the upstream's own latency (GW_BENCH_NO_CACHE=1 skips it).
[ "${GW_BENCH_NO_CACHE:-0}" = 1 ] || GW_BENCH_HARNESS="$bench" node "$root/scripts/bench-cache.mjs"
if [ "${GW_BENCH_NO_REDIS:-0}" != 1 ]; then
  for mode in nonstream stream; do GW_BENCH_HARNESS="$bench" node "$root/scripts/bench-redis.mjs" --mode "$mode"; done
fi
# `gw serve` start-up and its memory once ready, beside a bare node:http server and node with the
# libraries a server must load (GW_BENCH_NO_START=1 skips it).
[ "${GW_BENCH_NO_START:-0}" = 1 ] || node "$root/scripts/bench-start.mjs"
# CLI start-up: `node -e 0`, `gw --version`, `gw keys list`, `gw models` and `gw serve` to its first
# line, whole processes, median of 5 (GW_BENCH_NO_CLI=1 skips it).
[ "${GW_BENCH_NO_CLI:-0}" = 1 ] || node "$root/scripts/bench-cli.mjs"
# Data at scale: gw serve's start and gw usage over a month of 1,000,000 usage rows, and pages of
# GET /v1/storage/files over 100,000 stored files (GW_BENCH_NO_DATA=1 skips it).
[ "${GW_BENCH_NO_DATA:-0}" = 1 ] || GW_BENCH_HARNESS="$bench" node "$root/scripts/bench-data.mjs"
# Large transfers (a 50 MB upload and download through gw against a bare node:http copy to disk)
# and chat p99 during a local upscale and a local video render (GW_BENCH_NO_TRANSFER=1 skips it).
[ "${GW_BENCH_NO_TRANSFER:-0}" = 1 ] || GW_BENCH_HARNESS="$bench" node "$root/scripts/bench-transfer.mjs"
