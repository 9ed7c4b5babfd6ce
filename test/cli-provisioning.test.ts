// Provisioning commands run as subprocesses against real files in a temp GW_HOME.

import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { initHome } from "../src/config/init-home.js";
import { homePaths } from "../src/config/paths.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import { createAgent, createKey } from "../src/store/provisioning.js";
import type { MetadataData } from "../src/store/records.js";
import { gw, json, removeTempHomes, tempHome } from "./_gw-cli.js";

const KEY = /^gw_[0-9A-Za-z]{43}$/;

test.after.always(() => removeTempHomes());

interface KeyView {
  id: string;
  prefix: string;
  agent: string;
  createdAt: string;
  revokedAt: string | null;
}
interface AgentView {
  id: string;
  name: string;
  plan: string;
  activeKeys: number;
}
interface PlanView {
  name: string;
  aliases: string[];
  monthlyCredits: number;
  requestsPerMinute: number;
  freeTierOnly: boolean;
  imageMaxResolution: string;
}
interface ProviderView {
  name: string;
  type: string;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}
interface RouteView {
  prefix: string;
  provider?: string;
  model?: string;
  priority: number;
  freeTier: boolean;
  upstreams?: Array<{ provider: string; model: string; weight: number }>;
}

async function initialisedHome(): Promise<string> {
  const home = tempHome();
  await initHome(home);
  return home;
}

function storedAgents(home: string): MetadataData["agents"] {
  return (JSON.parse(readFileSync(homePaths(home).metadata, "utf8")) as MetadataData).agents;
}

function rawConfig(home: string): Record<string, unknown> & { plans: Record<string, unknown>; providers: Record<string, unknown>; routes: unknown[] } {
  return JSON.parse(readFileSync(homePaths(home).config, "utf8"));
}

test("keys create prints the key once; list never shows it; revoke by prefix", async (t) => {
  const home = tempHome(); // not initialised: `keys create` is the natural first step
  const created = await gw(["keys", "create", "--agent", "alice", "--json"], { home });
  t.is(created.code, 0, created.stderr);
  const body = json<Record<string, unknown>>(created);
  t.deepEqual(Object.keys(body).sort(), ["agent", "key", "plan"]);
  t.is(body.agent, "alice");
  t.is(body.plan, "free");
  const key = String(body.key);
  t.regex(key, KEY);

  const plain = await gw(["keys", "create", "--agent", "alice", "--plan", "assistant"], { home });
  t.is(plain.code, 0, plain.stderr);
  const secondKey = plain.stdout.trim();
  t.regex(secondKey, KEY, "without --json stdout is the key alone, for $(gw keys create ...)");
  t.notRegex(plain.stderr, new RegExp(secondKey));

  const metadata = readFileSync(homePaths(home).metadata, "utf8");
  t.false(metadata.includes(key), "the key itself is never stored");

  const [listed, table] = await Promise.all([gw(["keys", "list", "--json"], { home }), gw(["keys", "list"], { home })]);
  t.is(listed.code, 0, listed.stderr);
  const keys = json<KeyView[]>(listed);
  t.is(keys.length, 2);
  t.deepEqual(
    keys.map((entry) => entry.agent),
    ["alice", "alice"],
  );
  t.true(key.startsWith(keys[0]!.prefix));
  t.true(keys[0]!.prefix.length < key.length);
  for (const output of [listed.stdout, table.stdout]) {
    t.false(output.includes(key));
    t.false(output.includes(secondKey));
    t.false(/[0-9a-f]{64}/.test(output), "hashes are never shown");
  }
  t.regex(table.stdout, /NAME\s+PREFIX\s+AGENT\s+PLAN\s+RPM\s+TPM\s+MODELS\s+BUDGET\s+SPENT\s+EXPIRES\s+LAST USED/);

  t.is(storedAgents(home).find((agent) => agent.name === "alice")?.plan, "pro", "--plan on an existing agent moves it; aliases resolve");

  const revoked = await gw(["keys", "revoke", keys[0]!.prefix, "--json"], { home });
  t.is(revoked.code, 0, revoked.stderr);
  t.is(json<KeyView>(revoked).prefix, keys[0]!.prefix);
  t.truthy(json<KeyView>(revoked).revokedAt);
  const after = json<KeyView[]>(await gw(["keys", "list", "--json"], { home }));
  t.truthy(after.find((entry) => entry.id === keys[0]!.id)?.revokedAt);
  t.is(after.find((entry) => entry.id === keys[1]!.id)?.revokedAt, null);

  const again = await gw(["keys", "revoke", keys[0]!.prefix], { home });
  t.is(again.code, 1);
  t.regex(again.stderr, /no active key matches/);
  t.is(again.stdout, "");
});

