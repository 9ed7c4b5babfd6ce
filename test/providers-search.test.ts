// The search capability of the brave, tavily and searxng provider types, through the registry and
// the real UpstreamHttp, against fakes of each vendor: what went upstream (auth, params), what came
// back (plain snippets, raw dates, maxResults) and every failure (status kept, key never shown).

import type { ExecutionContext } from "ava";
import test from "ava";
import { type UpstreamSettings, upstreamSchema } from "../src/config/config-schema.js";
import { DEFAULT_SEARCH_MODEL_INPUTS } from "../src/config/search-catalog-schema.js";
import { secretRedactor } from "../src/net/secret-redaction.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { Provider, ProviderContext } from "../src/providers/provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { plainText } from "../src/providers/search-text.js";
import type { SearchCapability } from "../src/providers/search-types.js";
import { SEARXNG_JSON_DISABLED } from "../src/providers/searxng/searxng-error.js";
import { braveErrorBody, startFakeBrave } from "./fakes/brave.js";
import { startFakeSearxng } from "./fakes/searxng.js";
import { startFakeTavily } from "./fakes/tavily.js";

const BRAVE_KEY = "BSA-brave-test-key-0123456789";
const TAVILY_KEY = "tvly-test-key-0123456789abcdef";
const PROXY_KEY = "searx-proxy-key-0123456789";
const http = new UpstreamHttp();
const settings: UpstreamSettings = { ...upstreamSchema.parse({}), retries: 0 };
const options = () => ({ signal: new AbortController().signal });

test.after.always(() => http.close());

function providerOf(type: string, baseUrl: string | undefined, apiKey: string | undefined, upstream = settings): Provider {
  const config: ProviderContext["config"] = { type };
  if (baseUrl !== undefined) config.baseUrl = baseUrl;
  if (apiKey !== undefined) config.apiKey = apiKey;
  return providerTypes.get(type)!.create({ name: type, config, upstream, http, redact: secretRedactor([apiKey]), warn: () => {} });
}

async function brave(t: ExecutionContext, apiKey = BRAVE_KEY) {
  const fake = await startFakeBrave({ apiKey: BRAVE_KEY });
  t.teardown(() => fake.close());
  return { fake, search: providerOf("brave", fake.url, apiKey).search! };
}

async function tavily(t: ExecutionContext, apiKey = TAVILY_KEY) {
  const fake = await startFakeTavily({ apiKey: TAVILY_KEY });
  t.teardown(() => fake.close());
  return { fake, search: providerOf("tavily", fake.url, apiKey).search! };
}

async function searxng(t: ExecutionContext, fakeOptions: Parameters<typeof startFakeSearxng>[0] = {}, apiKey?: string) {
  const fake = await startFakeSearxng(fakeOptions);
  t.teardown(() => fake.close());
  return { fake, search: providerOf("searxng", fake.url, apiKey).search! };
}

/** The error's every text a caller or the log could see. */
function errorText(error: Error): string {
  if (!(error instanceof UpstreamHttpError)) return error.message;
  return [error.message, error.body, error.vendorBody ?? "", JSON.stringify(error.request ?? {})].join("\n");
}

function envelopeOf(error: UpstreamHttpError): { message: string; type: string; param: string | null; code: string | null } {
  return JSON.parse(error.body).error;
}

async function httpError(t: ExecutionContext, search: SearchCapability, model = "web", key?: string): Promise<UpstreamHttpError> {
  const error = await t.throwsAsync(search.search({ model, query: "rust async", maxResults: 5 }, options()), { instanceOf: UpstreamHttpError });
  t.is(error.contentType, "application/json");
  if (key) t.false(errorText(error).includes(key), "the key never shows");
  return error;
}

test("registry: brave, tavily and searxng search and nothing else; the catalog names them", (t) => {
  for (const type of ["brave", "tavily", "searxng"]) {
    t.deepEqual(providerTypes.get(type)!.capabilities, ["search"]);
    const provider = providerOf(type, "https://search.example.test", "key-0123456789");
    t.is(provider.type, type);
    t.is(typeof provider.search!.search, "function");
    t.is(provider.chat, undefined);
  }
  t.deepEqual(new Set(DEFAULT_SEARCH_MODEL_INPUTS.map((model) => model.provider)), new Set(["brave", "tavily", "searxng"]));
});

