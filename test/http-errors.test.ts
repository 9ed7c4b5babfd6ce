// Bad input at the HTTP edge: clear 4xx in the documented envelope, never a 500; every
// response carries X-Request-Id.
import test from "ava";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let fake: FakeOpenAI;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.server = { maxJsonBodyBytes: 4096 };
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "x" } };
    config.routes = [{ prefix: "fake/", provider: "fake" }];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "errors", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

async function post(body: BodyInit | null, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, requestId: response.headers.get("x-request-id"), body: JSON.parse(text) as { error: Record<string, string> } };
}

const valid = { model: "fake/x", messages: [{ role: "user", content: "hi" }] };

test.serial("malformed JSON is 400 invalid_json", async (t) => {
  const result = await post('{"model": "fake/x", ');
  t.is(result.status, 400);
  t.is(result.body.error.code, "invalid_json");
  t.is(result.body.error.type, "invalid_request_error");
  t.truthy(result.requestId);
});

test.serial("an empty body is 400 with a clear message", async (t) => {
  const result = await post("");
  t.is(result.status, 400);
  t.regex(result.body.error.message ?? "", /empty/);
});

test.serial("a JSON value that is not an object is 400", async (t) => {
  for (const body of ["[1,2]", '"text"', "null", "42"]) {
    const result = await post(body);
    t.is(result.status, 400, body);
    t.is(result.body.error.code, "invalid_json");
  }
});

test.serial("a non-JSON content type is 415", async (t) => {
  for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
    const result = await post(JSON.stringify(valid), { "content-type": contentType });
    t.is(result.status, 415, contentType);
    t.is(result.body.error.code, "unsupported_media_type");
  }
});

test.serial("an oversized body is 413, by Content-Length and by streamed size", async (t) => {
  const big = JSON.stringify({ ...valid, messages: [{ role: "user", content: "x".repeat(10_000) }] });
  const declared = await post(big);
  t.is(declared.status, 413);
  t.is(declared.body.error.code, "payload_too_large");
  const chunked = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    }),
    duplex: "half",
  } as RequestInit);
  t.is(chunked.status, 413);
});

test.serial("wrong field types are 400 naming the parameter", async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...valid, model: 42 }, "model"],
    [{ messages: valid.messages }, "model"],
    [{ model: "fake/x" }, "messages"],
    [{ ...valid, messages: "hi" }, "messages"],
    [{ ...valid, stream: "yes" }, "stream"],
    [{ ...valid, temperature: "hot" }, "temperature"],
    [{ ...valid, temperature: -0.1 }, "temperature"],
    [{ ...valid, max_tokens: 0 }, "max_tokens"],
    [{ ...valid, max_tokens: 1.5 }, "max_tokens"],
  ];
  for (const [body, param] of cases) {
    const result = await post(JSON.stringify(body));
    t.is(result.status, 400, JSON.stringify(body));
    t.is(result.body.error.param, param);
    t.is(result.body.error.type, "invalid_request_error");
  }
  t.is(fake.requests.length, 0);
});

test.serial("unknown paths are 404 and wrong methods 405, in the envelope, with a request id", async (t) => {
  const missing = await fetch(`${gateway.url}/v1/nothing-here`);
  t.is(missing.status, 404);
  t.is(((await missing.json()) as { error: { code: string } }).error.code, "not_found");
  t.truthy(missing.headers.get("x-request-id"));
  const wrongMethod = await fetch(`${gateway.v1}/chat/completions`);
  t.is(wrongMethod.status, 405);
  t.truthy(wrongMethod.headers.get("x-request-id"));
});

test.serial("the media endpoints, loaded on their first request, answer a wrong method 405 and a right one as before", async (t) => {
  // Several at once: the first requests to a group that is not loaded yet share one load.
  const wrong = await Promise.all(
    [
      ["GET", "/v1/image/generations"],
      ["GET", "/v1/images/edits"],
      ["DELETE", "/v1/audio/speech"],
      ["PUT", "/v1/audio/transcriptions"],
      ["GET", "/v1/vision/ocr"],
      ["POST", "/v1/public/image-models"],
    ].map(([method, path]) => fetch(`${gateway.url}${path}`, { method })),
  );
  for (const response of wrong) {
    t.is(response.status, 405, response.url);
    t.truthy(response.headers.get("x-request-id"));
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    t.is(error.code, "method_not_allowed");
    t.regex(error.message, /is not allowed on \/v1\//);
  }
  const catalog = await fetch(`${gateway.url}/v1/public/image-models`);
  t.is(catalog.status, 200);
  t.true(Array.isArray(((await catalog.json()) as { models: unknown[] }).models));
  const unknown = await fetch(`${gateway.url}/v1/image/nothing`, { method: "POST" });
  t.is(unknown.status, 404);
});

test.serial("every response carries a distinct X-Request-Id", async (t) => {
  const ids = new Set<string>();
  for (const path of ["/health", "/v1/models", "/v1/chat/completions", "/nope"]) {
    const response = await fetch(`${gateway.url}${path}`);
    const id = response.headers.get("x-request-id");
    t.truthy(id, path);
    ids.add(id!);
  }
  const ok = await post(JSON.stringify(valid));
  t.is(ok.status, 200);
  ids.add(ok.requestId!);
  t.is(ids.size, 5);
});