test("20 concurrent `keys create` on a fresh home all land in the metadata", async (t) => {
  const home = tempHome();
  const results = await Promise.all(Array.from({ length: 20 }, (_, index) => gw(["keys", "create", "--agent", `bot${index % 3}`, "--json"], { home })));
  for (const result of results) t.is(result.code, 0, result.stderr);
  const created = results.map((result) => json<{ key: string; agent: string }>(result));
  t.is(new Set(created.map((entry) => entry.key)).size, 20);
  const listed = json<KeyView[]>(await gw(["keys", "list", "--json"], { home }));
  t.is(listed.length, 20);
  t.is(new Set(listed.map((entry) => entry.id)).size, 20);
  t.deepEqual(listed.map((entry) => entry.prefix).sort(), created.map((entry) => entry.key.slice(0, listed[0]!.prefix.length)).sort());
  const metadata = JSON.parse(readFileSync(homePaths(home).metadata, "utf8")) as {
    agents: Array<{ id: string; name: string }>;
    keys: Array<{ agentId: string }>;
  };
  t.deepEqual(metadata.agents.map((agent) => agent.name).sort(), ["bot0", "bot1", "bot2"], "one agent per name, however many raced to create it");
  t.is(metadata.keys.length, 20);
  t.true(metadata.keys.every((key) => metadata.agents.some((agent) => agent.id === key.agentId)));
});

test("agents create and list; plans are validated, aliases accepted", async (t) => {
  const home = await initialisedHome();
  const [engineer, plain] = await Promise.all([
    gw(["agents", "create", "eve", "--plan", "Engineer", "--json"], { home }),
    gw(["agents", "create", "bob"], { home }),
  ]);
  t.is(engineer.code, 0, engineer.stderr);
  t.is(json<AgentView>(engineer).plan, "max");
  t.is(plain.code, 0, plain.stderr);
  t.regex(plain.stdout, /created agent "bob".*plan free/);

  const [duplicate, badPlan] = await Promise.all([gw(["agents", "create", "bob"], { home }), gw(["agents", "create", "zed", "--plan", "platinum"], { home })]);
  t.is(duplicate.code, 1);
  t.regex(duplicate.stderr, /agent "bob" already exists/);
  t.is(badPlan.code, 1);
  t.regex(badPlan.stderr, /unknown plan "platinum"/);
  t.notRegex(badPlan.stderr, /\n\s+at /, "no stack trace");

  const [listed, table] = await Promise.all([gw(["agents", "list", "--json"], { home }), gw(["agents", "list"], { home })]);
  const agents = json<AgentView[]>(listed);
  t.deepEqual(agents.map((agent) => [agent.name, agent.plan]).sort(), [
    ["bob", "free"],
    ["eve", "max"],
  ]);
  t.regex(table.stdout, /^eve\s+agt_\S+\s+max\s+0\s/m);
});