test("plainText: tags stripped, entities decoded, whitespace collapsed, a lone < kept", (t) => {
  t.is(
    plainText("An <strong>async</strong> &amp; await in Rust&#x27;s <b>std</b>&#39;s\n  lib &lt;T&gt; &nbsp;x"),
    "An async & await in Rust's std's lib <T> x",
  );
  t.is(plainText("a < b and c > d"), "a < b and c > d");
  t.is(plainText("&bogus; &#0;"), "&bogus; &#0;");
});

// ---- Brave ----

test("brave: GET /res/v1/web/search with q, count, text_decorations=false and the subscription token", async (t) => {
  const { fake, search } = await brave(t);
  const answer = await search.search({ model: "web", query: "rust async & await", maxResults: 7 }, options());
  const sent = fake.requests[0]!;
  t.is(sent.method, "GET");
  t.is(sent.path, "/res/v1/web/search");
  t.deepEqual(sent.query, { q: "rust async & await", count: "7", text_decorations: "false" });
  t.is(sent.headers["x-subscription-token"], BRAVE_KEY);
  t.is(sent.headers.accept, "application/json");
  t.is(sent.headers.authorization, undefined);
  t.deepEqual(answer, {
    results: [
      {
        title: "Async in Rust & Tokio",
        url: "https://example.test/rust-async",
        snippet: "An introduction to async & await in Rust's standard library.",
        published: "2026-01-02T08:15:00",
      },
      {
        title: "Rust async book",
        url: "https://example.test/async-book",
        snippet: "Futures, executors and async functions, explained.",
        published: "2 days ago",
      },
      { title: "The Rust language", url: "https://example.test/rust", snippet: "A language empowering everyone." },
    ],
  });
});

test("brave: tags stripped even when Brave sends them; count capped at 20 and results at maxResults", async (t) => {
  const { fake, search } = await brave(t);
  const many = Array.from({ length: 25 }, (_, index) => ({
    title: `<b>Result</b> ${index}`,
    url: `https://example.test/${index}`,
    description: `<strong>hit</strong>&nbsp;${index}`,
  }));
  fake.set({ results: many });
  const twenty = await search.search({ model: "web", query: "q", maxResults: 40 }, options());
  t.is(fake.requests[0]!.query.count, "20");
  t.is(twenty.results.length, 20);
  t.deepEqual(twenty.results[3], { title: "Result 3", url: "https://example.test/3", snippet: "hit 3" });
  const two = await search.search({ model: "web", query: "q", maxResults: 2 }, options());
  t.is(fake.requests[1]!.query.count, "2");
  t.is(two.results.length, 2);
});

test("brave: no web section is no results; results without a url are skipped", async (t) => {
  const { fake, search } = await brave(t);
  fake.set({ results: [] });
  t.deepEqual(await search.search({ model: "web", query: "nothing", maxResults: 5 }, options()), { results: [] });
  fake.set({ results: [{ title: "no url" } as any, { title: "", url: "https://example.test/untitled", page_age: "" }] });
  t.deepEqual((await search.search({ model: "web", query: "q", maxResults: 5 }, options())).results, [
    { title: "https://example.test/untitled", url: "https://example.test/untitled", snippet: "" },
  ]);
});

test("brave: a wrong token is Brave's 422 SUBSCRIPTION_TOKEN_INVALID, kept as 422 with a plain message", async (t) => {
  const wrong = "BSA-wrong-key-9876543210";
  const { search } = await brave(t, wrong);
  const error = await httpError(t, search, "web", wrong);
  t.is(error.status, 422);
  t.deepEqual(envelopeOf(error), {
    message: "the Brave subscription token is invalid",
    type: "authentication_error",
    param: null,
    code: "SUBSCRIPTION_TOKEN_INVALID",
  });
  t.is(JSON.parse(error.vendorBody!).type, "ErrorResponse");
});

test("brave: no token is 422 VALIDATION naming the header", async (t) => {
  const fake = await startFakeBrave({ apiKey: BRAVE_KEY });
  t.teardown(() => fake.close());
  const error = await httpError(t, providerOf("brave", fake.url, undefined).search!);
  t.is(error.status, 422);
  t.is(fake.requests[0]!.headers["x-subscription-token"], undefined);
  t.deepEqual(envelopeOf(error), {
    message: "the Brave subscription token is missing",
    type: "authentication_error",
    param: "x-subscription-token",
    code: "VALIDATION",
  });
});

