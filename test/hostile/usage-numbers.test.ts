// An upstream's usage numbers cannot switch billing off: "ten", 1e308 or -5 are treated as no
// usage (the call is billed the gateway's estimate, and the client sees that estimate), every
// row has integer credits, the balance keeps refusing once spent, and a restart, `gw usage` and
// the credit check all still work.
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../../src/config/paths.js";
import { periodOf, UsageLog } from "../../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { addKey, gw, json, makeHome, quietLogger, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";

const ODD_USAGE = [
  { prompt_tokens: "ten", completion_tokens: 5, total_tokens: 15 },
  { prompt_tokens: 1e308, completion_tokens: 5, total_tokens: 1e308 },
  { prompt_tokens: -5, completion_tokens: 5, total_tokens: 0 },
  { prompt_tokens: 3, completion_tokens: 2.5, total_tokens: 5.5 },
  "lots",
];

let fake: FakeOpenAI;
let home: string;
let gateway: TestGateway;

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.upstream = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = { up: { type: "openai", baseUrl: fake.url, apiKey: "sk-up" } };
    config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
    config.models = [{ id: "m/x", name: "X", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
    config.plans = { hundred: { monthlyCredits: 100, freeTierOnly: false, requestsPerMinute: 6000 } };
  });
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

const rows = () => UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date()));
const client = (key: string) => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });

test.serial("odd usage numbers are billed as the estimate, in integers, and the client sees the estimate", async (t) => {
  const key = await addKey(home, "odd-reader", "max");
  for (const usage of ODD_USAGE) {
    fake.set({ rawUsage: usage, content: "two words" });
    const completion = await client(key).chat.completions.create({ model: "m/x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
    const seen = completion.usage!;
    t.true(Number.isSafeInteger(seen.prompt_tokens) && seen.prompt_tokens > 0, JSON.stringify(seen));
    t.true(Number.isSafeInteger(seen.completion_tokens) && seen.completion_tokens > 0, JSON.stringify(seen));

    const stream = await client(key).chat.completions.create({ model: "m/x", stream: true, max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
    let streamed: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) if (chunk.usage) streamed = chunk.usage;
    t.true(Number.isSafeInteger(streamed!.prompt_tokens) && streamed!.prompt_tokens > 0, JSON.stringify(streamed));
  }
  const mine = rows().slice(-ODD_USAGE.length * 2);
  t.is(mine.length, ODD_USAGE.length * 2);
  // At 1 credit a token, each row is the estimate the client saw: a few credits, never 0, never null.
  for (const row of mine) t.true(Number.isSafeInteger(row.credits) && row.credits > 0 && row.credits < 50, JSON.stringify(row));
  t.true(quietLogger.lines.some((line) => /up reported invalid usage for request req_\w+ \(prompt_tokens is "ten"\)/.test(line)));
  t.true(quietLogger.lines.some((line) => /prompt_tokens is 1e\+308/.test(line)));
});

test.serial("two agents on a 100-credit plan facing odd usage are refused once spent, before and after a restart", async (t) => {
  const keys = [await addKey(home, "odd-one", "hundred"), await addKey(home, "odd-two", "hundred")];
  for (const key of keys) {
    let refusedAt = -1;
    for (let call = 0; call < 15; call += 1) {
      fake.set({ rawUsage: ODD_USAGE[call % ODD_USAGE.length], content: "two words" });
      const outcome = await client(key)
        .chat.completions.create({ model: "m/x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] })
        .then(
          () => 200,
          (error: InstanceType<typeof OpenAI.APIError>) => error.status,
        );
      if (outcome === 402) {
        refusedAt = call;
        break;
      }
      t.is(outcome, 200);
    }
    t.true(refusedAt > 0, `refused at call ${refusedAt}`);
  }

  // A restart reads the log back: it starts, `gw usage` reads it, and the balances still refuse.
  await gateway.shutdown();
  gateway = await startTestGateway(home);
  for (const key of keys) {
    const error = await t.throwsAsync(client(key).chat.completions.create({ model: "m/x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }));
    t.is((error as InstanceType<typeof OpenAI.APIError>).status, 402);
  }
  const report = await gw(["usage", "--agent", "odd-one", "--json", "--home", home]);
  t.is(report.code, 0, report.stderr);
  const body = json<{ agents: Array<{ used: number; balance: number }>; rows: Array<{ credits: number }> }>(report);
  t.true(body.rows.every((row) => Number.isSafeInteger(row.credits)));
  t.true(body.agents[0]!.used <= 100 && body.agents[0]!.balance >= 0, JSON.stringify(body.agents[0]));
});
