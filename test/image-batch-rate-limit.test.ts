// A batch meets the gateway's per-key rate limit: the client keeps the 429's Retry-After, and a
// batch line waits that long and is sent again instead of failing.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import test from "ava";
import { sendRespectingRateLimit } from "../src/cli/batch-runner.js";
import { GwApiError } from "../src/client/gw-api-error.js";
import { GwClient } from "../src/client/gw-client.js";
import type { ImageResultBody } from "../src/client/image-types.js";

const answer: ImageResultBody = { id: "req_1", created: 1, model: "m", data: [], timing: { total_ms: 1, upstream_ms: 1 } } as unknown as ImageResultBody;

function limited(seconds: number): GwApiError {
  const error = new GwApiError("Rate limit exceeded", 429, "rate_limit_error", "rate_limit_exceeded");
  error.retryAfterSeconds = seconds;
  return error;
}

test("the client reads Retry-After from a 429 into the error", async (t) => {
  const server = createServer((_request, response) => {
    response.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
    response.end(JSON.stringify({ error: { message: "Rate limit exceeded: 60 requests per minute.", type: "rate_limit_error", code: "rate_limit_exceeded" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const client = new GwClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: "gw_x" });
    const error = await t.throwsAsync(client.generateImages({ prompt: "x" }), { instanceOf: GwApiError });
    t.is(error.status, 429);
    t.is(error.code, "rate_limit_exceeded");
    t.is(error.retryAfterSeconds, 7);
  } finally {
    server.close();
  }
});

test("a rate-limited line waits the Retry-After and is sent again", async (t) => {
  let calls = 0;
  const started = Date.now();
  const result = await sendRespectingRateLimit(async () => {
    calls += 1;
    if (calls === 1) throw limited(1);
    return answer;
  }, undefined);
  t.is(result, answer);
  t.is(calls, 2);
  t.true(Date.now() - started >= 900, "it waited about the second the gateway asked for");
});

test("other errors, waits over a minute and an interrupted batch are not retried", async (t) => {
  let calls = 0;
  await t.throwsAsync(
    sendRespectingRateLimit(async () => {
      calls += 1;
      throw new GwApiError("bad", 400, "invalid_request_error", "invalid_parameter");
    }, undefined),
  );
  t.is(calls, 1);
  await t.throwsAsync(
    sendRespectingRateLimit(async () => {
      calls += 1;
      throw limited(3600);
    }, undefined),
    { message: "Rate limit exceeded" },
  );
  t.is(calls, 2);
  const interrupted = new AbortController();
  interrupted.abort();
  await t.throwsAsync(
    sendRespectingRateLimit(async () => {
      calls += 1;
      throw limited(1);
    }, interrupted.signal),
  );
  t.is(calls, 3);
});