test("brave: 429 keeps the status and Retry-After; 5xx and other bodies are enveloped; an echoed key is redacted", async (t) => {
  const { fake, search } = await brave(t);
  fake.enqueue(
    { status: 429, retryAfter: "3" },
    { status: 503 },
    { status: 400, errorBody: braveErrorBody(400, "VALIDATION", `bad token ${BRAVE_KEY}`, { errors: [{ loc: ["query", "count"], msg: "too big" }] }) },
    { status: 502, errorBody: "<html>bad gateway</html>" },
  );
  const limited = await httpError(t, search, "web", BRAVE_KEY);
  t.is(limited.status, 429);
  t.is(limited.retryAfterMs, 3000);
  t.like(envelopeOf(limited), { type: "rate_limit_error", code: "RATE_LIMITED" });
  t.true(envelopeOf(limited).message.startsWith("Brave Search rate limit or quota reached"));
  const down = await httpError(t, search, "web", BRAVE_KEY);
  t.is(down.status, 503);
  t.like(envelopeOf(down), { type: "server_error", code: "INTERNAL_ERROR", message: "An internal error occurred." });
  const bad = await httpError(t, search, "web", BRAVE_KEY);
  t.is(bad.status, 400);
  t.deepEqual(envelopeOf(bad), { message: "bad token [REDACTED]; count: too big", type: "invalid_request_error", param: "count", code: "VALIDATION" });
  const html = await httpError(t, search, "web", BRAVE_KEY);
  t.deepEqual(envelopeOf(html), { message: "Brave Search answered HTTP 502.", type: "server_error", param: null, code: "http_502" });
});

test("brave: a malformed 200 is invalid_response", async (t) => {
  const { fake, search } = await brave(t);
  fake.enqueue({ malformed: true }, { malformed: "not json" }, { malformed: JSON.stringify([1, 2]) });
  for (let index = 0; index < 3; index += 1) {
    const error = await t.throwsAsync(search.search({ model: "web", query: "q", maxResults: 5 }, options()), { instanceOf: UpstreamNetworkError });
    t.is(error.failure, "invalid_response");
  }
});

test("brave: a slow answer past the first-byte timeout is first_byte_timeout; a dropped connection is connection_lost", async (t) => {
  const fake = await startFakeBrave({ apiKey: BRAVE_KEY });
  t.teardown(() => fake.close());
  const search = providerOf("brave", fake.url, BRAVE_KEY, { ...settings, firstByteTimeoutMs: 300 }).search!;
  fake.enqueue({ firstByteDelayMs: 3000 }, { dropConnection: true });
  const slow = await t.throwsAsync(search.search({ model: "web", query: "q", maxResults: 5 }, options()), { instanceOf: UpstreamNetworkError });
  t.is(slow.failure, "first_byte_timeout");
  const dropped = await t.throwsAsync(search.search({ model: "web", query: "q", maxResults: 5 }, options()), { instanceOf: UpstreamNetworkError });
  t.is(dropped.failure, "connection_lost");
});

test("brave: a base URL with /res/v1 and a path prefix works", async (t) => {
  const fake = await startFakeBrave({ apiKey: BRAVE_KEY });
  t.teardown(() => fake.close());
  await providerOf("brave", `${fake.url}/res/v1/`, BRAVE_KEY).search!.search({ model: "web", query: "q", maxResults: 1 }, options());
  t.is(fake.requests[0]!.path, "/res/v1/web/search");
});

// ---- Tavily ----

test("tavily: POST /search {query, max_results, search_depth: model} with the Bearer key; content -> snippet; request_id kept", async (t) => {
  const { fake, search } = await tavily(t);
  const answer = await search.search({ model: "advanced", query: "latest rust release", maxResults: 2 }, options());
  const sent = fake.requests[0]!;
  t.is(sent.method, "POST");
  t.is(sent.path, "/search");
  t.is(sent.headers.authorization, `Bearer ${TAVILY_KEY}`);
  t.is(sent.headers["content-type"], "application/json");
  t.deepEqual(sent.json, { query: "latest rust release", max_results: 2, search_depth: "advanced" });
  t.false(JSON.stringify(sent.json).includes(TAVILY_KEY));
  t.deepEqual(answer, {
    results: [
      {
        title: "Rust 1.99 released",
        url: "https://example.test/rust-1-99",
        snippet: "The Rust team announced Rust 1.99 & its new features.",
        published: "Thu, 01 Jan 2026 10:00:00 GMT",
      },
      { title: "Rust release notes", url: "https://example.test/releases", snippet: "Every Rust release, with what changed." },
    ],
    upstreamRequestId: "tvly_req_1",
  });
});

