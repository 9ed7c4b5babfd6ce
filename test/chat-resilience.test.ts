// Retries, fallback, timeouts, client aborts and credit races on the chat path.

import http from "node:http";
import { createServer } from "node:net";
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let primary: FakeOpenAI;
let secondary: FakeOpenAI;
let gateway: TestGateway;
let key: string;
let deadPort: number;

/** A port with nothing listening: connecting to it is refused at once. */
async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test.before(async () => {
  primary = await startFakeOpenAI();
  secondary = await startFakeOpenAI();
  deadPort = await unusedPort();
  const home = await makeHome((config) => {
    // Generous timeouts wherever attempts are counted, so that a loaded machine's slow answer is
    // never mistaken for a timeout; the timeout tests go through `hasty`, the same upstream with
    // short ones, whose fakes are slower than those by far.
    config.upstream = {
      retries: 2,
      retryBaseDelayMs: 5,
      firstByteTimeoutMs: 10_000,
      idleTimeoutMs: 10_000,
      connectTimeoutMs: 5000,
      maxRetryAfterMs: 2000,
      breakerFailureThreshold: 0,
    };
    config.providers = {
      primary: { type: "openai", baseUrl: primary.url, apiKey: "k1" },
      hasty: { type: "openai", baseUrl: primary.url, apiKey: "k1", upstream: { firstByteTimeoutMs: 400, idleTimeoutMs: 400 } },
      secondary: { type: "openai", baseUrl: secondary.url, apiKey: "k2" },
      dead: { type: "openai", baseUrl: `http://127.0.0.1:${deadPort}/v1`, apiKey: "k3" },
    };
    config.routes = [
      { prefix: "m/", provider: "primary", priority: 10 },
      { prefix: "m/", provider: "secondary", priority: 5 },
      { prefix: "d/", provider: "dead", priority: 10 },
      { prefix: "d/", provider: "secondary", priority: 1 },
      { prefix: "solo/", provider: "primary", priority: 1 },
      { prefix: "t/", provider: "hasty", priority: 10 },
      { prefix: "t/", provider: "secondary", priority: 5 },
      { prefix: "tsolo/", provider: "hasty", priority: 1 },
    ];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "res", "max");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await primary?.close();
  await secondary?.close();
});

test.beforeEach(() => {
  primary.reset();
  secondary.reset();
});

const client = () => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
const ask = (model: string) => client().chat.completions.create({ model, messages: [{ role: "user", content: "ping" }] });

test.serial("5xx is retried on the same upstream with backoff", async (t) => {
  primary.enqueue({ status: 500 }, { status: 503 });
  const completion = await ask("m/x");
  t.is(completion.choices[0]!.message.content, "echo: ping");
  t.is(primary.requests.length, 3);
  t.is(secondary.requests.length, 0);
});

test.serial("429 honours Retry-After before retrying", async (t) => {
  primary.enqueue({ status: 429, retryAfter: "1" });
  const started = Date.now();
  await ask("m/x");
  t.true(Date.now() - started >= 950, "waited for Retry-After");
  t.is(primary.requests.length, 2);
});

test.serial("after the retries run out the next route by priority serves", async (t) => {
  primary.set({ status: 500 });
  const completion = await ask("m/x");
  t.is(primary.requests.length, 3);
  t.is(secondary.requests.length, 1);
  t.is(completion.model, "m/x");
});

test.serial("a refused connection falls back to the next route", async (t) => {
  const completion = await ask("d/x");
  t.is(completion.choices[0]!.message.content, "echo: ping");
  t.is(secondary.requests.length, 1);
});

test.serial("a slow first byte times out, is retried, and then the next route serves", async (t) => {
  primary.set({ firstByteDelayMs: 3000 });
  await ask("t/x");
  t.is(primary.requests.length, 3, "the first attempt and two retries, each cut at 400 ms");
  t.is(secondary.requests.length, 1);
});

test.serial("every upstream failing gives 502 (or 504 for timeouts) in the gateway's envelope", async (t) => {
  primary.set({ status: 502 });
  const error = await t.throwsAsync(ask("solo/x"), { instanceOf: OpenAI.APIError });
  t.is(error!.status, 502);
  t.is((error as InstanceType<typeof OpenAI.APIError>).code, "upstream_unavailable");
  primary.set({ firstByteDelayMs: 3000 });
  const timeout = await t.throwsAsync(ask("tsolo/x"), { instanceOf: OpenAI.APIError });
  t.is(timeout!.status, 504, timeout!.message);
  t.is((timeout as InstanceType<typeof OpenAI.APIError>).code, "upstream_timeout");
});

test.serial("upstream secrets never appear in error bodies", async (t) => {
  primary.set({ status: 401 });
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "solo/x", messages: [{ role: "user", content: "x" }] }),
  });
  t.is(response.status, 502);
  const text = await response.text();
  t.false(text.includes("k1"));
  t.regex(text, /apiKey/);
});

