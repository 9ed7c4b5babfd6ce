// The ledger's promise (docs/decisions.md §3): a reservation is a true upper bound of a call's cost
// whatever the client or the upstream does. Exactly one output cap reaches the upstream, in the
// field that provider reads, and it is the cap the credits were reserved for (chat and messages,
// OpenAI-compatible, Anthropic and Gemini upstreams, streamed or not). A call is billed at most what
// it held; what an upstream's usage comes to beyond that is the row's `overage`, warned once,
// counted in /metrics and shown by `gw usage`, and no balance or key budget goes past zero. A
// request without max_tokens is filled only up to a useful floor, else 402 like an explicit one.

import test from "ava";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { homePaths } from "../../src/config/paths.js";
import { CreditLedger } from "../../src/gateway/billing/credit-ledger.js";
import { LocalCreditStore } from "../../src/store/local-credit-store.js";
import { periodOf, UsageLog, type UsageRow } from "../../src/store/usage-log.js";
import { type FakeGemini, startFakeGemini } from "../fakes/gemini.js";
import { addKey, gw, json, quietLogger } from "../helpers/gateway-harness.js";
import { tempDir, tempSubdir } from "../helpers/temp-dirs.js";
import { capsOf, type MeteredGateway, startMeteredGateway } from "./_metered-gateway.js";

let metered: MeteredGateway;
let gemini: FakeGemini;

const cheap = { context_length: 200_000, max_output_tokens: 5000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } };

test.before(async () => {
  gemini = await startFakeGemini();
  metered = await startMeteredGateway((config) => {
    // The same OpenAI-compatible fake three ways: its default field (max_tokens), and configured.
    config.providers.upc = { type: "openai", baseUrl: config.providers.up.baseUrl, apiKey: "sk-up", maxTokensField: "max_completion_tokens" };
    config.providers.upm = { type: "openai", baseUrl: config.providers.up.baseUrl, apiKey: "sk-up", maxTokensField: "max_tokens" };
    config.providers.gem = { type: "gemini", baseUrl: gemini.url, apiKey: "AIza-up" };
    // The same fake again, with small caps on the answers gw reads from it.
    config.providers.big = {
      type: "openai",
      baseUrl: config.providers.up.baseUrl,
      apiKey: "sk-up",
      upstream: { maxAnswerBytes: { chat: 4096, embeddings: 4096 } },
    };
    config.routes.push(
      { prefix: "mc/", provider: "upc", priority: 1 },
      { prefix: "mt/", provider: "upm", priority: 1 },
      { prefix: "g/", provider: "gem", priority: 1 },
      { prefix: "b/", provider: "big", priority: 1 },
    );
    config.models.push(
      { id: "mc/cheap", name: "Cheap, max_completion_tokens", ...cheap },
      { id: "mt/cheap", name: "Cheap, max_tokens", ...cheap },
      { id: "c/cheap", name: "Claude cheap", ...cheap },
      { id: "g/cheap", name: "Gemini cheap", ...cheap },
      { id: "m/short", name: "Short answers", ...cheap, max_output_tokens: 100 },
      { id: "b/cheap", name: "Cheap, capped answers", ...cheap },
      { id: "b/text-embedding-3-small", name: "Embeddings, capped answers", ...cheap },
    );
  });
});

test.after.always(async () => {
  await metered?.close();
  await gemini?.close();
});

const chat = (key: string, body: Record<string, unknown>) => metered.chat(key, body);
const messages = (key: string, body: Record<string, unknown>) => metered.messages(key, body);

test.beforeEach(() => {
  metered.openai.reset();
  metered.anthropic.reset();
  gemini.reset();
});

/** Output tokens the client was told of: a chat completion's, a stream's usage chunk, a message's or its events'. */
async function outputTokens(response: Response): Promise<number> {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const body = JSON.parse(text) as { usage: { completion_tokens?: number; output_tokens?: number } };
    return body.usage.completion_tokens ?? body.usage.output_tokens ?? Number.NaN;
  }
  let tokens = Number.NaN;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const data = JSON.parse(line.slice(6)) as { usage?: { completion_tokens?: number; output_tokens?: number } | null };
    if (data.usage?.completion_tokens !== undefined) tokens = data.usage.completion_tokens;
    if (data.usage?.output_tokens !== undefined) tokens = data.usage.output_tokens;
  }
  return tokens;
}