test("tavily: basic depth, max_results capped at 20, null dates absent, an empty answer", async (t) => {
  const { fake, search } = await tavily(t);
  fake.set({ results: [{ title: "T", url: "https://example.test/t", content: "<b>c</b>", published_date: null }] });
  const answer = await search.search({ model: "basic", query: "q", maxResults: 50 }, options());
  t.deepEqual(fake.requests[0]!.json, { query: "q", max_results: 20, search_depth: "basic" });
  t.deepEqual(answer.results, [{ title: "T", url: "https://example.test/t", snippet: "c" }]);
  fake.set({ results: [] });
  t.deepEqual((await search.search({ model: "basic", query: "q", maxResults: 5 }, options())).results, []);
});

test("tavily: a wrong key is 401 from {detail: {error}}", async (t) => {
  const wrong = "tvly-wrong-key-9876543210";
  const { search } = await tavily(t, wrong);
  const error = await httpError(t, search, "basic", wrong);
  t.is(error.status, 401);
  t.deepEqual(envelopeOf(error), {
    message: "the Tavily API key is missing or invalid: Unauthorized: missing or invalid API key.",
    type: "authentication_error",
    param: null,
    code: "invalid_api_key",
  });
  t.deepEqual(JSON.parse(error.vendorBody!), { detail: { error: "Unauthorized: missing or invalid API key." } });
});

test("tavily: 429 with Retry-After, 432 and 433 limits, 400, 500 and an echoed key, statuses kept", async (t) => {
  const { fake, search } = await tavily(t);
  fake.enqueue(
    { status: 429, retryAfter: "7" },
    { status: 432 },
    { status: 433 },
    { status: 400, errorBody: { detail: { error: `Invalid key ${TAVILY_KEY} in body` } } },
    { status: 500, errorBody: "Internal Server Error" },
  );
  const limited = await httpError(t, search, "basic", TAVILY_KEY);
  t.is(limited.status, 429);
  t.is(limited.retryAfterMs, 7000);
  t.like(envelopeOf(limited), { type: "rate_limit_error", code: "rate_limit_exceeded" });
  const plan = await httpError(t, search, "basic", TAVILY_KEY);
  t.is(plan.status, 432);
  t.like(envelopeOf(plan), { type: "insufficient_quota", code: "plan_limit_exceeded" });
  t.true(envelopeOf(plan).message.startsWith("the Tavily plan's usage limit is exceeded: This request exceeds your plan"));
  const payg = await httpError(t, search, "basic", TAVILY_KEY);
  t.is(payg.status, 433);
  t.like(envelopeOf(payg), { code: "pay_as_you_go_limit_exceeded" });
  const bad = await httpError(t, search, "basic", TAVILY_KEY);
  t.deepEqual(envelopeOf(bad), { message: "Invalid key [REDACTED] in body", type: "invalid_request_error", param: null, code: "http_400" });
  const down = await httpError(t, search, "basic", TAVILY_KEY);
  t.deepEqual(envelopeOf(down), { message: "Tavily answered HTTP 500.", type: "server_error", param: null, code: "http_500" });
});

test("tavily: a search depth Tavily refuses is its 400, message kept", async (t) => {
  const { search } = await tavily(t);
  const error = await httpError(t, search, "deep", TAVILY_KEY);
  t.is(error.status, 400);
  t.true(envelopeOf(error).message.startsWith("Invalid search depth."));
});

test("tavily: a malformed 200 is invalid_response; slowness times out", async (t) => {
  const fake = await startFakeTavily({ apiKey: TAVILY_KEY });
  t.teardown(() => fake.close());
  const search = providerOf("tavily", fake.url, TAVILY_KEY, { ...settings, firstByteTimeoutMs: 300 }).search!;
  fake.enqueue({ malformed: true }, { malformed: "{" }, { firstByteDelayMs: 3000 });
  for (const failure of ["invalid_response", "invalid_response", "first_byte_timeout"] as const) {
    const error = await t.throwsAsync(search.search({ model: "basic", query: "q", maxResults: 5 }, options()), { instanceOf: UpstreamNetworkError });
    t.is(error.failure, failure);
  }
});

// ---- SearXNG ----

