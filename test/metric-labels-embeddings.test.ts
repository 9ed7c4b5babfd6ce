// The metrics' `model` label (docs/decisions.md §12) for embeddings: a model id that a configured
// prefix route sends to one of gw's built-in embedding models (config/default-embedding-models.ts)
// is a configured model and keeps its name; a name the client made up under a prefix route is
// still `other`, and so is a built-in embedding model of another vendor under that route.
import test from "ava";
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";
import { ModelLabels } from "../src/server/model-labels.js";
import { type FakeGemini, startFakeGemini } from "./fakes/gemini.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let openai: FakeOpenAI;
let gemini: FakeGemini;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  openai = await startFakeOpenAI();
  gemini = await startFakeGemini();
  const home = await makeHome((config) => {
    config.upstream = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = {
      oai: { type: "openai", baseUrl: openai.url, apiKey: "sk-labels" },
      gem: { type: "gemini", baseUrl: gemini.url, apiKey: "gm-labels" },
    };
    config.routes = [
      { prefix: "oai/", provider: "oai", priority: 1 },
      { prefix: "gem/", provider: "gem", priority: 1 },
    ];
    // No models[] entry names any of the models called here.
    config.models = [];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "labeller", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  await gemini?.close();
});

async function post(path: string, body: Record<string, unknown>): Promise<number> {
  const response = await fetch(`${gateway.v1}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

async function scrape(): Promise<PrometheusFamily[]> {
  const response = await fetch(`${gateway.url}/metrics`);
  return parsePrometheusTextFormat((await response.text()).replace(/^# TYPE (\S+) histogram$/gm, "# TYPE $1 untyped"));
}

function tokens(families: PrometheusFamily[], model: string): number {
  const family = families.find((candidate) => candidate.name === "gw_tokens_total");
  return (family?.metrics ?? []).filter((sample) => sample.labels?.model === model).reduce((sum, sample) => sum + Number(sample.value), 0);
}

test.serial("embeddings of a built-in model through a configured prefix route are labelled by name; made-up names stay `other`", async (t) => {
  t.is(await post("/embeddings", { model: "oai/text-embedding-3-small", input: "a sentence to embed" }), 200);
  t.is(await post("/embeddings", { model: "gem/gemini-embedding-001", input: ["one", "two"] }), 200);
  const named = await scrape();
  t.true(tokens(named, "oai/text-embedding-3-small") > 0, "OpenAI's built-in embedding model under its route");
  t.true(tokens(named, "gem/gemini-embedding-001") > 0, "Gemini's built-in embedding model under its route");
  const otherBefore = tokens(named, "other");

  // A chat model no entry names, passed through by the prefix route: `other`, never its name.
  t.is(await post("/chat/completions", { model: "oai/made-up-by-the-client", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }), 200);
  const after = await scrape();
  t.true(tokens(after, "other") > otherBefore);
  t.is(tokens(after, "oai/made-up-by-the-client"), 0);
  const labels = after.flatMap((family) => family.metrics.map((sample) => sample.labels?.model)).filter((model) => model !== undefined);
  t.deepEqual([...new Set(labels)].sort(), ["gem/gemini-embedding-001", "oai/text-embedding-3-small", "other"]);
});

test("another vendor's built-in embedding model under a route is not that route's: `other`", (t) => {
  const labels = new ModelLabels(() => gateway.gateway.config);
  t.is(labels.labelOf("oai/text-embedding-3-large"), "oai/text-embedding-3-large");
  t.is(labels.labelOf("gem/text-embedding-004"), "gem/text-embedding-004");
  t.is(labels.labelOf("oai/gemini-embedding-001"), "other");
  t.is(labels.labelOf("gem/text-embedding-3-small"), "other");
  t.is(labels.labelOf("text-embedding-3-small"), "other");
});
