// Smaller ways the server answered otherwise than it should (docs/decisions.md §2, §5, §10, §12):
// a multipart form with too many parts is 413 (its size, not its shape); during the SIGTERM drain a
// new request is answered 503 with Retry-After and Connection: close instead of finding the port
// closed, while the stream in flight finishes; a signed link with a parameter given twice is
// refused like an altered one; model names a client makes up do not become metric series; and a
// rate-limited answer tells one wait, the time until the request would be admitted, in its
// Retry-After and its message alike.
import test from "ava";
import { answer, storageApi } from "../_storage.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";

let fake: FakeOpenAI;
let gateway: TestGateway;
let home: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-fake" } };
    config.routes = [
      { prefix: "m/", provider: "fake" },
      { prefix: "auto", upstreams: [{ provider: "fake", model: "gpt-4o-mini" }] },
    ];
    config.models = [{ id: "m/known", name: "Known", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000 }, max: {} };
  });
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

test.after("nothing failed inside the gateway", (t) => {
  t.deepEqual(
    quietLogger.lines.filter((line) => line.startsWith("error")),
    [],
  );
});

function chat(server: TestGateway, key: string, model: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${server.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: "user", content: "hello" }], ...extra }),
  });
}

test.serial("a multipart form with more fields than the endpoint reads is 413 too_many_parts, on storage and on transcription", async (t) => {
  const key = await addKey(home, "parts", "pro");
  const storageForm = new FormData();
  for (let index = 0; index < 17; index += 1) storageForm.append(`field${index}`, "x");
  storageForm.append("file", new Blob(["bytes"], { type: "text/plain" }), "a.txt");
  const storage = await storageApi(gateway, key).call("/v1/storage/upload", { method: "POST", body: storageForm });
  t.is(storage.status, 413, storage.text);
  t.deepEqual(storage.body, { message: "The form has too many fields (at most 16)." });

  const transcriptionForm = new FormData();
  for (let index = 0; index < 41; index += 1) transcriptionForm.append(`field${index}`, "x");
  const transcription = await answer(
    await fetch(`${gateway.v1}/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: transcriptionForm }),
  );
  t.is(transcription.status, 413, transcription.text);
  t.is(transcription.body.error.code, "too_many_parts");
  t.is(transcription.body.error.type, "invalid_request_error");
});

test.serial("a signed link with a parameter given twice is 403 like an altered one, a second expires never extends it", async (t) => {
  const storage = storageApi(gateway, await addKey(home, "links", "pro"));
  const file = (await storage.upload("signed.txt", "signed bytes", "text/plain")).body.data;
  const link = (await storage.url(file.id)).body.data.url as string;
  t.is((await fetch(link)).status, 200);
  const later = String(Math.floor(Date.now() / 1000) + 86_400);
  const variants: Array<[string, (url: URL) => void]> = [
    ["expires appended", (url) => url.searchParams.append("expires", later)],
    ["expires prepended", (url) => (url.search = `?expires=${later}&${url.search.slice(1)}`)],
    ["the same expires twice", (url) => url.searchParams.append("expires", url.searchParams.get("expires")!)],
    ["signature twice", (url) => url.searchParams.append("signature", url.searchParams.get("signature")!)],
    ["size twice", (url) => url.searchParams.append("size", url.searchParams.get("size")!)],
    ["type twice", (url) => url.searchParams.append("type", "text/html")],
  ];
  for (const [label, alter] of variants) {
    const url = new URL(link);
    alter(url);
    const refused = await answer(await fetch(url));
    t.is(refused.status, 403, label);
    t.deepEqual(refused.body, { message: "This link is not valid: it is incomplete or was altered." }, label);
  }
});

test.serial("metrics: model names a client makes up count as one `other` series; configured models and auto's choices keep their names", async (t) => {
  const key = await addKey(home, "labels", "pro");
  const madeUp = Array.from({ length: 200 }, (_, index) => `m/made-up-${index}`);
  for (let start = 0; start < madeUp.length; start += 20) {
    const answers = await Promise.all(madeUp.slice(start, start + 20).map((model) => chat(gateway, key, model)));
    t.deepEqual(
      answers.map((response) => response.status),
      answers.map(() => 200),
    );
  }
  t.is((await chat(gateway, key, "m/known")).status, 200);
  t.is((await chat(gateway, key, "auto")).status, 200);
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const modelsOf = (metric: string) => new Set([...text.matchAll(new RegExp(`^${metric}\\{[^}]*model="([^"]*)"`, "gm"))].map((match) => match[1]));
  for (const metric of ["gw_credits_total", "gw_tokens_total"]) {
    // `auto` is billed as the model it chose, which its route names.
    t.deepEqual([...modelsOf(metric)].sort(), ["fake/gpt-4o-mini", "m/known", "other"], metric);
  }
  const otherCredits = Number(/^gw_credits_total\{model="other",plan="pro"\} (\d+)/m.exec(text)?.[1]);
  t.true(otherCredits > 0, "the made-up models' credits are counted, under `other`");
});

