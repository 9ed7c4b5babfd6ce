// GET /v1/models lists what the caller's key can use (a route serves it, the plan's free-tier
// gate lets it through, never `auto`), in the spec's entry shape; `gw doctor` and `gw models`
// say which routable models are billed at billing.defaultChatPricing.
import test from "ava";
import OpenAI from "openai";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, editHomeConfig, gw, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let fake: FakeOpenAI;
let gateway: TestGateway;
let home: string;
let proKey: string;
let freeKey: string;

const entry = (id: string, pricing?: { input_per_mtok: number; output_per_mtok: number }) => ({
  id,
  name: `Model ${id}`,
  context_length: 8192,
  created: 1700000000,
  ...(pricing ? { pricing } : {}),
});

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.providers = {
      fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-fake" },
      backup: { type: "openai", baseUrl: fake.url, apiKey: "sk-backup" },
    };
    config.routes = [
      { prefix: "fake/", provider: "fake", priority: 10 },
      { prefix: "free/", provider: "fake", freeTier: true },
      {
        prefix: "auto",
        upstreams: [
          { provider: "backup", model: "large" },
          { provider: "backup", model: "nameless" },
        ],
      },
      { prefix: "auto", freeTier: true, upstreams: [{ provider: "backup", model: "tiny" }] },
    ];
    config.models = [
      entry("fake/gpt-test", { input_per_mtok: 1, output_per_mtok: 2 }), // prefix route, paid plans
      entry("free/llama"), // free-tier prefix route, no price
      entry("backup/large", { input_per_mtok: 5, output_per_mtok: 15 }), // upstream of a paid auto route
      entry("backup/tiny"), // upstream of a free-tier auto route, no price
      entry("orphan/model"), // no route serves it
      entry("fake/"), // the bare prefix: no model behind it
      entry("auto"),
    ];
  });
  gateway = await startTestGateway(home);
  proKey = await addKey(home, "pat", "pro");
  freeKey = await addKey(home, "fay", "free");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

const client = (key: string) => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
const listedIds = async (key: string) => (await client(key).models.list()).data.map((model) => model.id);

test.serial("a pro key sees the models a prefix route serves; never unrouted ones, auto, or models only auto answers with", async (t) => {
  // backup/large and backup/tiny are only reached through auto: asked for by name they would be 404.
  t.deepEqual(await listedIds(proKey), ["fake/gpt-test", "free/llama"]);
  t.is(
    (
      await fetch(`${gateway.v1}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${proKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "backup/large", messages: [{ role: "user", content: "x" }] }),
      })
    ).status,
    404,
  );
});

test.serial("a free key sees only models on free-tier routes", async (t) => {
  t.deepEqual(await listedIds(freeKey), ["free/llama"]);
  // The free-tier auto route still serves it, under the upstream's name.
  const completion = await client(freeKey).chat.completions.create({ model: "auto", messages: [{ role: "user", content: "x" }] });
  t.is(completion.model, "backup/tiny");
});

test.serial("entries keep the spec's shape: id, name, architecture, context_length, created (and the price, OpenRouter's shape)", async (t) => {
  const response = await fetch(`${gateway.v1}/models`, { headers: { authorization: `Bearer ${freeKey}` } });
  t.deepEqual(await response.json(), {
    object: "list",
    data: ["free/llama"].map((id) => ({
      id,
      name: `Model ${id}`,
      architecture: { input_modalities: ["text"], output_modalities: ["text"] },
      context_length: 8192,
      created: 1700000000,
      pricing: { prompt: "0.000001", completion: "0.000003" },
    })),
    aliases: [],
    prefixes: [],
  });
});

test.serial("gw doctor warns about the routable models billed at the default price, and lists them", async (t) => {
  const result = await gw(["doctor", "--json"], { home });
  const report = json<{ ok: boolean; checks: Array<{ name: string; status: string; detail: string; models?: string[] }> }>(result);
  const pricing = report.checks.find((check) => check.name === "pricing");
  t.is(pricing?.status, "warn", JSON.stringify(report.checks));
  t.deepEqual([...(pricing?.models ?? [])].sort(), ["backup/nameless", "backup/tiny", "free/llama"]);
  for (const id of ["backup/nameless", "backup/tiny", "free/llama"]) t.true(pricing!.detail.includes(id), pricing!.detail);
  t.regex(pricing!.detail, /\$1\/\$3/);
  t.true(report.ok, "a warning does not fail doctor");
  t.is(result.code, 0, result.stderr);
});

test.serial("gw models marks default-priced models in the table; --json stays exactly the API body", async (t) => {
  // The CLI reaches the home's own server (no GW_BASE_URL): point the home's address at it.
  editHomeConfig(home, (config) => {
    config.server = { ...config.server, host: "127.0.0.1", port: Number(new URL(gateway.url).port) };
  });
  const env = { GW_API_KEY: proKey };
  const [table, body] = await Promise.all([gw(["models"], { home, env }), gw(["models", "--json"], { home, env })]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^ID\s+NAME\s+CONTEXT\s+MODALITIES\s+PRICE$/m);
  t.regex(table.stdout, /^free\/llama\s.*\sdefault \$1\/\$3$/m);
  t.regex(table.stdout, /^fake\/gpt-test\s.*\s\$1\/\$2$/m);
  t.is(body.code, 0, body.stderr);
  const direct = await fetch(`${gateway.v1}/models`, { headers: { authorization: `Bearer ${proKey}` } });
  t.deepEqual(json(body), await direct.json());
  t.false(body.stdout.includes("default"), "the marker is in the table only");
});