const rowsOf = (agent: string) => metered.rows(agent);
const allRows = (): UsageRow[] => UsageLog.readRows(homePaths(metered.home).usageDir, periodOf(new Date()));
const hi = [{ role: "user", content: "hi" }];

// --- 1. the reserved cap is the forwarded cap ------------------------------------------------------

test.serial(
  "chat: max_completion_tokens 16 beside max_tokens 5000 reaches an upstream reading max_tokens as 16; a 500-credit plan pays at most 500",
  async (t) => {
    const key = await metered.keyWithCredits("two-caps", 500);
    metered.openai.set({ writeToCapIn: "max_tokens" });
    for (const stream of [false, true]) {
      const response = await chat(key, { model: "m/cheap", max_completion_tokens: 16, max_tokens: 5000, stream, messages: hi });
      t.is(response.status, 200, `stream ${stream}`);
      t.is(await outputTokens(response), 16, `stream ${stream}`);
      t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 16 }, `stream ${stream}`);
    }
    // The other way round, and to a provider configured to read max_completion_tokens.
    const response = await chat(key, { model: "m/cheap", max_tokens: 16, max_completion_tokens: 5000, messages: hi });
    t.is(response.status, 200);
    t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 16 });
    metered.openai.set({ writeToCapIn: "max_completion_tokens" });
    for (const stream of [false, true]) {
      const served = await chat(key, { model: "mc/cheap", max_completion_tokens: 5000, max_tokens: 16, stream, messages: hi });
      t.is(served.status, 200);
      t.is(await outputTokens(served), 16);
      t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_completion_tokens: 16 });
    }
    t.true(metered.used("two-caps") <= 500, `used ${metered.used("two-caps")} of 500`);
    t.true(
      rowsOf("two-caps").every((row) => row.units.completion_tokens === 16 && row.overage === undefined),
      JSON.stringify(rowsOf("two-caps")),
    );
  },
);

test.serial("chat: max_output_tokens and max_new_tokens never leave gw; the smallest cap named is reserved and sent", async (t) => {
  const key = await metered.keyWithCredits("aliases", 1_000_000);
  metered.openai.set({ writeToCapIn: "max_tokens" });
  const response = await chat(key, { model: "m/cheap", max_tokens: 100, max_output_tokens: 9000, max_new_tokens: 12, messages: hi });
  t.is(response.status, 200);
  t.is(await outputTokens(response), 12);
  t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 12 });
  t.is(response.headers.get("x-service-max-tokens-filled"), null, "the request named a cap");

  // Named alone, another server's name for the cap is still the caller's cap (not filled in), sent in the provider's field.
  const alone = await chat(key, { model: "m/cheap", max_output_tokens: 700, stream: true, messages: hi });
  t.is(alone.status, 200);
  t.is(await outputTokens(alone), 700);
  t.is(alone.headers.get("x-service-max-tokens-filled"), null);
  t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: 700 });

  const invalid = await chat(key, { model: "m/cheap", max_new_tokens: -3, messages: hi });
  t.is(invalid.status, 400);
  t.is(((await invalid.json()) as { error: { param: string } }).error.param, "max_new_tokens");
});

test.serial("chat to Anthropic and Gemini: the one cap reserved, in the vendor's own field", async (t) => {
  const key = await metered.keyWithCredits("vendors", 500);
  metered.anthropic.set({ writeToMaxTokens: true });
  gemini.set({ writeToMaxOutputTokens: true });
  for (const stream of [false, true]) {
    const claude = await chat(key, { model: "c/cheap", max_tokens: 16, max_completion_tokens: 5000, stream, messages: hi });
    t.is(claude.status, 200, await claude.clone().text());
    t.is(await outputTokens(claude), 16);
    const sent = metered.anthropic.requests.at(-1)!.body;
    t.deepEqual(capsOf(sent), { max_tokens: 16 });

    const google = await chat(key, { model: "g/cheap", max_tokens: 16, max_completion_tokens: 5000, max_new_tokens: 900, stream, messages: hi });
    t.is(google.status, 200, await google.clone().text());
    t.is(await outputTokens(google), 16);
    t.is(gemini.requests.at(-1)!.body.generationConfig.maxOutputTokens, 16);
  }
  t.true(metered.used("vendors") <= 500, `used ${metered.used("vendors")} of 500`);
});

// --- 2. the messages endpoint maps the cap through the provider's setting -------------------------

