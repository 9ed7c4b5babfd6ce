// A provider that keeps failing stops receiving attempts: its circuit opens after N consecutive
// failures (requests go straight to the next route, or get a 503 naming it), one probe goes
// through after the cool-down (half-open), and a success closes it. And a request's attempts
// share one deadline, however many retries the settings allow.
import test from "ava";
import OpenAI from "openai";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { eventually } from "../helpers/eventually.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";
import { startUpstreamGate, type UpstreamGate } from "../helpers/upstream-gate.js";

const COOL_DOWN_MS = 10_000;

let flaky: FakeOpenAI;
/** Between the gateway and `flaky`: holds the half-open probe at the upstream for as long as the test needs. */
let flakyGate: UpstreamGate;
let steady: FakeOpenAI;
let gateway: TestGateway;
let key: string;
/** The breakers' clock: moved by hand. */
let now = 0;

test.before(async () => {
  flaky = await startFakeOpenAI();
  steady = await startFakeOpenAI();
  flakyGate = await startUpstreamGate(flaky.url);
  const home = await makeHome((config) => {
    config.upstream = { retries: 1, retryBaseDelayMs: 1, breakerFailureThreshold: 4, breakerCooldownMs: COOL_DOWN_MS };
    config.providers = {
      flaky: { type: "openai", baseUrl: flakyGate.url, apiKey: "sk-flaky" },
      steady: { type: "openai", baseUrl: steady.url, apiKey: "sk-steady" },
    };
    config.routes = [
      { prefix: "solo/", provider: "flaky", priority: 1 },
      { prefix: "pair/", provider: "flaky", priority: 10 },
      { prefix: "pair/", provider: "steady", priority: 1 },
    ];
  });
  gateway = await startTestGateway(home, { clock: () => now });
  key = await addKey(home, "breaker", "max");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await flakyGate?.close();
  await flaky?.close();
  await steady?.close();
});

async function ask(
  model: string,
): Promise<{ status: number; body: { error?: { code: string; message: string; provider?: string } }; retryAfter: string | null }> {
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: "user", content: "ping" }] }),
  });
  return {
    status: response.status,
    body: (await response.json()) as { error?: { code: string; message: string } },
    retryAfter: response.headers.get("retry-after"),
  };
}

const logged = (pattern: RegExp) => quietLogger.lines.some((line) => pattern.test(line));

test.serial("open after 4 consecutive failures, half-open after the cool-down with one probe, closed by its success", async (t) => {
  flaky.set({ status: 500 });
  // Two requests, two attempts each (retries: 1): four failures.
  t.is((await ask("solo/x")).status, 502);
  t.is((await ask("solo/x")).status, 502);
  t.is(flaky.requests.length, 4);
  t.true(logged(/circuit open for provider flaky: 4 consecutive failed attempts \(last: HTTP 500\)/));

  // Open: not called at all; 503 naming it, with when to come back.
  const skipped = await ask("solo/x");
  t.is(skipped.status, 503);
  t.is(skipped.body.error!.code, "upstream_circuit_open");
  t.is(skipped.body.error!.provider, "flaky");
  t.regex(skipped.body.error!.message, /flaky is failing/);
  t.is(skipped.retryAfter, "10");
  t.is(flaky.requests.length, 4);

  // With another route, requests go straight to it.
  const served = await ask("pair/x");
  t.is(served.status, 200);
  t.is(flaky.requests.length, 4);
  t.is(steady.requests.length, 1);

  // After the cool-down one probe goes through; while it is out, others do not.
  now += COOL_DOWN_MS + 1;
  flaky.set({});
  // The second request goes while the probe is held on its way to the upstream, however slow the machine.
  flakyGate.holdAll();
  const probing = ask("solo/x");
  await eventually(() => flakyGate.held() === 1, "the probe to reach the upstream");
  const meanwhile = await ask("solo/x");
  flakyGate.release();
  const probe = await probing;
  t.is(probe.status, 200);
  t.is(meanwhile.status, 503);
  t.is(flaky.requests.length, 5, "exactly one probe");
  t.true(logged(/circuit half-open for provider flaky/));
  t.true(logged(/circuit closed for provider flaky/));

  // Closed: every request goes through again.
  flaky.set({});
  t.is((await ask("solo/x")).status, 200);
  t.is(flaky.requests.length, 6);
});

test.serial("a probe that fails opens the circuit for another cool-down", async (t) => {
  flaky.reset();
  flaky.set({ status: 503 });
  await ask("solo/x");
  await ask("solo/x");
  t.is((await ask("solo/x")).status, 503, "open");
  now += COOL_DOWN_MS + 1;
  t.is((await ask("solo/x")).status, 502, "the probe was tried and failed");
  t.is(flaky.requests.length, 5, "the probe is one attempt: no retry on a half-open circuit");
  const after = await ask("solo/x");
  t.is(after.status, 503);
  t.is(flaky.requests.length, 5);
  t.true(logged(/circuit open for provider flaky: the probe failed \(HTTP 503\)/));
  flaky.set({});
  now += COOL_DOWN_MS + 1;
  t.is((await ask("solo/x")).status, 200);
});

test.serial("a request's attempts share one deadline: 3 attempts of a 3 s first-byte timeout end at the total's 1 s", async (t) => {
  const slow = await startFakeOpenAI({ firstByteDelayMs: 5000 });
  const home = await makeHome((config) => {
    config.upstream = { retries: 2, retryBaseDelayMs: 1, firstByteTimeoutMs: 3000, totalTimeoutMs: 1000, breakerFailureThreshold: 0 };
    config.providers = { slow: { type: "openai", baseUrl: slow.url, apiKey: "sk-slow" } };
    config.routes = [{ prefix: "slow/", provider: "slow", priority: 1 }];
  });
  const local = await startTestGateway(home);
  try {
    const localKey = await addKey(home, "patient", "max");
    const client = new OpenAI({ baseURL: local.v1, apiKey: localKey, maxRetries: 0, timeout: 30_000 });
    for (const stream of [false, true]) {
      const error = (await t.throwsAsync(
        client.chat.completions.create({ model: "slow/x", stream, messages: [{ role: "user", content: "hi" }] }),
      )) as InstanceType<typeof OpenAI.APIError>;
      t.is(error.status, 504);
      t.is(error.code, "upstream_timeout");
      // The total's deadline, not an attempt's 3 s first-byte timeout, ended it (the message names which).
      t.regex(error.message, /total time of 1000 ms/);
    }
  } finally {
    await local.shutdown();
    await slow.close();
  }
});