test.serial("no retry after the first byte: a stream dropped midway ends with an error event", async (t) => {
  primary.enqueue({ dropAfterChunks: 2 });
  const stream = await client().chat.completions.create({ model: "m/x", stream: true, messages: [{ role: "user", content: "a b c d e f" }] });
  const received: string[] = [];
  await t.throwsAsync(async () => {
    for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? "");
  });
  t.true(received.join("").startsWith("echo:"));
  t.is(primary.requests.length, 1);
  t.is(secondary.requests.length, 0, "never falls back after the first byte");
});

test.serial("an upstream that goes quiet mid-stream hits the idle timeout: error event, no fallback", async (t) => {
  primary.enqueue({ chunkDelayMs: 5000 });
  const stream = await client().chat.completions.create({ model: "t/x", stream: true, messages: [{ role: "user", content: "a b c" }] });
  // The role chunk arrives at once, then the upstream says nothing for 5 s (idle timeout 400 ms):
  // the stream failing at all shows the idle timeout ended it (the upstream would have finished it).
  const error = await t.throwsAsync(async () => {
    for await (const _chunk of stream) {
      // drain
    }
  });
  t.is(primary.requests.length, 1, "no retry after the first byte");
  t.regex(String(error?.message), /stream|upstream/i);
  t.is(secondary.requests.length, 0);
});

test.serial("a stream dropped before its first chunk is retried", async (t) => {
  primary.enqueue({ dropConnection: true });
  const stream = await client().chat.completions.create({ model: "m/x", stream: true, messages: [{ role: "user", content: "a" }] });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  t.is(text, "echo: a");
  t.is(primary.requests.length, 2);
});

test.serial("a client that disconnects aborts the upstream call and is billed what was produced", async (t) => {
  primary.enqueue({ chunkDelayMs: 100 });
  const abortedBefore = primary.aborted();
  const logLinesBefore = quietLogger.lines.length;
  const controller = new AbortController();
  const stream = await client().chat.completions.create(
    { model: "m/x", stream: true, messages: [{ role: "user", content: "one two three four five six seven eight nine ten" }] },
    { signal: controller.signal },
  );
  let seen = 0;
  try {
    for await (const _chunk of stream) {
      seen += 1;
      if (seen === 2) {
        controller.abort();
        break;
      }
    }
  } catch {
    // the SDK may raise its abort error; either way the connection is gone
  }
  await eventually(() => primary.aborted() !== abortedBefore, "the upstream to see the stream go away");
  t.is(primary.aborted(), abortedBefore + 1);
  t.is(primary.activeStreams(), 0);
  const rows = UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date()));
  const row = rows.find((candidate) => candidate.model === "m/x" && candidate.units.completion_tokens! < 10 && candidate.units.completion_tokens! > 0);
  t.truthy(row, "a usage row for the partial stream");
  t.deepEqual(quietLogger.lines.slice(logLinesBefore), [], "a client going away is not logged as a server error");
});

test.serial("a client that disconnects before the first byte aborts the upstream call", async (t) => {
  primary.enqueue({ firstByteDelayMs: 300 });
  const abortedBefore = primary.aborted();
  const controller = new AbortController();
  const asking = client().chat.completions.create({ model: "solo/x", messages: [{ role: "user", content: "slow" }] }, { signal: controller.signal });
  await eventually(() => primary.requests.length > 0, "the call to reach the upstream");
  controller.abort();
  await t.throwsAsync(asking);
  await eventually(() => primary.aborted() !== abortedBefore, "the upstream to see the call go away");
  t.is(primary.aborted(), abortedBefore + 1, "the upstream saw the call go away");
  t.is(primary.requests.length, 1, "and it was not retried");
});

test.serial("one keep-alive connection serving many calls, failures included, leaves no abort listener behind", async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on("warning", onWarning);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const localPorts = new Set<number>();
  const call = (body: object) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(
        `${gateway.v1}/chat/completions`,
        { method: "POST", agent, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } },
        (response) => {
          localPorts.add(response.socket.localPort!);
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => (text += chunk));
          response.on("end", () => resolve({ status: response.statusCode!, text }));
        },
      );
      request.on("error", reject);
      request.end(JSON.stringify(body));
    });
  try {
    const statuses: number[] = [];
    for (let round = 0; round < 6; round++) {
      statuses.push((await call({ model: "m/x", messages: [{ role: "user", content: "plain" }] })).status);
      const streamed = await call({ model: "m/x", stream: true, messages: [{ role: "user", content: "streamed" }] });
      t.true(streamed.text.endsWith("data: [DONE]\n\n"));
      primary.enqueue({ status: 400 });
      statuses.push((await call({ model: "m/x", messages: [{ role: "user", content: "bad value" }] })).status);
      primary.enqueue({ status: 500 });
      statuses.push((await call({ model: "m/x", messages: [{ role: "user", content: "retried" }] })).status);
      statuses.push((await call({ model: "d/x", messages: [{ role: "user", content: "refused, then fallback" }] })).status);
      primary.enqueue({ status: 500 }, { status: 500 }, { status: 500 });
      secondary.enqueue({ status: 503 }, { status: 503 }, { status: 503 });
      statuses.push((await call({ model: "m/x", messages: [{ role: "user", content: "all fail" }] })).status);
    }
    t.deepEqual(statuses, Array.from({ length: 6 }, () => [200, 400, 200, 200, 502]).flat());
    t.is(localPorts.size, 1, "every call went over the same connection");
    await new Promise((resolve) => setImmediate(resolve));
    t.deepEqual(
      warnings.filter((warning) => /listener/i.test(warning)),
      [],
    );
  } finally {
    process.off("warning", onWarning);
    agent.destroy();
  }
});

