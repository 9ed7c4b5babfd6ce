// `gw providers set`, `gw routes set`, and routes that share a prefix (add refuses a duplicate,
// remove and set say how to pick one), run as subprocesses against real homes; then both `set`
// commands against a running gateway, which follows them without a restart. Last, provisioning
// commands on a damaged metadata file: worded for a command, not for the server's start.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import test from "ava";
import { initHome } from "../src/config/init-home.js";
import { homePaths } from "../src/config/paths.js";
import { MetadataStore } from "../src/store/metadata-store.js";
import { gw, json, removeTempHomes, tempHome } from "./_gw-cli.js";
import { eventually } from "./_storage.js";
import { startFakeOpenAI } from "./fakes/openai.js";
import { addKey, makeHome, startTestGateway } from "./helpers/gateway-harness.js";

test.after.always(() => removeTempHomes());

interface RawRoute {
  prefix: string;
  provider?: string;
  model?: string;
  priority?: number;
  freeTier?: boolean;
  upstreams?: Array<{ provider: string; model: string; weight?: number }>;
}
interface RawConfig {
  providers: Record<string, { type: string; baseUrl?: string; apiKey?: string; headers?: Record<string, string> }>;
  routes: RawRoute[];
}

async function initialisedHome(): Promise<string> {
  const home = tempHome();
  await initHome(home);
  return home;
}

function configText(home: string): string {
  return readFileSync(homePaths(home).config, "utf8");
}

function rawConfig(home: string): RawConfig {
  return JSON.parse(configText(home)) as RawConfig;
}

function editRaw(home: string, edit: (config: RawConfig) => void): void {
  const config = rawConfig(home);
  edit(config);
  writeFileSync(homePaths(home).config, JSON.stringify(config, null, 2));
}

test("providers set changes only what is given and never prints a secret; an unknown name is refused with the known ones", async (t) => {
  const home = await initialisedHome();
  const secret = "sk-live-first-secret-1234567890";
  const newSecret = "sk-live-second-secret-0987654321";
  const added = await gw(
    [
      "providers",
      "add",
      "groq",
      "--type",
      "openai",
      "--base-url",
      "https://api.groq.com/openai/v1",
      "--api-key",
      secret,
      "--header",
      "X-Title=gw",
      "--header",
      "X-Team=blue",
    ],
    { home },
  );
  t.is(added.code, 0, added.stderr);

  const baseUrl = await gw(["providers", "set", "groq", "--base-url", "https://proxy.example/v1", "--json"], { home });
  t.is(baseUrl.code, 0, baseUrl.stderr);
  t.deepEqual(json(baseUrl), {
    name: "groq",
    type: "openai",
    baseUrl: "https://proxy.example/v1",
    apiKey: "****",
    headers: { "X-Title": "****", "X-Team": "****" },
  });
  t.deepEqual(
    rawConfig(home).providers.groq,
    { type: "openai", baseUrl: "https://proxy.example/v1", apiKey: secret, headers: { "X-Title": "gw", "X-Team": "blue" } },
    "only the base URL changed",
  );

  const keyAndHeaders = await gw(["providers", "set", "groq", "--api-key", newSecret, "--header", "x-title=trial", "--header", "X-Team="], { home });
  t.is(keyAndHeaders.code, 0, keyAndHeaders.stderr);
  t.regex(keyAndHeaders.stdout, /changed provider "groq": apiKey, header x-title, header X-Team removed/);
  t.regex(keyAndHeaders.stderr, /stored literally/);
  t.deepEqual(
    rawConfig(home).providers.groq,
    { type: "openai", baseUrl: "https://proxy.example/v1", apiKey: newSecret, headers: { "x-title": "trial" } },
    "header names match case-insensitively; name= removes",
  );

  const byEnv = await gw(["providers", "set", "groq", "--api-key", "${GROQ_API_KEY}", "--base-url", "", "--json"], {
    home,
    env: { GROQ_API_KEY: "gsk-from-env" },
  });
  t.is(byEnv.code, 0, byEnv.stderr);
  t.deepEqual(json(byEnv), { name: "groq", type: "openai", apiKey: "${GROQ_API_KEY}", headers: { "x-title": "****" } });
  t.deepEqual(rawConfig(home).providers.groq, { type: "openai", apiKey: "${GROQ_API_KEY}", headers: { "x-title": "trial" } }, "--base-url '' removes it");
  const retyped = await gw(["providers", "set", "groq", "--type", "anthropic", "--json"], { home });
  t.is(retyped.code, 0, retyped.stderr);
  t.is(rawConfig(home).providers.groq?.type, "anthropic");
  for (const result of [added, baseUrl, keyAndHeaders, byEnv, retyped]) {
    const output = `${result.stdout}${result.stderr}`;
    t.false(
      output.includes(secret) || output.includes(newSecret) || output.includes("gsk-from-env") || output.includes("trial"),
      "no secret or header value printed back",
    );
  }

  const before = configText(home);
  const [unknown, nothing, badType, noSuchHeader, badUrl] = await Promise.all([
    gw(["providers", "set", "grok", "--base-url", "https://x.example/v1"], { home }),
    gw(["providers", "set", "groq"], { home }),
    gw(["providers", "set", "groq", "--type", "no-such-vendor"], { home }),
    gw(["providers", "set", "groq", "--header", "X-Missing="], { home }),
    gw(["providers", "set", "groq", "--base-url", "not a url"], { home }),
  ]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no provider "grok"; the providers are openai, anthropic, local, groq/);
  t.is(nothing.code, 2, "a usage error (docs/decisions.md §17)");
  t.regex(nothing.stderr, /nothing to change/);
  t.is(badType.code, 2);
  t.regex(badType.stderr, /unknown provider type "no-such-vendor"/);
  t.is(noSuchHeader.code, 1);
  t.regex(noSuchHeader.stderr, /provider "groq" has no header "X-Missing"/);
  t.is(badUrl.code, 1);
  t.regex(badUrl.stderr, /providers\.groq\.baseUrl/, "the edit is validated like every config edit");
  t.is(configText(home), before, "a refused change writes nothing");
});