test.serial("messages: to an OpenAI-compatible provider the cap goes in its maxTokensField, streamed or not", async (t) => {
  const key = await metered.keyWithCredits("messages-compat", 500);
  const cases = [
    { model: "mt/cheap", field: "max_tokens" as const },
    { model: "m/cheap", field: "max_tokens" as const },
    { model: "mc/cheap", field: "max_completion_tokens" as const },
  ];
  for (const { model, field } of cases) {
    metered.openai.set({ writeToCapIn: field });
    for (const stream of [false, true]) {
      const response = await messages(key, { model, max_tokens: 16, stream, messages: hi });
      t.is(response.status, 200, `${model} stream ${stream}`);
      t.is(await outputTokens(response), 16, `${model} stream ${stream}`);
      t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { [field]: 16 }, `${model} stream ${stream}`);
    }
  }
  t.true(metered.used("messages-compat") <= 500, `used ${metered.used("messages-compat")} of 500`);
  t.true(rowsOf("messages-compat").every((row) => row.units.completion_tokens === 16));
});

test.serial("messages: native Anthropic gets exactly the reserved cap as max_tokens; Gemini as maxOutputTokens", async (t) => {
  const key = await metered.keyWithCredits("messages-native", 500);
  metered.anthropic.set({ writeToMaxTokens: true });
  gemini.set({ writeToMaxOutputTokens: true });
  for (const stream of [false, true]) {
    // Fields an Anthropic-compatible server might read as a cap never reach it (Anthropic itself refuses them).
    const response = await messages(key, { model: "c/cheap", max_tokens: 16, max_completion_tokens: 5000, max_output_tokens: 5000, stream, messages: hi });
    t.is(response.status, 200, await response.clone().text());
    t.is(await outputTokens(response), 16);
    const sent = metered.anthropic.requests.at(-1)!.body;
    t.deepEqual(capsOf(sent), { max_tokens: 16 });
    t.deepEqual(Object.keys(sent).sort(), ["max_tokens", "messages", "model", "stream"]);

    const google = await messages(key, { model: "g/cheap", max_tokens: 16, stream, messages: hi });
    t.is(google.status, 200, await google.clone().text());
    t.is(await outputTokens(google), 16);
    t.is(gemini.requests.at(-1)!.body.generationConfig.maxOutputTokens, 16);
  }
  t.true(metered.used("messages-native") <= 500);
});

// --- 3. billing is capped at what was held ----------------------------------------------------------

test.serial("an upstream over-reporting usage is billed what was held: overage on the row, one warning, the metric, gw usage", async (t) => {
  const allowance = 20_000;
  const key = await metered.keyWithCredits("over-reported", allowance);
  metered.openai.set({ usage: { prompt_tokens: 100_000_000, completion_tokens: 100_000_000 } });
  const requestIds: string[] = [];
  for (let call = 0; call < 20; call += 1) {
    const response = await chat(key, { model: "m/cheap", max_tokens: 16, stream: call % 2 === 1, messages: hi });
    t.is(response.status, 200);
    await response.text();
    requestIds.push(response.headers.get("x-request-id")!);
  }
  const rows = rowsOf("over-reported");
  t.is(rows.length, 20);
  for (const row of rows) {
    // 1 credit a token: the upstream's usage comes to 200,000,000; the call could cost about 80.
    t.true(row.credits > 16 && row.credits < 200, JSON.stringify(row));
    t.is(row.credits + row.overage!, 200_000_000, JSON.stringify(row));
  }
  t.true(metered.used("over-reported") <= allowance, `used ${metered.used("over-reported")} of ${allowance}`);

  for (const requestId of requestIds) {
    const warnings = quietLogger.lines.filter((line) => line.startsWith("warn ") && line.includes(requestId) && /overage/.test(line));
    t.is(warnings.length, 1, requestId);
    const row = rows.find((candidate) => candidate.requestId === requestId)!;
    t.true(warnings[0]!.includes("up") && warnings[0]!.includes(String(row.credits)) && warnings[0]!.includes(String(row.overage)), warnings[0]);
  }

  const families = parsePrometheusTextFormat(await (await fetch(`${metered.gateway.url}/metrics`)).text());
  const family = families.find((candidate) => candidate.name === "gw_billing_overage_credits_total");
  const counted = family?.metrics.find((sample) => sample.labels?.provider === "up")?.value;
  const expected = allRows()
    .filter((row) => row.provider === "up")
    .reduce((sum, row) => sum + (row.overage ?? 0), 0);
  t.is(Number(counted), expected);

  const report = await gw(["usage", "--agent", "over-reported", "--json", "--home", metered.home]);
  t.is(report.code, 0, report.stderr);
  const body = json<{ agents: Array<{ used: number; balance: number; overage?: number }>; rows: UsageRow[] }>(report);
  t.true(body.rows.every((row) => row.overage! > 0));
  t.is(body.agents[0]!.overage, 20 * 200_000_000 - body.agents[0]!.used);
  t.true(body.agents[0]!.balance >= 0);

  const table = await gw(["usage", "--agent", "over-reported", "--home", metered.home]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /OVERAGE/);

  t.regex(table.stdout, new RegExp(`overage ${(20 * 200_000_000 - metered.used("over-reported")).toLocaleString("en-US")} credits`));

  const csv = await gw(["usage", "--agent", "over-reported", "--format", "csv", "--home", metered.home]);
  const [header, first] = csv.stdout.split("\n");
  t.is(header, "time,agent,key,endpoint,model,provider,credits,request_id,overage,batch,cached,tags");
  t.is(first!.split(",")[header!.split(",").indexOf("overage")], String(rows[0]!.overage));

  const byModel = await gw(["usage", "--agent", "over-reported", "--by", "model", "--json", "--home", metered.home]);
  const groups = json<{ groups: Array<{ model: string; overage: number }>; total: { overage: number } }>(byModel);
  t.is(groups.total.overage, 20 * 200_000_000 - metered.used("over-reported"));
  t.is(groups.groups[0]!.overage, groups.total.overage);
});

