#!/usr/bin/env bash
# npm run bench: the shared load harness (../shared/bench) with gw beside direct, Portkey and a
# bare Node pass-through proxy. Extra arguments go to compare.sh (e.g. --duration 3 --rounds 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench="${GW_BENCH_HARNESS:-$root/../shared/bench}"
[ -f "$bench/compare.sh" ] || { echo "bench: the harness is not at $bench (set GW_BENCH_HARNESS)" >&2; exit 1; }
bash "$bench/setup-peers.sh"
work=$(mktemp -d)
sed "s#{GW_ROOT}#$root#g" "$root/bench/gw.json" > "$work/gw.json"
gateways=(--gateway "$work/gw.json" --gateway "$bench/gateways/node-passthrough.json")
[ "${GW_BENCH_NO_PORTKEY:-0}" = 1 ] || gateways+=(--gateway "$bench/gateways/portkey.json")
exec bash "$bench/compare.sh" "${gateways[@]}" "$@"
