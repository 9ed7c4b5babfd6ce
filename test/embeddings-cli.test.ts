// `gw embed` as a user runs it: subprocesses of the built CLI against a running gw whose embedding
// upstream is the OpenAI fake. The vector as one JSON array on one line (default model
// openai/text-embedding-3-small), the text from stdin with `-`, --model and --dimensions reaching
// the gateway, --json the API body exactly, and errors (an unknown model, empty stdin) exiting
// non-zero with the message on stderr.
import test from "ava";
import { fakeEmbedding } from "./fakes/embedding-vectors.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, gw, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let openai: FakeOpenAI;
let gateway: TestGateway;
let key: string;
let home: string;

test.before(async () => {
  openai = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: openai.url, apiKey: "sk-cli-embeddings" } };
    config.routes = [{ prefix: "openai/", provider: "openai", priority: 10 }];
  });
  key = await addKey(home, "cli-embedder", "pro");
  gateway = await startTestGateway(home);
});

test.beforeEach(() => openai.reset());

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
});

const env = () => ({ GW_BASE_URL: gateway.url, GW_API_KEY: key });

test.serial("one text: its vector as a JSON array on one line, from the default model", async (t) => {
  const result = await gw(["embed", "hello world"], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout.split("\n").length, 2, "one line and its newline");
  t.deepEqual(json(result), fakeEmbedding("hello world", 1536));
  t.like(openai.requests[0]!.body, { model: "text-embedding-3-small", input: "hello world", encoding_format: "float" });
});

test.serial("`-` reads the text from stdin; --model and --dimensions reach the gateway", async (t) => {
  const result = await gw(["embed", "-", "--model", "openai/text-embedding-3-large", "--dimensions", "8"], { env: env(), input: "from stdin\n" });
  t.is(result.code, 0, result.stderr);
  t.deepEqual(json(result), fakeEmbedding("from stdin", 8));
  t.like(openai.requests[0]!.body, { model: "text-embedding-3-large", input: "from stdin", dimensions: 8 });
});

test.serial("--json prints the API body exactly", async (t) => {
  const result = await gw(["embed", "two words", "--json"], { env: env() });
  t.is(result.code, 0, result.stderr);
  // What the call was charged, as the gateway adds it to the usage (docs/decisions.md §24): its usage row's credits.
  const { rows } = json<{ rows: Array<{ credits: number }> }>(await gw(["usage", "--format", "json", "--home", home]));
  t.deepEqual(json(result), {
    object: "list",
    data: [{ object: "embedding", index: 0, embedding: fakeEmbedding("two words", 1536) }],
    model: "openai/text-embedding-3-small",
    usage: { prompt_tokens: 2, total_tokens: 2, gw_credits: rows.at(-1)!.credits },
  });
});

test.serial("errors exit non-zero with the message on stderr and nothing on stdout", async (t) => {
  const unknown = await gw(["embed", "x", "--model", "nowhere/model"], { env: env() });
  t.not(unknown.code, 0);
  t.is(unknown.stdout, "");
  t.regex(unknown.stderr, /nowhere\/model/);
  const empty = await gw(["embed", "-"], { env: env(), input: "\n" });
  t.not(empty.code, 0);
  t.regex(empty.stderr, /text is empty/);
  t.is(openai.requests.length, 0);
});
