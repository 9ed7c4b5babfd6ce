#!/usr/bin/env bash
# Starts `gw serve` for the load harness: a fresh home, one OpenAI-compatible provider at the
# harness's fake upstream, a plan without practical rate or credit limits, and a fixed key.
set -euo pipefail
port=$1
upstream=$2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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
  writeFileSync(file, JSON.stringify(config, null, 2));
' "$home/config.json" "$upstream"
node --input-type=module -e '
  const [root, metadata] = process.argv.slice(1);
  const { MetadataStore } = await import(`${root}/dist/src/store/metadata-store.js`);
  const { importKey } = await import(`${root}/dist/src/store/provisioning.js`);
  const store = await MetadataStore.open(metadata);
  await importKey(store, "bench", "max", "gw_benchbenchbenchbenchbenchbenchbenchbenchbenchbe");
  store.close();
' "$root" "$home/data/metadata.json"
exec node ${GW_NODE_FLAGS:-} "$root/bin/run.js" serve --home "$home" --host 127.0.0.1 --port "$port"