test("searxng: GET /search?q&format=json, no auth by default, content -> snippet, publishedDate raw or absent, cut to maxResults", async (t) => {
  const { fake, search } = await searxng(t);
  const answer = await search.search({ model: "web", query: "rust async", maxResults: 3 }, options());
  const sent = fake.requests[0]!;
  t.is(sent.method, "GET");
  t.is(sent.path, "/search");
  t.deepEqual(sent.query, { q: "rust async", format: "json" });
  t.is(sent.headers.authorization, undefined);
  t.is(sent.headers.accept, "application/json");
  t.deepEqual(answer, {
    results: [
      { title: "Async in Rust", url: "https://example.test/rust-async", snippet: "An introduction to async & await …", published: "2025-12-31T23:00:00" },
      { title: "Rust async book", url: "https://example.test/async-book", snippet: "Futures and executors." },
      { title: "Tokio", url: "https://example.test/tokio", snippet: "An asynchronous runtime for Rust." },
    ],
  });
});

test("searxng: an instance under a path, behind a proxy that wants a Bearer key", async (t) => {
  const fake = await startFakeSearxng({ basePath: "/searx", bearer: PROXY_KEY });
  t.teardown(() => fake.close());
  const answer = await providerOf("searxng", `${fake.url}/`, PROXY_KEY).search!.search({ model: "web", query: "q", maxResults: 10 }, options());
  t.is(answer.results.length, 4);
  t.is(fake.requests[0]!.path, "/searx/search");
  t.is(fake.requests[0]!.headers.authorization, `Bearer ${PROXY_KEY}`);
  const refused = await httpError(t, providerOf("searxng", fake.url, "wrong-proxy-key-123").search!, "web", "wrong-proxy-key-123");
  t.is(refused.status, 401);
  t.like(envelopeOf(refused), { type: "authentication_error", code: "unauthorized" });
});

test("searxng: json not in search.formats is 403 with how to fix it", async (t) => {
  const { search } = await searxng(t, { formats: ["html"] });
  const error = await httpError(t, search);
  t.is(error.status, 403);
  t.deepEqual(envelopeOf(error), { message: SEARXNG_JSON_DISABLED, type: "permission_error", param: null, code: "json_format_disabled" });
  t.true(error.vendorBody!.includes("403 Forbidden"));
});

test("searxng: every engine unresponsive with no results is invalid_response naming them; some unresponsive with results is an answer", async (t) => {
  const { fake, search } = await searxng(t);
  fake.enqueue({ allEnginesUnresponsive: true }, { unresponsiveEngines: [["google", "timeout"]] });
  const error = await t.throwsAsync(search.search({ model: "web", query: "q", maxResults: 5 }, options()), { instanceOf: UpstreamNetworkError });
  t.is(error.failure, "invalid_response");
  t.is(error.detail, "no results: every engine SearXNG asked was unresponsive: google (timeout), duckduckgo (CAPTCHA), brave (too many requests)");
  t.is((await search.search({ model: "web", query: "q", maxResults: 5 }, options())).results.length, 4);
});

test("searxng: no results and no unresponsive engines is a real empty answer", async (t) => {
  const { fake, search } = await searxng(t);
  fake.set({ results: [] });
  t.deepEqual(await search.search({ model: "web", query: "q", maxResults: 5 }, options()), { results: [] });
});

test("searxng: 429 from its limiter and 500 keep their status; a malformed 200 and slowness are network errors", async (t) => {
  const fake = await startFakeSearxng();
  t.teardown(() => fake.close());
  const search = providerOf("searxng", fake.url, undefined, { ...settings, firstByteTimeoutMs: 300 }).search!;
  fake.enqueue({ status: 429, retryAfter: "2" }, { status: 500 }, { malformed: true }, { malformed: "<html></html>" }, { firstByteDelayMs: 3000 });
  const limited = await httpError(t, search);
  t.is(limited.status, 429);
  t.is(limited.retryAfterMs, 2000);
  t.like(envelopeOf(limited), { type: "rate_limit_error" });
  const down = await httpError(t, search);
  t.deepEqual(envelopeOf(down), { message: "SearXNG answered HTTP 500.", type: "server_error", param: null, code: "http_500" });
  for (const failure of ["invalid_response", "invalid_response", "first_byte_timeout"] as const) {
    const error = await t.throwsAsync(search.search({ model: "web", query: "q", maxResults: 5 }, options()), { instanceOf: UpstreamNetworkError });
    t.is(error.failure, failure);
  }
});

test("searxng: no baseUrl fails at call time, clearly, without a request", async (t) => {
  const search = providerOf("searxng", undefined, undefined).search!;
  const error = await t.throwsAsync(search.search({ model: "web", query: "q", maxResults: 5 }, options()), { instanceOf: UpstreamNetworkError });
  t.is(error.failure, "connect");
  t.regex(error.detail, /has no baseUrl/);
});