test.serial("an upstream that ignores the cap and reports no usage is billed what was held, ASCII or a CJK burst", async (t) => {
  const allowance = 20_000;
  const key = await metered.keyWithCredits("ignored-cap", allowance);
  metered.openai.set({ omitUsage: true, content: "word ".repeat(3000) });
  for (let call = 0; call < 20; call += 1) {
    const response = await chat(key, { model: "m/cheap", max_tokens: 16, stream: call % 2 === 0, messages: hi });
    t.is(response.status, 200);
    await response.text();
  }
  t.true(metered.used("ignored-cap") <= allowance, `used ${metered.used("ignored-cap")} of ${allowance}`);
  t.true(rowsOf("ignored-cap").every((row) => row.overage! > 2000 && row.credits < 200));

  // One token per wide character, 3,000 of them a call, 30 calls at once on 5,000 credits.
  const burst = await metered.keyWithCredits("cjk-burst", 5000);
  metered.openai.set({ omitUsage: true, content: "漢".repeat(3000) });
  const statuses = await Promise.all(
    Array.from({ length: 30 }, async (_, call) => {
      const response = await chat(burst, { model: "m/cheap", max_tokens: 16, stream: call % 2 === 0, messages: hi });
      await response.text();
      return response.status;
    }),
  );
  t.true(
    statuses.every((status) => status === 200 || status === 402),
    statuses.join(),
  );
  t.true(metered.used("cjk-burst") <= 5000, `used ${metered.used("cjk-burst")} of 5000`);
  t.true(rowsOf("cjk-burst").every((row) => row.overage! > 2000));
});

test.serial("a key's budget is never exceeded by an upstream that over-delivers", async (t) => {
  await metered.keyWithCredits("budgeted", 10_000_000);
  const key = await addKey(metered.home, "budgeted", "budgeted", { budget: { credits: 1000, period: "month" } });
  const prefix = key.slice(0, 11);
  metered.openai.set({ usage: { prompt_tokens: 50, completion_tokens: 6000 } });
  let refused = false;
  for (let call = 0; call < 40 && !refused; call += 1) {
    const response = await chat(key, { model: "m/cheap", max_tokens: 16, stream: call % 2 === 0, messages: hi });
    await response.text();
    refused = response.status === 402;
  }
  t.true(refused, "refused once the budget was spent");
  const spent = metered.gateway.gateway.state.usageLog!.keyCreditsUsed(prefix, periodOf(new Date()));
  t.true(spent <= 1000 && spent > 900, `spent ${spent} of 1000`);
});