test.serial("a burst of parallel requests cannot overspend the balance", async (t) => {
  const home = await makeHome((config) => {
    config.providers = { primary: { type: "openai", baseUrl: primary.url, apiKey: "k1" } };
    config.routes = [{ prefix: "m/", provider: "primary", priority: 1 }];
    config.models = [{ id: "m/priced", name: "Priced", context_length: 1000, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }];
    config.plans = { pro: { monthlyCredits: 100_000 } };
  });
  const local = await startTestGateway(home);
  try {
    const localKey = await addKey(home, "burst", "pro");
    primary.set({ firstByteDelayMs: 50, usage: { prompt_tokens: 10, completion_tokens: 10 } });
    // Each request reserves (prompt estimate + max_tokens 20) x 1000 credits/token and really costs 20,000.
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () =>
        new OpenAI({ baseURL: local.v1, apiKey: localKey, maxRetries: 0 }).chat.completions.create({
          model: "m/priced",
          max_tokens: 20,
          messages: [{ role: "user", content: "x" }],
        }),
      ),
    );
    const ok = results.filter((result) => result.status === "fulfilled").length;
    const refused = results.filter((result) => result.status === "rejected");
    t.true(ok >= 1 && ok <= 5, `${ok} succeeded`);
    t.true(refused.every((result) => (result as PromiseRejectedResult).reason.status === 402));
    t.true(refused.every((result) => (result as PromiseRejectedResult).reason.code === "insufficient_credits"));
    const used = (await local.gateway.ledger.planBalance((await local.gateway.store.data.agents.find((agent) => agent.name === "burst"))!.id, 0)).used;
    t.true(used <= 100_000, `used ${used}`);
    t.is(primary.requests.length, ok, "refused requests never reached the upstream");
  } finally {
    await local.shutdown();
  }
});

test.serial("no credits left: 402 before any upstream call", async (t) => {
  const home = await makeHome((config) => {
    config.providers = { primary: { type: "openai", baseUrl: primary.url, apiKey: "k1" } };
    config.routes = [{ prefix: "m/", provider: "primary", priority: 1 }];
    config.plans = { pro: { monthlyCredits: 0 } };
  });
  const local = await startTestGateway(home);
  try {
    const localKey = await addKey(home, "broke", "pro");
    const error = await t.throwsAsync(
      new OpenAI({ baseURL: local.v1, apiKey: localKey, maxRetries: 0 }).chat.completions.create({ model: "m/x", messages: [{ role: "user", content: "x" }] }),
    );
    t.is((error as InstanceType<typeof OpenAI.APIError>).status, 402);
    t.is((error as InstanceType<typeof OpenAI.APIError>).code, "insufficient_credits");
    t.is(primary.requests.length, 0);
  } finally {
    await local.shutdown();
  }
});

test.serial("rate limit per key: 429 rate_limit_exceeded with Retry-After", async (t) => {
  const home = await makeHome((config) => {
    config.providers = { primary: { type: "openai", baseUrl: primary.url, apiKey: "k1" } };
    config.routes = [{ prefix: "m/", provider: "primary", priority: 1 }];
    config.plans = { pro: { requestsPerMinute: 3 } };
  });
  const local = await startTestGateway(home);
  try {
    const localKey = await addKey(home, "limited", "pro");
    const otherKey = await addKey(home, "other", "pro");
    const send = (apiKey: string) =>
      fetch(`${local.v1}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "m/x", messages: [{ role: "user", content: "x" }] }),
      });
    const statuses = [];
    for (let index = 0; index < 4; index += 1) statuses.push((await send(localKey)).status);
    t.deepEqual(statuses, [200, 200, 200, 429]);
    const limited = await send(localKey);
    t.is(limited.status, 429);
    t.true(Number(limited.headers.get("retry-after")) >= 1);
    t.is(((await limited.json()) as { error: { code: string } }).error.code, "rate_limit_exceeded");
    t.is((await send(otherKey)).status, 200, "limits are per key");
  } finally {
    await local.shutdown();
  }
});