test("routes add refuses a second route with the same prefix and provider, and a second auto; --replace replaces it", async (t) => {
  const home = await initialisedHome();
  const before = configText(home);
  const [secondAuto, sameProvider, autoByProvider] = await Promise.all([
    gw(["routes", "add", "auto", "--upstream", "anthropic:claude-haiku-4-5:1"], { home }),
    gw(["routes", "add", "openai/", "--provider", "openai", "--priority", "3"], { home }),
    gw(["routes", "add", "auto", "--provider", "openai"], { home }),
  ]);
  t.is(secondAuto.code, 1);
  t.regex(secondAuto.stderr, /routes\[2\] already sends "auto" to weighted upstreams \(openai:gpt-4o-mini:3\)/);
  t.regex(secondAuto.stderr, /--replace/);
  t.regex(secondAuto.stderr, /gw routes set auto/);
  t.is(sameProvider.code, 1);
  t.regex(sameProvider.stderr, /routes\[0\] already sends "openai\/" to openai; change it with `gw routes set openai\/ --provider openai/);
  t.regex(sameProvider.stderr, /--replace/);
  t.is(autoByProvider.code, 2);
  t.regex(autoByProvider.stderr, /auto route picks among weighted upstreams/);
  t.is(configText(home), before, "nothing was added");

  const replacedAuto = await gw(["routes", "add", "auto", "--upstream", "anthropic:claude-haiku-4-5:1", "--upstream", "openai:gpt-4o-mini:2", "--replace"], {
    home,
  });
  t.is(replacedAuto.code, 0, replacedAuto.stderr);
  t.regex(replacedAuto.stdout, /^replaced routes\[2\]: "auto"/);
  const replacedOpenai = await gw(["routes", "add", "openai/", "--provider", "openai", "--priority", "3", "--replace", "--json"], { home });
  t.is(replacedOpenai.code, 0, replacedOpenai.stderr);
  t.deepEqual(json(replacedOpenai), { prefix: "openai/", provider: "openai", priority: 3, freeTier: false });
  t.deepEqual(rawConfig(home).routes, [
    { prefix: "openai/", provider: "openai", priority: 3 },
    { prefix: "anthropic/", provider: "anthropic", priority: 10 },
    {
      prefix: "auto",
      upstreams: [
        { provider: "anthropic", model: "claude-haiku-4-5", weight: 1 },
        { provider: "openai", model: "gpt-4o-mini", weight: 2 },
      ],
    },
  ]);

  const otherProvider = await gw(["routes", "add", "openai/", "--provider", "local"], { home });
  t.is(otherProvider.code, 0, otherProvider.stderr);
  t.is(rawConfig(home).routes.filter((route) => route.prefix === "openai/").length, 2, "the same prefix to another provider is a fallback, not a duplicate");
});

test("routes remove takes the one match, and names the candidates and how to pick when several share the prefix", async (t) => {
  const single = await initialisedHome();
  const removed = await gw(["routes", "remove", "auto"], { home: single });
  t.is(removed.code, 0, removed.stderr);
  t.deepEqual(
    rawConfig(single).routes.map((route) => route.prefix),
    ["openai/", "anthropic/"],
  );

  // What the old `routes add auto` left behind: a second auto route at the same priority.
  const home = await initialisedHome();
  editRaw(home, (config) => {
    config.routes.push({
      prefix: "auto",
      upstreams: [
        { provider: "anthropic", model: "claude-haiku-4-5", weight: 1 },
        { provider: "openai", model: "gpt-4o", weight: 1 },
      ],
    });
    config.routes.push({ prefix: "auto", upstreams: [{ provider: "openai", model: "gpt-4o-mini", weight: 1 }], priority: 5 });
    config.routes.push({ prefix: "fast/", provider: "openai" }, { prefix: "fast/", provider: "local" });
  });
  const before = configText(home);
  const [autos, fast] = await Promise.all([gw(["routes", "remove", "auto"], { home }), gw(["routes", "remove", "fast/"], { home })]);
  t.is(autos.code, 1);
  t.regex(autos.stderr, /3 routes have prefix "auto"; pick one with --provider NAME, --priority N, --index N/);
  t.regex(autos.stderr, /routes\[2\] -> openai:gpt-4o-mini:3 \(priority 0\): --index 2/);
  t.regex(autos.stderr, /routes\[3\] -> anthropic:claude-haiku-4-5:1, openai:gpt-4o:1 \(priority 0\): --provider anthropic/);
  t.regex(autos.stderr, /routes\[4\] -> openai:gpt-4o-mini:1 \(priority 5\): --priority 5/);
  t.is(fast.code, 1);
  t.regex(fast.stderr, /2 routes have prefix "fast\/"; pick one with --provider NAME, --index N/, "--priority is offered for weighted routes only");
  t.regex(fast.stderr, /routes\[5\] -> openai \(priority 0\): --provider openai/);
  t.regex(fast.stderr, /routes\[6\] -> local \(priority 0\): --provider local/);
  t.is(configText(home), before, "nothing removed while the choice is open");

  for (const args of [
    ["auto", "--priority", "5"],
    ["auto", "--provider", "anthropic"],
    ["fast/", "--provider", "local"],
    ["auto", "--index", "2"],
  ]) {
    const picked = await gw(["routes", "remove", ...args], { home });
    t.is(picked.code, 0, picked.stderr);
  }
  t.deepEqual(rawConfig(home).routes, [
    { prefix: "openai/", provider: "openai", priority: 10, freeTier: false },
    { prefix: "anthropic/", provider: "anthropic", priority: 10 },
    { prefix: "fast/", provider: "openai" },
  ]);
  const none = await gw(["routes", "remove", "auto", "--provider", "openai"], { home });
  t.is(none.code, 1);
  t.regex(none.stderr, /no route with prefix "auto" and provider "openai"/);
});

test("routes set changes only what is given; several routes on the prefix are refused naming them", async (t) => {
  const home = await initialisedHome();
  const set = await gw(["routes", "set", "openai/", "--priority", "20", "--free-tier", "--json"], { home });
  t.is(set.code, 0, set.stderr);
  t.deepEqual(json(set), { prefix: "openai/", provider: "openai", priority: 20, freeTier: true });
  const model = await gw(["routes", "set", "openai/", "--no-free-tier", "--model", "gpt-4o"], { home });
  t.is(model.code, 0, model.stderr);
  t.regex(model.stdout, /changed routes\[0\]: "openai\/" -> openai \(priority 20, free tier no, model gpt-4o\)/);
  t.deepEqual(rawConfig(home).routes[0], { prefix: "openai/", provider: "openai", priority: 20, freeTier: false, model: "gpt-4o" });
  t.is((await gw(["routes", "set", "openai/", "--model", ""], { home })).code, 0);
  t.deepEqual(rawConfig(home).routes[0], { prefix: "openai/", provider: "openai", priority: 20, freeTier: false }, "--model '' drops it");
  const auto = await gw(["routes", "set", "auto", "--free-tier", "--priority", "2"], { home });
  t.is(auto.code, 0, auto.stderr);
  t.like(rawConfig(home).routes[2], { prefix: "auto", freeTier: true, priority: 2 });

  t.is((await gw(["routes", "add", "openai/", "--provider", "local"], { home })).code, 0);
  const before = configText(home);
  const [ambiguous, weightedModel, unknown, nothing] = await Promise.all([
    gw(["routes", "set", "openai/", "--priority", "1"], { home }),
    gw(["routes", "set", "auto", "--model", "gpt-4o"], { home }),
    gw(["routes", "set", "nope/", "--priority", "1"], { home }),
    gw(["routes", "set", "openai/"], { home }),
  ]);
  t.is(ambiguous.code, 1);
  t.regex(ambiguous.stderr, /2 routes have prefix "openai\/"; pick one with --provider NAME, --index N/);
  t.regex(ambiguous.stderr, /routes\[0\] -> openai \(priority 20\): --provider openai/);
  t.regex(ambiguous.stderr, /routes\[3\] -> local \(priority 0\): --provider local/);
  t.is(weightedModel.code, 1);
  t.regex(weightedModel.stderr, /routes\[2\] \("auto"\) is weighted.*--replace --upstream/);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no route with prefix "nope\/"/);
  t.is(nothing.code, 2);
  t.regex(nothing.stderr, /nothing to change/);
  t.is(configText(home), before, "a refused change writes nothing");

  const picked = await gw(["routes", "set", "openai/", "--provider", "local", "--priority", "1", "--json"], { home });
  t.is(picked.code, 0, picked.stderr);
  t.deepEqual(json(picked), { prefix: "openai/", provider: "local", priority: 1, freeTier: false });
  t.like(rawConfig(home).routes[0], { provider: "openai", priority: 20 }, "the other route is untouched");
});

test("providers set and routes set reach a running gateway without a restart", async (t) => {
  const [first, second] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  const home = await makeHome((config) => {
    config.providers = { fake: { type: "openai", baseUrl: first.url, apiKey: "sk-fake-upstream-1" } };
    config.routes = [{ prefix: "fake/", provider: "fake" }];
  });
  const gateway = await startTestGateway(home);
  t.teardown(async () => {
    await gateway.shutdown();
    await Promise.all([first.close(), second.close()]);
  });
  const key = await addKey(home, "operator", "pro");
  const chat = () =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "fake/gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    });
  t.is((await chat()).status, 200);
  t.is(first.requests.length, 1);

  const moved = await gw(["providers", "set", "fake", "--base-url", second.url, "--header", "X-Trial=yes"], { home });
  t.is(moved.code, 0, moved.stderr);
  t.true(await eventually(async () => (await chat()).status === 200 && second.requests.length > 0), "the next calls go to the new base URL");
  t.is(second.requests.at(-1)?.headers["x-trial"], "yes");
  t.is(second.requests.at(-1)?.body.model, "gpt-4o-mini");

  const pinned = await gw(["routes", "set", "fake/", "--model", "pinned-model"], { home });
  t.is(pinned.code, 0, pinned.stderr);
  t.true(
    await eventually(async () => (await chat()).status === 200 && second.requests.at(-1)?.body.model === "pinned-model"),
    "the route's new model is sent upstream",
  );
});

test("keys and agents commands on a damaged metadata file name the file and how to recover; the server's wording stays", async (t) => {
  const home = await initialisedHome();
  const file = homePaths(home).metadata;
  writeFileSync(file, '{"agents": [ {"name": "alice"');
  const corrupt = await Promise.all([
    gw(["keys", "list"], { home }),
    gw(["agents", "list", "--json"], { home }),
    gw(["keys", "create", "--agent", "bob"], { home }),
  ]);
  for (const result of corrupt) {
    t.is(result.code, 1);
    t.is(result.stdout, "");
    t.true(result.stderr.startsWith(`the metadata file ${file} is not valid JSON (`), result.stderr);
    t.regex(result.stderr, /so gw cannot read its agents and keys; nothing was changed\. Restore it from a backup/);
    t.regex(result.stderr, /move it aside and run `gw init`/);
    t.notRegex(result.stderr, /refusing to start/, "no command starts a server");
  }
  t.is(readFileSync(file, "utf8"), '{"agents": [ {"name": "alice"', "the damaged file is left as it was");

  writeFileSync(file, '{"agents": {}}');
  const shape = await gw(["agents", "list"], { home });
  t.is(shape.code, 1);
  t.regex(shape.stderr, /is not a gw metadata file \(no agents and keys lists\), so gw cannot read its agents and keys/);
  await t.throwsAsync(MetadataStore.open(file), { message: /is not a gw metadata file; refusing to start — restore it from a backup/ }, "the server's wording");

  rmSync(file);
  const missing = await gw(["keys", "list"], { home });
  t.is(missing.code, 1);
  t.regex(missing.stderr, /the metadata file .* is missing: restore it from a backup, or run `gw init`/);
  t.notRegex(missing.stderr, /refusing to start/);
});