test("plans list shows resolved limits; plans set edits config.json and moves agents", async (t) => {
  const home = await initialisedHome();
  const listed = await gw(["plans", "list", "--json"], { home });
  t.is(listed.code, 0, listed.stderr);
  const plans = json<PlanView[]>(listed);
  t.deepEqual(
    plans.map((plan) => plan.name),
    ["free", "pro", "max"],
  );
  t.like(plans[0], { monthlyCredits: 1_000_000, freeTierOnly: true, imageMaxResolution: "1K" });
  t.deepEqual(plans[1]?.aliases, ["assistant"]);

  const set = await gw(["plans", "set", "assistant", "--monthly-credits", "5000", "--image-max-resolution", "4K", "--no-free-tier-only", "--json"], { home });
  t.is(set.code, 0, set.stderr);
  t.like(json(set), { plan: "pro", limits: { monthlyCredits: 5000, imageMaxResolution: "4K", requestsPerMinute: 600 } });
  t.deepEqual(rawConfig(home).plans.pro, { monthlyCredits: 5000, imageMaxResolution: "4K", freeTierOnly: false });

  const before = readFileSync(homePaths(home).config, "utf8");
  const [negative, zeroRpm, badResolution] = await Promise.all([
    gw(["plans", "set", "free", "--monthly-credits", "-5"], { home }),
    gw(["plans", "set", "free", "--requests-per-minute", "0", "--json"], { home }),
    gw(["plans", "set", "free", "--image-max-resolution", "8K"], { home }),
  ]);
  t.is(negative.code, 1);
  t.regex(negative.stderr, /plans\.free\.monthlyCredits/);
  t.is(zeroRpm.code, 1);
  t.regex(zeroRpm.stderr, /plans\.free\.requestsPerMinute/);
  t.is(zeroRpm.stdout, "", "with --json the error goes to stderr only");
  t.not(badResolution.code, 0);
  t.regex(badResolution.stderr, /image-max-resolution/);
  t.is(readFileSync(homePaths(home).config, "utf8"), before, "a refused edit writes nothing");

  const store = await MetadataStore.open(homePaths(home).metadata);
  await createAgent(store, "carol", "free");
  store.close();
  const moved = await gw(["plans", "set", "engineer", "--agent", "carol"], { home });
  t.is(moved.code, 0, moved.stderr);
  t.is(storedAgents(home).find((agent) => agent.name === "carol")?.plan, "max");
  const missing = await gw(["plans", "set", "pro", "--agent", "nobody"], { home });
  t.is(missing.code, 1);
  t.regex(missing.stderr, /no agent "nobody"/);
});

test("providers add, list and remove never print a literal secret", async (t) => {
  const home = await initialisedHome();
  const secret = "sk-live-very-secret-1234567890";
  const added = await gw(
    ["providers", "add", "groq", "--type", "openai", "--base-url", "https://api.groq.com/openai/v1", "--api-key", secret, "--header", "X-Title=gw", "--json"],
    { home },
  );
  t.is(added.code, 0, added.stderr);
  t.deepEqual(json(added), { name: "groq", type: "openai", baseUrl: "https://api.groq.com/openai/v1", apiKey: "****", headers: { "X-Title": "****" } });
  const byEnv = await gw(["providers", "add", "tav", "--type", "gemini", "--api-key", "${TAVILY_API_KEY}"], { home, env: { TAVILY_API_KEY: "tvly-from-env" } });
  t.is(byEnv.code, 0, byEnv.stderr);
  t.deepEqual(rawConfig(home).providers.tav, { type: "gemini", apiKey: "${TAVILY_API_KEY}" }, "env references are stored as written");

  const [listed, table, badType, unimplemented] = await Promise.all([
    gw(["providers", "list", "--json"], { home, env: { TAVILY_API_KEY: "tvly-from-env" } }),
    gw(["providers", "list"], { home, env: { TAVILY_API_KEY: "tvly-from-env" } }),
    gw(["providers", "add", "x", "--type", "no-such-vendor"], { home }),
    gw(["providers", "add", "aai", "--type", "assemblyai"], { home }),
  ]);
  for (const result of [added, byEnv, listed, table]) {
    t.false(`${result.stdout}${result.stderr}`.includes(secret));
    t.false(`${result.stdout}${result.stderr}`.includes("tvly-from-env"));
  }
  const providers = json<ProviderView[]>(listed);
  t.is(providers.find((provider) => provider.name === "groq")?.apiKey, "****");
  t.is(providers.find((provider) => provider.name === "tav")?.apiKey, "${TAVILY_API_KEY}");
  t.is(providers.find((provider) => provider.name === "openai")?.apiKey, "${OPENAI_API_KEY}");
  t.regex(table.stdout, /^groq\s+openai\s+https:\/\/api\.groq\.com\/openai\/v1\s+\*{4}/m);
  t.is(badType.code, 2);
  t.regex(badType.stderr, /unknown provider type "no-such-vendor"/);
  t.is(unimplemented.code, 2, "a vendor gw has no adapter for would be skipped silently by the gateway");
  t.regex(unimplemented.stderr, /unknown provider type "assemblyai": gw implements openai, anthropic, gemini, stability, local, deepgram, elevenlabs/);
  t.false("aai" in rawConfig(home).providers);

  const inUse = await gw(["providers", "remove", "openai"], { home });
  t.is(inUse.code, 1);
  t.regex(inUse.stderr, /routes\[0\] \(prefix "openai\/"\)/);
  t.regex(inUse.stderr, /routes\[2\] \(prefix "auto"\)/);
  t.truthy(rawConfig(home).providers.openai);

  const removed = await gw(["providers", "remove", "groq"], { home });
  t.is(removed.code, 0, removed.stderr);
  t.false("groq" in rawConfig(home).providers);
  const gone = await gw(["providers", "remove", "groq"], { home });
  t.is(gone.code, 1);
  t.regex(gone.stderr, /no provider "groq"/);
});

