// What a key can reach, as the official openai SDK and `gw models` see it (issue 20):
// GET /v1/models/{id} (`client.models.retrieve`) answers one model in the list's shape, 404 in
// the envelope for an id no route serves or the key may not use; entries carry their price in
// OpenRouter's `pricing` shape (USD per token, as decimal strings); routes without a models[]
// entry are visible: a named-upstream route as its own id, a bare prefix route under `prefixes`,
// `auto` by retrieving it; `gw models add` writes a models[] entry without editing config.json.
import { readFileSync } from "node:fs";
import test from "ava";
import OpenAI, { NotFoundError } from "openai";
import { homePaths } from "../src/config/paths.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, editHomeConfig, gw, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let fake: FakeOpenAI;
let gateway: TestGateway;
let home: string;
let proKey: string;
let freeKey: string;
let narrowKey: string;

interface Pricing {
  prompt: string;
  completion: string;
  input_cache_read?: string;
  input_cache_write?: string;
}

interface ListedModel {
  id: string;
  name: string;
  context_length: number | null;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  created: number;
  pricing?: Pricing;
}

interface ListBody {
  object: "list";
  data: ListedModel[];
  aliases: Array<{ id: string; pricing: Pricing }>;
  prefixes: Array<{ prefix: string; pricing: Pricing }>;
}

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-fake" } };
    config.routes = [
      { prefix: "fake/", provider: "fake", priority: 10 },
      { prefix: "free/", provider: "fake", freeTier: true },
      // A bare prefix route: no models[] entry under it.
      { prefix: "bare/", provider: "fake", freeTier: true },
      // A named-upstream route: `fast` always sends gpt-4o-mini.
      { prefix: "fast", provider: "fake", model: "gpt-4o-mini" },
      { prefix: "auto", freeTier: true, upstreams: [{ provider: "fake", model: "gpt-4o-mini" }] },
    ];
    config.models = [
      {
        id: "fake/gpt-test",
        name: "GPT Test",
        context_length: 128000,
        input_modalities: ["text", "image"],
        created: 1700000000,
        pricing: { input_per_mtok: 0.15, output_per_mtok: 0.6, cache_read_per_mtok: 0.075 },
      },
      { id: "free/llama", name: "Llama", context_length: 8192, created: 1700000000 },
    ];
  });
  gateway = await startTestGateway(home);
  proKey = await addKey(home, "pat", "pro");
  freeKey = await addKey(home, "fay", "free");
  narrowKey = await addKey(home, "nia", "pro", { models: ["free/*"] });
  // The CLI reaches the home's own server (no GW_BASE_URL needed).
  editHomeConfig(home, (config) => {
    config.server = { ...config.server, host: "127.0.0.1", port: Number(new URL(gateway.url).port) };
  });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

const client = (key: string) => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });

async function listBody(key: string): Promise<ListBody> {
  const response = await fetch(`${gateway.v1}/models`, { headers: { authorization: `Bearer ${key}` } });
  return (await response.json()) as ListBody;
}

test.serial("models.retrieve answers the model in the list's shape, with OpenRouter's pricing (USD per token, decimal strings)", async (t) => {
  const model = (await client(proKey).models.retrieve("fake/gpt-test")) as unknown as ListedModel;
  t.deepEqual(model, {
    id: "fake/gpt-test",
    name: "GPT Test",
    architecture: { input_modalities: ["text", "image"], output_modalities: ["text"] },
    context_length: 128000,
    created: 1700000000,
    pricing: { prompt: "0.00000015", completion: "0.0000006", input_cache_read: "0.000000075" },
  });
  const listed = (await client(proKey).models.list()).data as unknown as ListedModel[];
  t.deepEqual(
    listed.find((entry) => entry.id === "fake/gpt-test"),
    model,
  );
  // A plain path with the slash unencoded (curl) reaches the same model.
  const plain = await fetch(`${gateway.v1}/models/fake/gpt-test`, { headers: { authorization: `Bearer ${proKey}` } });
  t.is(plain.status, 200);
  t.deepEqual(await plain.json(), model);
});

test.serial("a model without a price of its own carries the default price it is billed at", async (t) => {
  const model = (await client(freeKey).models.retrieve("free/llama")) as unknown as ListedModel;
  t.deepEqual(model.pricing, { prompt: "0.000001", completion: "0.000003" });
});

test.serial("an unknown id, a model the plan does not reach, or one outside the key's patterns is 404 in the envelope", async (t) => {
  for (const [key, id] of [
    [proKey, "fake"],
    [proKey, "nobody/model"],
    [freeKey, "fake/gpt-test"],
    [narrowKey, "fake/gpt-test"],
    [proKey, "bare/"],
  ] as const) {
    const error = await t.throwsAsync(() => client(key).models.retrieve(id), { instanceOf: NotFoundError }, id);
    t.is(error?.status, 404);
    t.is(error?.code, "model_not_found", id);
    t.is(error?.type, "invalid_request_error");
    t.regex(error?.message ?? "", new RegExp(id.replace(/[/]/g, "\\/")));
  }
  const raw = await fetch(`${gateway.v1}/models/nobody%2Fmodel`, { headers: { authorization: `Bearer ${proKey}` } });
  t.is(raw.status, 404);
  t.like(await raw.json(), { error: { code: "model_not_found", type: "invalid_request_error", param: "model" } });
  t.truthy(raw.headers.get("x-request-id"));
  const anonymous = await fetch(`${gateway.v1}/models/fake%2Fgpt-test`);
  t.is(anonymous.status, 401);
});

