/**
 * Fake Brave Search API (reference search.md §1), on 127.0.0.1 port 0; `url` is its origin.
 *  - GET (or POST) /res/v1/web/search?q=&count=&text_decorations=: {type: "search", query, web:
 *    {type: "search", results}} with the first `count` (default 20, 1-20) of the configured
 *    results (default BRAVE_RESULTS: one with `page_age`, one with only `age`, one undated);
 *    `<strong>` highlights are removed from descriptions when text_decorations=false, entities kept.
 *    An empty result list answers without a `web` section, as Brave does.
 *  - Checks like Brave: a missing X-Subscription-Token is 422 VALIDATION (loc header), a wrong one
 *    422 SUBSCRIPTION_TOKEN_INVALID, a missing q or a count outside 1-20 422 VALIDATION; errors in
 *    Brave's ErrorResponse shape.
 */
import type http from "node:http";
import { type CommonBehaviour, type Exchange, type FakeServer, interrupted, queryOf, sendJson, startFakeServer } from "./audio-fake-server.js";
import { type AnswerPacing, sendPaced } from "./paced-answers.js";

export interface BraveResultInput {
  title: string;
  url: string;
  description?: string;
  age?: string;
  page_age?: string;
  [field: string]: unknown;
}

export interface BraveBehaviour extends CommonBehaviour {
  results?: BraveResultInput[]; // default BRAVE_RESULTS
  status?: number; // non-200: answer a Brave error with this status (after auth and validation)
  errorBody?: unknown; // override the error body (a string is sent as it is)
  retryAfter?: string; // Retry-After on error answers
  malformed?: true | string; // a 200 that is no answer: `web` without a results list; a string is the body as it is
  pacing?: AnswerPacing; // the 200 written paced (paced-answers.ts), padded where a result holds PAD_MARKER
}

export interface FakeBraveOptions extends BraveBehaviour {
  apiKey?: string; // when set, `X-Subscription-Token: <apiKey>` is required; otherwise any non-empty token
}

export interface RecordedBraveRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  query: Record<string, string>;
  /** A POST's JSON body. */
  json?: any;
}

export type FakeBrave = FakeServer<BraveBehaviour, RecordedBraveRequest>;

export const BRAVE_RESULTS: BraveResultInput[] = [
  {
    title: "Async in Rust &amp; Tokio",
    url: "https://example.test/rust-async",
    description: "An introduction to <strong>async</strong> &amp; await in Rust&#x27;s standard library.",
    age: "January 2, 2026",
    page_age: "2026-01-02T08:15:00",
  },
  {
    title: "Rust async book",
    url: "https://example.test/async-book",
    description: "Futures, executors and <strong>async</strong> functions, explained.",
    age: "2 days ago",
  },
  { title: "The Rust language", url: "https://example.test/rust", description: "A language empowering everyone." },
];

class BraveError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(JSON.stringify(body));
  }
}

export function braveErrorBody(status: number, code: string, detail: string, meta: Record<string, unknown> = {}): unknown {
  return { type: "ErrorResponse", error: { id: "5d832250-6e0a-4c4b-9c1d-0f7e0c5b1a11", status, code, detail, meta }, time: 1663072993 };
}

const validation = (loc: string[], msg: string) =>
  new BraveError(422, braveErrorBody(422, "VALIDATION", "Unable to validate request parameter(s)", { errors: [{ type: "missing", loc, msg }] }));

export function startFakeBrave(options: FakeBraveOptions = {}): Promise<FakeBrave> {
  const { apiKey, ...initial } = options;

  async function handle(exchange: Exchange<BraveBehaviour>, requests: RecordedBraveRequest[]): Promise<void> {
    const { request, response, url, behaviour } = exchange;
    const path = url.pathname.replace(/\/+$/, "");
    const recorded: RecordedBraveRequest = { method: request.method ?? "GET", path, headers: { ...request.headers }, query: queryOf(url) };
    if (request.method === "POST" && exchange.body.length > 0) {
      try {
        recorded.json = JSON.parse(exchange.body.toString("utf8"));
      } catch {
        recorded.json = exchange.body.toString("utf8");
      }
    }
    requests.push(recorded);
    if (await interrupted(exchange)) return;
    try {
      if (path !== "/res/v1/web/search" || !["GET", "POST"].includes(request.method ?? "")) {
        throw new BraveError(404, braveErrorBody(404, "RESOURCE_NOT_FOUND", "Resource not found."));
      }
      const token = request.headers["x-subscription-token"];
      if (typeof token !== "string" || token === "") throw validation(["header", "x-subscription-token"], "Field required");
      if (apiKey !== undefined && token !== apiKey) {
        throw new BraveError(
          422,
          braveErrorBody(422, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.", { component: "authentication" }),
        );
      }
      const params = { ...recorded.query, ...(typeof recorded.json === "object" && recorded.json ? recorded.json : {}) };
      const q = params.q === undefined ? "" : String(params.q);
      if (q === "") throw validation(["query", "q"], "Field required");
      const count = params.count === undefined ? 20 : Number(params.count);
      if (!Number.isInteger(count) || count < 1 || count > 20) throw validation(["query", "count"], "Input should be less than or equal to 20");
      if (behaviour.status !== undefined && behaviour.status !== 200) {
        const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
        sendJson(response, behaviour.status, behaviour.errorBody ?? errorForStatus(behaviour.status), headers);
        return;
      }
      if (behaviour.malformed !== undefined) {
        sendJson(response, 200, behaviour.malformed === true ? { type: "search", web: { type: "search", results: { none: true } } } : behaviour.malformed);
        return;
      }
      const plain = String(params.text_decorations) === "false" || params.text_decorations === false;
      const results = (behaviour.results ?? BRAVE_RESULTS).slice(0, count).map((result) => ({
        type: "search_result",
        language: "en",
        ...result,
        ...(plain && typeof result.description === "string" ? { description: result.description.replace(/<\/?strong>/g, "") } : {}),
      }));
      const answer: Record<string, unknown> = { type: "search", query: { original: q, altered: null, more_results_available: false } };
      if (results.length > 0) answer.web = { type: "search", results, family_friendly: true };
      if (behaviour.pacing) return await sendPaced(response, "application/json", JSON.stringify(answer), behaviour.pacing);
      sendJson(response, 200, answer);
    } catch (error) {
      if (!(error instanceof BraveError)) throw error;
      sendJson(response, error.status, error.body);
    }
  }

  return startFakeServer(initial, "", handle, (response, error) =>
    sendJson(response, 500, braveErrorBody(500, "INTERNAL_ERROR", `fake crashed: ${String(error)}`)),
  );
}

function errorForStatus(status: number): unknown {
  if (status === 429) return braveErrorBody(429, "RATE_LIMITED", "Request rate limit exceeded for plan.", { plan: "Free", rate_limit: 1, rate_current: 2 });
  if (status === 422) return braveErrorBody(422, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.", { component: "authentication" });
  if (status >= 500) return braveErrorBody(status, "INTERNAL_ERROR", "An internal error occurred.");
  return braveErrorBody(status, "BAD_REQUEST", `Request failed with status ${status} (fake upstream).`);
}
