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