test.serial("a named-upstream route is listed under `aliases` by its id; a bare prefix route under `prefixes`; `data` keeps the spec's entries", async (t) => {
  const pro = await listBody(proKey);
  t.deepEqual(
    pro.data.map((entry) => entry.id),
    ["fake/gpt-test", "free/llama"],
  );
  for (const entry of pro.data) t.true(Number.isInteger(entry.context_length), `${entry.id}: the spec's context_length is an integer`);
  t.deepEqual(pro.aliases, [{ id: "fast", pricing: { prompt: "0.000001", completion: "0.000003" } }]);
  const fast = await client(proKey).models.retrieve("fast");
  t.like(fast, { id: "fast", name: "fast", context_length: null, pricing: { prompt: "0.000001", completion: "0.000003" } } as never);
  t.deepEqual(pro.prefixes, [{ prefix: "bare/", pricing: { prompt: "0.000001", completion: "0.000003" } }]);
  // The alias works as listed, and so does any id under the bare prefix.
  t.is((await client(proKey).chat.completions.create({ model: "fast", messages: [{ role: "user", content: "x" }] })).model, "fast");
  const underPrefix = (await client(freeKey).models.retrieve("bare/some-model")) as unknown as ListedModel;
  t.like(underPrefix, { id: "bare/some-model", name: "bare/some-model", context_length: null, pricing: { prompt: "0.000001" } });
});

test.serial("a free key lists what it reaches; auto is not listed (the spec) but retrieving it answers for keys that may use it", async (t) => {
  const free = await listBody(freeKey);
  t.deepEqual(
    free.data.map((entry) => entry.id),
    ["free/llama"],
  );
  t.deepEqual(
    free.prefixes.map((entry) => entry.prefix),
    ["bare/"],
  );
  const auto = (await client(freeKey).models.retrieve("auto")) as unknown as ListedModel;
  t.is(auto.id, "auto");
  t.regex(auto.name, /fake\/gpt-4o-mini/);
  t.is(auto.pricing, undefined, "auto's price depends on the upstream it picks");
  // A key whose patterns leave auto out does not get it.
  await t.throwsAsync(() => client(narrowKey).models.retrieve("auto"), { instanceOf: NotFoundError });
});

test.serial("gw models lists what the key reaches: routed models with prices, auto, and bare prefixes; --json stays the API body", async (t) => {
  const free = await gw(["models"], { home, env: { GW_API_KEY: freeKey } });
  t.is(free.code, 0, free.stderr);
  t.notRegex(free.stderr, /no models/);
  t.regex(free.stdout, /^free\/llama\s+Llama\s+8,192\s.*default \$1\/\$3$/m);
  t.regex(free.stdout, /^auto\s+.*fake\/gpt-4o-mini/m);
  t.regex(free.stdout, /^bare\/\*\s+.*default \$1\/\$3$/m);
  const pro = await gw(["models"], { home, env: { GW_API_KEY: proKey } });
  t.regex(pro.stdout, /^fake\/gpt-test\s+GPT Test\s+128,000\s.*\$0\.15\/\$0\.6$/m);
  t.regex(pro.stdout, /^fast\s/m);
  const body = await gw(["models", "--json"], { home, env: { GW_API_KEY: freeKey } });
  t.is(body.code, 0, body.stderr);
  t.deepEqual(json(body), await listBody(freeKey));
});

test.serial("gw models add writes a models[] entry: a route added with gw routes add then lists it, priced", async (t) => {
  const routed = await gw(["routes", "add", "newp/", "--provider", "fake"], { home });
  t.is(routed.code, 0, routed.stderr);
  const added = await gw(
    [
      "models",
      "add",
      "newp/m1",
      "--name",
      "New M1",
      "--context-length",
      "32000",
      "--input-price",
      "0.5",
      "--output-price",
      "1.5",
      "--input-modalities",
      "text,image",
    ],
    { home },
  );
  t.is(added.code, 0, added.stderr);
  const written = JSON.parse(readFileSync(homePaths(home).config, "utf8")) as { models: Array<Record<string, unknown>> };
  t.deepEqual(
    written.models.find((entry) => entry.id === "newp/m1"),
    {
      id: "newp/m1",
      name: "New M1",
      context_length: 32000,
      input_modalities: ["text", "image"],
      pricing: { input_per_mtok: 0.5, output_per_mtok: 1.5 },
    },
  );
  // The running server follows the config file.
  const listed: ListedModel | undefined = await eventually(
    async () => (await listBody(proKey)).data.find((entry) => entry.id === "newp/m1"),
    "newp/m1 in the running server's list",
  );
  t.like(listed, { name: "New M1", context_length: 32000, pricing: { prompt: "0.0000005", completion: "0.0000015" } });

  const again = await gw(["models", "add", "newp/m1", "--name", "Again", "--context-length", "1000"], { home });
  t.is(again.code, 1);
  t.regex(again.stderr, /newp\/m1.*already.*--replace/);
  const replaced = await gw(["models", "add", "newp/m1", "--name", "Again", "--context-length", "1000", "--replace", "--json"], { home });
  t.is(replaced.code, 0, replaced.stderr);
  t.like(json(replaced), { id: "newp/m1", name: "Again", context_length: 1000 });

  const unrouted = await gw(["models", "add", "elsewhere/m", "--name", "M", "--context-length", "1000"], { home });
  t.is(unrouted.code, 0, unrouted.stderr);
  t.regex(unrouted.stderr, /no route serves elsewhere\/m/);
  const badPrice = await gw(["models", "add", "newp/m2", "--name", "M", "--context-length", "1000", "--input-price", "cheap"], { home });
  t.is(badPrice.code, 2, badPrice.stderr);
});