test.serial("Anthropic and Gemini over-reporting, through chat and messages (native stream included), are billed what was held", async (t) => {
  const key = await metered.keyWithCredits("vendors-over", 100_000);
  metered.anthropic.set({ usage: { input_tokens: 10_000_000, output_tokens: 10_000_000 } });
  gemini.set({ usage: { promptTokenCount: 10_000_000, candidatesTokenCount: 10_000_000 } });
  const calls = [
    () => chat(key, { model: "c/cheap", max_tokens: 16, messages: hi }),
    () => chat(key, { model: "c/cheap", max_tokens: 16, stream: true, messages: hi }),
    () => messages(key, { model: "c/cheap", max_tokens: 16, messages: hi }),
    () => messages(key, { model: "c/cheap", max_tokens: 16, stream: true, messages: hi }),
    () => chat(key, { model: "g/cheap", max_tokens: 16, messages: hi }),
    () => chat(key, { model: "g/cheap", max_tokens: 16, stream: true, messages: hi }),
    () => messages(key, { model: "g/cheap", max_tokens: 16, stream: true, messages: hi }),
  ];
  for (const call of calls) {
    const response = await call();
    t.is(response.status, 200);
    await response.text();
  }
  const rows = rowsOf("vendors-over");
  t.is(rows.length, calls.length);
  for (const row of rows) t.true(row.credits < 200 && row.credits + row.overage! === 20_000_000, JSON.stringify(row));
});

test("the ledger caps every settlement at what was held (every endpoint settles through it)", async (t) => {
  const log = UsageLog.open(tempSubdir("gw-ledger-bounds-", "usage"));
  const recorded: UsageRow[] = [];
  const warnings: string[] = [];
  const ledger = new CreditLedger(
    new LocalCreditStore(log),
    () => new Date(),
    (row) => recorded.push(row),
    (message) => warnings.push(message),
  );
  const caller = {
    agent: { id: "agt", name: "a", plan: "p", createdAt: "" },
    key: { prefix: "gw_abcdefgh", agentId: "agt", hash: "", createdAt: "" },
  } as never;
  const account = { caller, plan: { monthlyCredits: 1000 } } as never;
  const entry = {
    agent: "agt",
    keyPrefix: "gw_abcdefgh",
    endpoint: "image.generations",
    model: "i",
    provider: "pics",
    units: { images: 3 },
    requestId: "req_1",
  };

  const held = await ledger.reserve(account, 100);
  const row = await ledger.settle(held, { ...entry, credits: 300 });
  t.is(row.credits, 100);
  t.is(row.overage, 200);
  t.is(recorded[0]!.overage, 200);
  t.is(warnings.length, 1);
  t.regex(warnings[0]!, /pics.*req_1.*300.*100.*200/);

  // A bound below the reservation (the candidate that served) caps lower still; within it nothing changes.
  const second = await ledger.settle(await ledger.reserve(account, 100), { ...entry, credits: 80, requestId: "req_2" }, { bound: 60 });
  t.deepEqual([second.credits, second.overage], [60, 20]);
  const third = await ledger.settle(await ledger.reserve(account, 100), { ...entry, credits: 40, requestId: "req_3" }, { bound: 60 });
  t.deepEqual([third.credits, third.overage], [40, undefined]);
  t.is(warnings.length, 2);
  t.is((await ledger.planBalance("agt", 1000)).used, 200);
  log.close();
});

// --- 4. the fill floor --------------------------------------------------------------------------------

test.serial("without max_tokens, a balance that pays for fewer than 256 tokens is 402 naming the max_tokens that fits", async (t) => {
  const key = await metered.keyWithCredits("nearly-spent", 100);
  const response = await chat(key, { model: "m/cheap", messages: hi });
  t.is(response.status, 402);
  const { error } = (await response.json()) as { error: { code: string; message: string } };
  t.is(error.code, "insufficient_credits");
  const fits = Number(/a max_tokens of at most (\d+) would fit/.exec(error.message)?.[1]);
  t.true(fits > 10 && fits < 100, error.message);
  t.regex(error.message, /256/);
  t.is(metered.openai.requests.length, 0);

  const explicit = await chat(key, { model: "m/cheap", max_tokens: fits, messages: hi });
  t.is(explicit.status, 200);
  t.deepEqual(capsOf(metered.openai.requests.at(-1)!.body), { max_tokens: fits });

  // A model whose own limit is below the floor is filled up to that limit.
  const short = await metered.keyWithCredits("short-answers", 180);
  const filled = await chat(short, { model: "m/short", messages: hi });
  t.is(filled.status, 200);
  t.is(filled.headers.get("x-service-max-tokens-filled"), "100");
});

