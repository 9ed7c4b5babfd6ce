// When no upstream can serve a request, the answer says why for each attempt (connection refused
// to host:port, a DNS failure, a TLS error, no first byte in time, the upstream's status, an
// endpoint the upstream does not have: a bare 404 or 405, on chat and on images), never a secret;
// and the server logs every failed attempt with its provider, cause and request id.

import http from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import { pngFile } from "./fakes/image-files.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const SECRET = "sk-cause-test-0123456789";

let fake: FakeOpenAI;
let bare: http.Server;
let noMethod: http.Server;
let pictures: http.Server;
/** What the images upstream was asked, `METHOD /path`. */
const pictureRequests: string[] = [];
let plain: http.Server;
let deadPort: number;
let gateway: TestGateway;
let key: string;

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

test.before(async () => {
  fake = await startFakeOpenAI();
  // An OpenAI-compatible server without this endpoint behind a proxy: a bare 404 page.
  bare = http.createServer((_request, response) => response.writeHead(404, { "content-type": "text/html" }).end("<html><body>404 Not Found</body></html>"));
  // A server that routes the path but not the method: a bare 405, no body.
  noMethod = http.createServer((_request, response) => response.writeHead(405, { allow: "GET, HEAD" }).end());
  // An OpenAI-compatible image server without edits (a Go-style plain 404) whose generations
  // route takes GET only (a bare 405): neither is an answer about the caller's request.
  pictures = http.createServer((request, response) => {
    request.resume();
    pictureRequests.push(`${request.method} ${request.url}`);
    if (request.url === "/v1/images/generations") return void response.writeHead(405, { allow: "GET" }).end();
    response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("404 page not found\n");
  });
  // Plain HTTP where the config says https: the TLS handshake fails.
  plain = http.createServer((_request, response) => response.end("not tls"));
  const closed = http.createServer();
  deadPort = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
  const barePort = await listen(bare);
  const noMethodPort = await listen(noMethod);
  const picturesPort = await listen(pictures);
  const plainPort = await listen(plain);
  const home = await makeHome((config) => {
    config.upstream = { retries: 1, retryBaseDelayMs: 1, connectTimeoutMs: 2000, breakerFailureThreshold: 0 };
    const provider = (baseUrl: string) => ({ type: "openai", baseUrl, apiKey: SECRET });
    config.providers = {
      refused: provider(`http://127.0.0.1:${deadPort}/v1`),
      nowhere: provider("http://gw-upstream-test.invalid/v1"),
      notls: provider(`https://127.0.0.1:${plainPort}/v1`),
      // Only the provider that is meant to time out has a short first-byte timeout: the others' answers
      // may come slowly on a loaded machine without turning into timeouts.
      slow: { ...provider(fake.url), upstream: { firstByteTimeoutMs: 300 } },
      missing: provider(`http://127.0.0.1:${barePort}/v1`),
      nomethod: provider(`http://127.0.0.1:${noMethodPort}/v1`),
      openai: provider(`http://127.0.0.1:${picturesPort}/v1`),
      enveloped: provider(fake.url),
    };
    config.routes = Object.keys(config.providers).map((name) => ({ prefix: `${name}/`, provider: name, priority: 1 }));
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "causes", "max");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
  bare?.close();
  noMethod?.close();
  pictures?.close();
  plain?.close();
});

test.beforeEach(() => fake.reset());

async function ask(model: string): Promise<{ status: number; requestId: string; error: { message: string; code: string; provider?: string } }> {
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
  });
  const body = (await response.json()) as { error: { message: string; code: string; provider?: string } };
  return { status: response.status, requestId: response.headers.get("x-request-id")!, error: body.error };
}

