#!/usr/bin/env bash
# Starts `gw serve` for the load harness: a fresh home, one OpenAI-compatible provider at the
# harness's fake upstream, a plan without practical rate or credit limits, and a fixed key.
set -euo pipefail
port=$1
upstream=$2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
home=$(mktemp -d "${TMPDIR:-/tmp}/gw-bench-home.XXXXXX")
node "$root/bin/run.js" init --home "$home" >/dev/null
# GW_BENCH_TELEMETRY=http/protobuf (or http/json): traces on, exported to a sink on loopback that
# discards them (scripts/otlp-sink.mjs, on core 0 beside the load generator where taskset can,
# as a collector runs elsewhere); it exits with the gateway this shell becomes.
if [ -n "${GW_BENCH_TELEMETRY:-}" ]; then
  sink_pin=()
  if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then sink_pin=(taskset -c 0); fi
  "${sink_pin[@]}" node "$root/scripts/otlp-sink.mjs" --parent $$ >"$home/otlp-sink.out" &
  for _ in $(seq 100); do grep -q "listening on" "$home/otlp-sink.out" && break; sleep 0.1; done
  GW_BENCH_OTLP=$(sed -n 's/^listening on //p' "$home/otlp-sink.out")
  [ -n "$GW_BENCH_OTLP" ] || { echo "start-gw: the OTLP sink did not start" >&2; exit 1; }
  export GW_BENCH_OTLP
fi
node --input-type=module -e '
  import { readFileSync, writeFileSync } from "node:fs";
  const [file, upstream] = process.argv.slice(1);
  const config = JSON.parse(readFileSync(file, "utf8"));
  config.providers = { bench: { type: "openai", baseUrl: upstream, apiKey: "sk-bench-not-a-real-key" } };
  config.routes = [{ prefix: "bench/", provider: "bench", priority: 1 }];
  config.models = [{ id: "bench/fake-model", name: "Bench fake model", context_length: 8192 }];
  config.plans = { max: { requestsPerMinute: 100000000, monthlyCredits: 1000000000000 } };
  // GW_BENCH_REDIS (a redis URL or socket path): the shared state on Redis, under a prefix of its
  // own, or GW_BENCH_REDIS_PREFIX: several instances sharing one state.
  if (process.env.GW_BENCH_OTLP) {
    const protocol = process.env.GW_BENCH_TELEMETRY === "http/json" ? "http/json" : "http/protobuf";
    config.telemetry = { otlp: { endpoint: process.env.GW_BENCH_OTLP, protocol } };
  }
  if (process.env.GW_BENCH_REDIS) {
    config.state = { driver: "redis", url: process.env.GW_BENCH_REDIS, prefix: process.env.GW_BENCH_REDIS_PREFIX || `bench${process.pid}:` };
    // What a Redis state requires: one link secret and one place for the files (one machine here).
    config.storage = { signingSecret: "bench-link-signing-secret-0123456789abcdef", options: { base: `${file}.blobs` } };
  }
  writeFileSync(file, JSON.stringify(config, null, 2));
' "$home/config.json" "$upstream"
node --input-type=module -e '
  const [root, home] = process.argv.slice(1);
  const { readFileSync } = await import("node:fs");
  const { importKey } = await import(`${root}/dist/src/store/provisioning.js`);
  const { state } = JSON.parse(readFileSync(`${home}/config.json`, "utf8"));
  let store;
  let done = () => undefined;
  if (state) {
    const { Redis } = await import("ioredis");
    const { RedisMetadataStore } = await import(`${root}/dist/src/store/redis-metadata-store.js`);
    const redis = new Redis(state.url);
    store = await RedisMetadataStore.open(redis, redis, { prefix: state.prefix, create: true });
    done = () => redis.quit();
  } else {
    const { MetadataStore } = await import(`${root}/dist/src/store/metadata-store.js`);
    store = await MetadataStore.open(`${home}/data/metadata.json`);
  }
  // A second instance on the same state finds the key there already.
  await importKey(store, "bench", "max", "gw_benchbenchbenchbenchbenchbenchbenchbenchbenchbe").catch((error) => {
    if (!/already registered/.test(error.message)) throw error;
  });
  store.close();
  await done();
' "$root" "$home"
exec node ${GW_NODE_FLAGS:-} "$root/bin/run.js" serve --home "$home" --host 127.0.0.1 --port "$port"