test("routes add, list and remove; a route to an unknown provider is refused", async (t) => {
  const home = await initialisedHome();
  const added = await gw(["routes", "add", "fast/", "--provider", "openai", "--priority", "20", "--free-tier", "--model", "gpt-4o-mini", "--json"], { home });
  t.is(added.code, 0, added.stderr);
  t.deepEqual(json(added), { prefix: "fast/", provider: "openai", model: "gpt-4o-mini", priority: 20, freeTier: true });
  const weighted = await gw(["routes", "add", "mix", "--upstream", "openai:gpt-4o:3", "--upstream", "local:llama3:8b", "--json"], { home });
  t.is(weighted.code, 0, weighted.stderr);
  t.deepEqual(json<RouteView>(weighted).upstreams, [
    { provider: "openai", model: "gpt-4o", weight: 3 },
    { provider: "local", model: "llama3:8b", weight: 1 },
  ]);

  const before = readFileSync(homePaths(home).config, "utf8");
  const [unknown, neither, duplicate] = await Promise.all([
    gw(["routes", "add", "ghost/", "--provider", "ghost"], { home }),
    gw(["routes", "add", "x/"], { home }),
    gw(["routes", "add", "fast/", "--provider", "openai"], { home }),
  ]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /routes\[\d+\]\.provider: unknown provider "ghost"/);
  t.is(neither.code, 2);
  t.regex(neither.stderr, /--provider/);
  t.is(duplicate.code, 1);
  t.regex(duplicate.stderr, /routes\[3\] already sends "fast\/"/);
  t.is(readFileSync(homePaths(home).config, "utf8"), before);

  const [listed, table] = await Promise.all([gw(["routes", "list", "--json"], { home }), gw(["routes", "list"], { home })]);
  t.deepEqual(
    json<RouteView[]>(listed).map((route) => route.prefix),
    ["openai/", "anthropic/", "auto", "fast/", "mix"],
  );
  t.regex(table.stdout, /^3\s+fast\/\s+openai\s+gpt-4o-mini\s+20\s+yes$/m);

  const removed = await gw(["routes", "remove", "fast/"], { home });
  t.is(removed.code, 0, removed.stderr);
  t.deepEqual(
    rawConfig(home).routes.map((route) => (route as { prefix: string }).prefix),
    ["openai/", "anthropic/", "auto", "mix"],
  );
  const missing = await gw(["routes", "remove", "fast/"], { home });
  t.is(missing.code, 1);
  t.regex(missing.stderr, /no route with prefix "fast\/"/);
});

test("usage on an empty home, then with rows of the period", async (t) => {
  const home = await initialisedHome();
  const period = new Date().toISOString().slice(0, 7);
  const empty = await gw(["usage", "--json"], { home });
  t.is(empty.code, 0, empty.stderr);
  t.deepEqual(json(empty), { period, agents: [], rows: [] });

  const store = await MetadataStore.open(homePaths(home).metadata);
  const created = await createKey(store, "dave", undefined, "free");
  store.close();
  const agentId = created.agent.id;
  const row = (credits: number, time: string) => ({
    id: `use_${credits}`,
    time,
    agent: agentId,
    keyPrefix: created.key.slice(0, 11),
    endpoint: "chat.completions",
    model: "openai/gpt-4o-mini",
    provider: "openai",
    units: { input_tokens: 10, output_tokens: 5 },
    credits,
    requestId: `req_${credits}`,
  });
  mkdirSync(homePaths(home).usageDir, { recursive: true });
  appendFileSync(
    path.join(homePaths(home).usageDir, `${period}.jsonl`),
    `${JSON.stringify(row(1500, `${period}-01T00:00:00.000Z`))}\n${JSON.stringify(row(500, `${period}-01T00:00:01.000Z`))}\n`,
  );
  appendFileSync(path.join(homePaths(home).usageDir, "2020-01.jsonl"), `${JSON.stringify(row(7, "2020-01-05T00:00:00.000Z"))}\n`);

  const [current, old, table, unknownAgent, badPeriod] = await Promise.all([
    gw(["usage", "--json", "--agent", "dave"], { home }),
    gw(["usage", "--json", "--period", "2020-01"], { home }),
    gw(["usage"], { home }),
    gw(["usage", "--agent", "nobody"], { home }),
    gw(["usage", "--period", "2020-13"], { home }),
  ]);
  t.is(current.code, 0, current.stderr);
  const report = json<{ period: string; agents: unknown[]; rows: unknown[] }>(current);
  t.deepEqual(report.agents, [{ agent: "dave", plan: "free", used: 2000, balance: 1_000_000 - 2000 }]);
  t.is(report.rows.length, 2);
  t.like(json(old), { period: "2020-01", agents: [{ agent: "dave", used: 7, balance: 1_000_000 - 7 }] });
  t.regex(table.stdout, /^dave\s+free\s+2,000\s+998,000$/m);
  t.is(unknownAgent.code, 1);
  t.regex(unknownAgent.stderr, /no agent "nobody"/);
  t.is(badPeriod.code, 2, "a flag value not of its form is a usage error (docs/decisions.md §17)");
  t.regex(badPeriod.stderr, /YYYY-MM/);
});

