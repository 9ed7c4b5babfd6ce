// A user's session with the real thing: `gw` subprocesses provisioning a home while a real gw
// server runs (changes take effect without restart), then calling it with `gw chat`, `gw models`
// and reading `gw usage` — all against the fake OpenAI-compatible upstream.
import test from "ava";
import OpenAI from "openai";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { gw, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let fake: FakeOpenAI;
let gateway: TestGateway;
let home: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome();
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

const env = (key: string) => ({ GW_BASE_URL: gateway.url, GW_API_KEY: key, GW_HOME: home });

test.serial("provision with gw while the server runs, chat with gw, read usage with gw", async (t) => {
  const provider = await gw(["providers", "add", "fake", "--type", "openai", "--base-url", fake.url, "--api-key", "sk-live-secret", "--home", home]);
  t.is(provider.code, 0, provider.stderr);
  const route = await gw(["routes", "add", "fake/", "--provider", "fake", "--priority", "5", "--home", home]);
  t.is(route.code, 0, route.stderr);
  const created = await gw(["keys", "create", "--agent", "carol", "--plan", "pro", "--json", "--home", home]);
  t.is(created.code, 0, created.stderr);
  const { key, agent, plan } = json<{ key: string; agent: string; plan: string }>(created);
  t.deepEqual({ agent, plan }, { agent: "carol", plan: "pro" });

  // The running server sees the new key and route without a restart.
  const answer = await eventually(() => gw(["chat", "hello from the cli", "--model", "fake/gpt-x", "--json"], { env: env(key) }), {
    until: (result) => result.code === 0,
    what: "gw to succeed",
  });
  t.is(answer.code, 0, answer.stderr);
  const body = json<{ model: string; choices: Array<{ message: { content: string } }>; usage: { total_tokens: number } }>(answer);
  t.is(body.model, "fake/gpt-x");
  t.is(body.choices[0]!.message.content, "echo: hello from the cli");
  t.true(body.usage.total_tokens > 0);
  t.is(fake.requests.at(-1)!.headers.authorization, "Bearer sk-live-secret");

  const streamed = await gw(["chat", "-", "--model", "fake/gpt-x", "--system", "be brief", "--max-tokens", "50", "--temperature", "0.5"], {
    env: env(key),
    input: "piped prompt",
  });
  t.is(streamed.code, 0, streamed.stderr);
  t.is(streamed.stdout.trim(), "echo: piped prompt");
  const sent = fake.requests.at(-1)!.body;
  t.deepEqual(sent.messages, [
    { role: "system", content: "be brief" },
    { role: "user", content: "piped prompt" },
  ]);
  t.is(sent.max_tokens, 50);
  t.is(sent.temperature, 0.5);

  const usage = await gw(["usage", "--agent", "carol", "--json", "--home", home]);
  t.is(usage.code, 0, usage.stderr);
  const report = json<{ agents: Array<{ agent: string; used: number; balance: number }>; rows: Array<{ model: string; credits: number }> }>(usage);
  t.is(report.rows.length, 2);
  t.true(report.rows.every((row) => row.model === "fake/gpt-x" && row.credits > 0));
  const carol = report.agents.find((entry) => entry.agent === "carol")!;
  t.is(
    carol.used,
    report.rows.reduce((sum, row) => sum + row.credits, 0),
  );
  t.is(carol.balance, 20_000_000 - carol.used);

  // Secrets never come back from the CLI.
  const providers = await gw(["providers", "list", "--json", "--home", home]);
  t.false(providers.stdout.includes("sk-live-secret"));
});

test.serial("gw models lists what the server serves, as the exact API body with --json", async (t) => {
  const created = json<{ key: string }>(await gw(["keys", "create", "--agent", "dave", "--json", "--home", home]));
  const models = await eventually(() => gw(["models", "--json"], { env: env(created.key) }), { until: (result) => result.code === 0, what: "gw to succeed" });
  t.is(models.code, 0, models.stderr);
  const direct = await fetch(`${gateway.v1}/models`, { headers: { authorization: `Bearer ${created.key}` } });
  t.deepEqual(json(models), await direct.json());
});

test.serial("a key revoked with gw stops working in the running server", async (t) => {
  const { key } = json<{ key: string }>(await gw(["keys", "create", "--agent", "erin", "--plan", "pro", "--json", "--home", home]));
  const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
  await eventually(
    () =>
      client.models.list().then(
        () => true,
        () => false,
      ),
    "the new key to be accepted",
  );
  const revoked = await gw(["keys", "revoke", key.slice(0, 11), "--home", home]);
  t.is(revoked.code, 0, revoked.stderr);
  const status = await eventually(
    () =>
      client.models.list().then(
        () => 200,
        (error: { status?: number }) => error.status ?? 0,
      ),
    { until: (value) => value === 401, what: "the revoked key to be refused" },
  );
  t.is(status, 401);
});

test.serial("a free key cannot reach a paid route from the CLI: the server's message, exit 1", async (t) => {
  const { key } = json<{ key: string }>(await gw(["keys", "create", "--agent", "frank", "--plan", "free", "--json", "--home", home]));
  const result = await eventually(() => gw(["chat", "hi", "--model", "fake/gpt-x"], { env: env(key) }), {
    until: (value) => /upgrade/.test(value.stderr),
    what: "the free plan's refusal",
  });
  t.is(result.code, 1);
  t.regex(result.stderr, /not available on the free plan/);
  t.is(result.stdout, "");
});