test.serial("a rate-limited answer tells one wait: Retry-After and the message are the time until the request would be admitted", async (t) => {
  // One request a minute and 100 tokens a minute. The first call spends 120 tokens: its key has
  // then used both limits; tokens come back in about 13 s, the next request in about 60 s.
  // (A call counts at most what it held: max_tokens 100 makes room for the 100 output tokens.)
  const key = await addKey(home, "clock", "pro", { rpm: 1, tpm: 100 });
  fake.enqueue({ usage: { prompt_tokens: 20, completion_tokens: 100 } });
  t.is((await chat(gateway, key, "m/known", { max_tokens: 100 })).status, 200);
  const refused = await answer(await chat(gateway, key, "m/known"));
  t.is(refused.status, 429, refused.text);
  const retryAfter = Number(refused.headers.get("retry-after"));
  t.true(Number.isInteger(retryAfter) && retryAfter > 0);
  t.true(refused.body.error.message.includes(`retry in ${retryAfter} s`), refused.body.error.message);
  t.regex(refused.body.error.message, /1 requests per minute/, "the limit that holds the request longest is named");
  // With one request a minute, "until the request bucket is full" is "until one request is
  // admitted": the reset header and Retry-After are the same wait, one rounded up to seconds.
  t.is(refused.headers.get("x-ratelimit-remaining-requests"), "0");
  t.is(retryAfter, Math.ceil(seconds(refused.headers.get("x-ratelimit-reset-requests")!)));
});

test.serial("several requests a minute: a 429 says Retry-After until the next one, x-ratelimit-reset-requests until all are back", async (t) => {
  const key = await addKey(home, "clock-two", "pro", { rpm: 2 });
  t.is((await chat(gateway, key, "m/known")).status, 200);
  t.is((await chat(gateway, key, "m/known")).status, 200);
  const refused = await answer(await chat(gateway, key, "m/known"));
  t.is(refused.status, 429);
  const retryAfter = Number(refused.headers.get("retry-after"));
  t.true(refused.body.error.message.includes(`retry in ${retryAfter} s`), refused.body.error.message);
  // One request comes back every 30 s: the next one is admitted 30 s before the bucket is full.
  const fullInMs = seconds(refused.headers.get("x-ratelimit-reset-requests")!) * 1000;
  const nextInMs = fullInMs - 30_000;
  t.is(retryAfter, Math.ceil(nextInMs / 1000));
});

/** OpenAI's durations ("20ms", "1.5s", "6m0s") in seconds. */
function seconds(duration: string): number {
  const match = /^(?:(\d+)m)?(?:([\d.]+)s)?(?:(\d+)ms)?$/.exec(duration);
  if (!match) throw new Error(`not a duration: ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0) + Number(match[3] ?? 0) / 1000;
}

test.serial("SIGTERM: while the stream in flight drains, a new request is 503 with Retry-After and Connection: close; then the server stops", async (t) => {
  const drainingHome = await makeHome((config) => {
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-fake" } };
    config.routes = [{ prefix: "m/", provider: "fake" }];
  });
  const key = await addKey(drainingHome, "drain", "pro");
  const server = await startTestGateway(drainingHome);
  fake.enqueue({ holdAfterEvents: 2 });
  const stream = await chat(server, key, "m/x", { stream: true });
  t.is(stream.status, 200);
  const reader = stream.body!.getReader();
  await reader.read(); // the stream is under way
  const stopped = server.shutdown();

  for (const [path, init] of [
    ["/health", {}],
    ["/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: "{}" }],
  ] as const) {
    const refused = await answer(await fetch(`${server.url}${path}`, init));
    t.is(refused.status, 503, path);
    t.is(refused.body.error.code, "server_shutting_down", path);
    t.is(refused.body.error.type, "server_error", path);
    t.is(refused.headers.get("connection"), "close", path);
    const retryAfter = Number(refused.headers.get("retry-after"));
    t.true(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30, `${path}: Retry-After ${retryAfter}`);
    t.true(refused.body.error.message.includes(`retry in ${retryAfter} s`), path);
    t.truthy(refused.headers.get("x-request-id"), path);
  }
  const storage = await answer(await fetch(`${server.url}/v1/storage/quota`, { headers: { authorization: `Bearer ${key}` } }));
  t.is(storage.status, 503);
  t.deepEqual(Object.keys(storage.body), ["message"], "the storage dialect");

  fake.releaseHeld();
  let text = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
  t.true(text.trimEnd().endsWith("data: [DONE]"), "the stream in flight finished");
  await stopped;
  await t.throwsAsync(fetch(`${server.url}/health`), undefined, "once drained, the server no longer listens");
});