test("commands that only read refuse an uninitialised home and name `gw init`", async (t) => {
  const home = tempHome();
  const results = await Promise.all([gw(["keys", "list"], { home }), gw(["usage", "--json"], { home })]);
  for (const result of results) {
    t.is(result.code, 1);
    t.regex(result.stderr, /gw init/);
    t.is(result.stdout, "");
  }
});

test("doctor --json reports engines, config and data dir; broken config exits non-zero", async (t) => {
  const home = await initialisedHome();
  // A stand-in ffmpeg binary, chosen through GW_FFMPEG_PATH (first in the resolution order).
  const ffmpeg = path.join(home, "fake-ffmpeg");
  writeFileSync(ffmpeg, "#!/bin/sh\necho 'ffmpeg version 9.9.9-test Copyright (c) the FFmpeg developers'\n");
  chmodSync(ffmpeg, 0o755);
  const broken = await initialisedHome();
  writeFileSync(homePaths(broken).config, JSON.stringify({ server: { port: "eighty" } }));

  // The default config reads its vendor keys from the environment; a healthy home has them set.
  const vendorKeys = { OPENAI_API_KEY: "sk-doctor-openai-value", ANTHROPIC_API_KEY: "sk-doctor-anthropic-value" };
  const [healthy, bad, plain] = await Promise.all([
    gw(["doctor", "--json"], { home, env: { GW_FFMPEG_PATH: ffmpeg, ...vendorKeys } }),
    gw(["doctor", "--json"], { home: broken }),
    gw(["doctor"], { home: broken }),
  ]);
  t.is(healthy.code, 0, healthy.stderr);
  const report = json<{ ok: boolean; checks: Array<{ name: string; status: string; detail: string; version?: string; source?: string; path?: string }> }>(
    healthy,
  );
  t.true(report.ok);
  const byName = new Map(report.checks.map((check) => [check.name, check]));
  t.is(byName.get("node")?.status, "ok");
  t.like(byName.get("ffmpeg"), { status: "ok", source: "GW_FFMPEG_PATH", version: "9.9.9-test", path: ffmpeg });
  for (const engine of ["espeak-ng", "tesseract"]) t.true(["ok", "warn"].includes(byName.get(engine)?.status ?? ""), "a missing engine is only a warning");
  t.is(byName.get("config")?.status, "ok");
  t.is(byName.get("data dir")?.status, "ok");
  t.is(byName.get("metadata")?.status, "ok");
  for (const name of Object.keys(vendorKeys)) t.is(byName.get(`env ${name}`)?.status, "ok", name);
  for (const value of Object.values(vendorKeys)) t.false(healthy.stdout.includes(value), "a set variable's value is never printed");
  t.is(byName.get("pricing")?.status, "ok", "every routable model of the default config has a price");

  t.is(bad.code, 1);
  const badReport = json<{ ok: boolean; checks: Array<{ name: string; status: string; detail: string }> }>(bad);
  t.false(badReport.ok);
  const config = badReport.checks.find((check) => check.name === "config");
  t.is(config?.status, "error");
  t.regex(config?.detail ?? "", /server\.port/);
  t.is(plain.code, 1);
  t.regex(plain.stdout, /FAIL\s+config\s+.*server\.port/);
});