const cases: Array<{ model: string; status: number; cause: RegExp; attempts?: number; before?: () => void }> = [
  { model: "refused/m", status: 502, cause: /refused: connection refused by 127\.0\.0\.1:\d+/ },
  { model: "nowhere/m", status: 502, cause: /nowhere: DNS lookup failed for gw-upstream-test\.invalid/ },
  { model: "notls/m", status: 502, cause: /notls: TLS error with 127\.0\.0\.1:\d+ \(\w+/ },
  { model: "slow/m", status: 504, cause: /slow: no first byte from 127\.0\.0\.1:\d+ within 300 ms/, before: () => fake.set({ firstByteDelayMs: 2000 }) },
  { model: "enveloped/m", status: 502, cause: /enveloped: HTTP 503/, before: () => fake.set({ status: 503 }) },
  // Retrying an endpoint the upstream does not have is pointless: one attempt, then the next route.
  { model: "missing/m", status: 502, cause: /missing: HTTP 404: the upstream has no POST \/v1\/chat\/completions/, attempts: 1 },
  { model: "nomethod/m", status: 502, cause: /nomethod: HTTP 405: the upstream has no POST \/v1\/chat\/completions/, attempts: 1 },
];

for (const { model, status, cause, attempts = 2, before } of cases) {
  test.serial(`${model}: the answer and the log say the cause of each attempt`, async (t) => {
    before?.();
    const answer = await ask(model);
    t.is(answer.status, status);
    const provider = model.split("/")[0]!;
    t.is(answer.error.provider, provider);
    // Every attempt (retries: 1) is listed with its cause.
    t.is(answer.error.message.match(new RegExp(cause.source, "g"))?.length, attempts, answer.error.message);
    t.false(answer.error.message.includes(SECRET));
    const logged = quietLogger.lines.filter((line) => line.includes(answer.requestId) && line.includes("upstream attempt failed"));
    t.is(logged.length, attempts, logged.join("\n"));
    t.true(logged.every((line) => cause.test(line) && line.includes(`provider ${provider}`) && !line.includes(SECRET)));
  });
}

test.serial("an upstream's own 404 error envelope still passes through as the upstream's answer", async (t) => {
  fake.set({ status: 404 });
  const answer = await ask("enveloped/m");
  t.is(answer.status, 404);
  t.is(answer.error.code, "model_not_found");
  t.is(fake.requests.length, 1, "an answer about the request is not retried");
});

/** POST a JSON body to a gw path; the status, request id and error envelope. */
async function postJson(
  path: string,
  body: unknown,
): Promise<{ status: number; requestId: string; error: { message: string; code: string; provider?: string } }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    requestId: response.headers.get("x-request-id")!,
    error: (JSON.parse(text) as { error: { message: string; code: string } }).error,
  };
}

const picture = `data:image/png;base64,${pngFile(16, 16).toString("base64")}`;

const imageCases: Array<{ path: string; body: unknown; upstream: string; upstreamStatus: number; cause: RegExp }> = [
  {
    path: "/v1/image/edits",
    body: { prompt: "make it blue", images: [picture] },
    upstream: "POST /v1/images/edits",
    upstreamStatus: 404,
    cause: /openai: HTTP 404: the upstream has no POST \/v1\/images\/edits/,
  },
  {
    path: "/v1/images/generations",
    body: { prompt: "a red fox", model: "gpt-image-1" },
    upstream: "POST /v1/images/generations",
    upstreamStatus: 405,
    cause: /openai: HTTP 405: the upstream has no POST \/v1\/images\/generations/,
  },
];

for (const { path, body, upstream, upstreamStatus, cause } of imageCases) {
  test.serial(`${path}: a bare ${upstreamStatus} from the image upstream is a 502 naming the provider and the path it lacks`, async (t) => {
    pictureRequests.length = 0;
    const answer = await postJson(path, body);
    t.is(answer.status, 502, JSON.stringify(answer.error));
    t.is(answer.error.code, "upstream_unavailable");
    t.is(answer.error.provider, "openai");
    t.regex(answer.error.message, cause);
    t.false(answer.error.message.includes(SECRET));
    t.deepEqual(pictureRequests, [upstream], "one attempt: retrying an endpoint the upstream lacks is pointless");
    const logged = quietLogger.lines.filter((line) => line.includes(answer.requestId) && line.includes("upstream attempt failed"));
    t.is(logged.length, 1, logged.join("\n"));
    t.regex(logged[0] ?? "", cause);
  });
}