test.serial("rows with overage count as the gateway counts them after a restart and through a backup and restore", async (t) => {
  const key = await metered.keyWithCredits("kept-overage", 10_000);
  metered.openai.set({ usage: { prompt_tokens: 5000, completion_tokens: 5000 } });
  const response = await chat(key, { model: "m/cheap", max_tokens: 16, messages: hi });
  t.is(response.status, 200);
  await response.text();
  const [row] = rowsOf("kept-overage");
  t.true(row!.overage! > 9000, JSON.stringify(row));

  const path = await import("node:path");
  const archive = path.join(tempDir("gw-overage-backup-"), "home.tar.gz");
  const backup = await gw(["backup", "--home", metered.home, "-o", archive]);
  t.is(backup.code, 0, backup.stderr);
  const target = path.join(tempDir("gw-overage-restore-"), "home");
  const restore = await gw(["restore", archive, "--home", target]);
  t.is(restore.code, 0, restore.stderr);
  const report = await gw(["usage", "--agent", "kept-overage", "--json", "--home", target]);
  t.is(report.code, 0, report.stderr);
  const body = json<{ agents: Array<{ used: number; overage?: number }>; rows: UsageRow[] }>(report);
  t.deepEqual(body.rows, [row]);
  t.deepEqual([body.agents[0]!.used, body.agents[0]!.overage], [row!.credits, row!.overage]);

  // The restored home's log opens as a start opens it, and counts the row's credits (not its overage).
  const reopened = UsageLog.open(homePaths(target).usageDir);
  t.deepEqual(reopened.warnings, []);
  t.is(reopened.creditsUsed(row!.agent, periodOf(new Date())), row!.credits);
  reopened.close();
});

test.serial("an answer over its size cap ends the call naming the cap and bills what was held: chat, messages, embeddings", async (t) => {
  const key = await metered.keyWithCredits("huge-answers", 100_000);
  // About 25 KB of answer against a 4 KB cap on chat answers.
  metered.openai.set({ content: "word ".repeat(5000) });
  const billedAtBound = (requestId: string | null, outputTokens: number) => {
    const row = rowsOf("huge-answers").find((candidate) => candidate.requestId === requestId);
    t.truthy(row, `a usage row for ${requestId}`);
    t.is(row?.units.completion_tokens, outputTokens);
    // 1 credit a token: the prompt's bound plus the output held.
    t.is(row?.credits, (row?.units.prompt_tokens ?? Number.NaN) + outputTokens);
  };

  const completion = await chat(key, { model: "b/cheap", max_tokens: 16, messages: hi });
  t.is(completion.status, 502);
  t.regex(((await completion.json()) as { error: { message: string } }).error.message, /upstream\.maxAnswerBytes\.chat/);
  billedAtBound(completion.headers.get("x-request-id"), 16);

  const stream = await chat(key, { model: "b/cheap", max_tokens: 20, stream: true, messages: hi });
  await stream.text();
  billedAtBound(stream.headers.get("x-request-id"), 20);

  const message = await messages(key, { model: "b/cheap", max_tokens: 24, messages: hi });
  t.is(message.status, 502);
  t.regex(((await message.json()) as { type: string; error: { message: string } }).error.message, /upstream\.maxAnswerBytes\.chat/);
  billedAtBound(message.headers.get("x-request-id"), 24);

  const messageStream = await messages(key, { model: "b/cheap", max_tokens: 28, stream: true, messages: hi });
  await messageStream.text();
  billedAtBound(messageStream.headers.get("x-request-id"), 28);

  const embeddings = await fetch(`${metered.gateway.v1}/embeddings`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "b/text-embedding-3-small", input: "hello there" }),
  });
  t.is(embeddings.status, 502);
  t.regex(((await embeddings.json()) as { error: { message: string } }).error.message, /upstream\.maxAnswerBytes\.embeddings/);
  const row = rowsOf("huge-answers").find((candidate) => candidate.requestId === embeddings.headers.get("x-request-id"));
  t.deepEqual(row && [row.units.input_tokens, row.credits], [13, 13]);
  t.is(metered.openai.requests.length, 5, "not retried");
});
