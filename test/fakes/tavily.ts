/**
 * Fake Tavily API (reference search.md §2), on 127.0.0.1 port 0; `url` is its origin.
 *  - POST /search with JSON {query, search_depth (basic|advanced|fast|ultra-fast, default basic),
 *    max_results (0-20, default 5), ...}: {query, answer: null, images: [], results,
 *    response_time, request_id: "tvly_req_<n>"} with the first max_results configured results
 *    (default TAVILY_RESULTS: one with `published_date`, one without).
 *  - Checks like Tavily: `Authorization: Bearer <key>` (or the legacy `api_key` body field), 401
 *    when missing or wrong; 400 for a missing query, a bad depth or max_results. Errors
 *    {detail: {error}}.
 */
import type http from "node:http";
import { type CommonBehaviour, type Exchange, type FakeServer, interrupted, queryOf, sendJson, startFakeServer } from "./audio-fake-server.js";

export interface TavilyResultInput {
  title: string;
  url: string;
  content?: string;
  score?: number;
  published_date?: string | null;
  [field: string]: unknown;
}

export interface TavilyBehaviour extends CommonBehaviour {
  results?: TavilyResultInput[]; // default TAVILY_RESULTS
  status?: number; // non-200: answer a Tavily error with this status (after auth and validation)
  errorBody?: unknown; // override the error body (a string is sent as it is)
  retryAfter?: string; // Retry-After on error answers
  malformed?: true | string; // a 200 that is no answer: no results list; a string is the body as it is
}

export interface FakeTavilyOptions extends TavilyBehaviour {
  apiKey?: string; // when set, that key is required; otherwise any non-empty one
}

export interface RecordedTavilyRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  query: Record<string, string>;
  json?: any;
}

export type FakeTavily = FakeServer<TavilyBehaviour, RecordedTavilyRequest>;

export const TAVILY_RESULTS: TavilyResultInput[] = [
  {
    title: "Rust 1.99 released",
    url: "https://example.test/rust-1-99",
    content: "The Rust team announced Rust 1.99 &amp; its new features.",
    score: 0.87,
    raw_content: null,
    published_date: "Thu, 01 Jan 2026 10:00:00 GMT",
  },
  { title: "Rust release notes", url: "https://example.test/releases", content: "Every Rust release, with what changed.", score: 0.71, raw_content: null },
  { title: "Rust blog", url: "https://example.test/blog", content: "News from the Rust project.", score: 0.52, raw_content: null },
];

const DEPTHS = ["basic", "advanced", "fast", "ultra-fast"];

class TavilyError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(JSON.stringify(body));
  }
}

const failure = (status: number, error: string) => new TavilyError(status, { detail: { error } });

export function startFakeTavily(options: FakeTavilyOptions = {}): Promise<FakeTavily> {
  const { apiKey, ...initial } = options;

  async function handle(exchange: Exchange<TavilyBehaviour>, requests: RecordedTavilyRequest[]): Promise<void> {
    const { request, response, url, behaviour } = exchange;
    const path = url.pathname.replace(/\/+$/, "");
    const recorded: RecordedTavilyRequest = { method: request.method ?? "GET", path, headers: { ...request.headers }, query: queryOf(url) };
    let body: any;
    try {
      body = exchange.body.length > 0 ? JSON.parse(exchange.body.toString("utf8")) : undefined;
      recorded.json = body;
    } catch {
      recorded.json = exchange.body.toString("utf8");
    }
    requests.push(recorded);
    if (await interrupted(exchange)) return;
    try {
      if (path !== "/search" || request.method !== "POST") throw new TavilyError(404, { detail: "Not Found" });
      const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ""))?.[1];
      const key = bearer ?? (typeof body?.api_key === "string" ? body.api_key : undefined);
      if (!key || (apiKey !== undefined && key !== apiKey)) throw failure(401, "Unauthorized: missing or invalid API key.");
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw failure(400, "Invalid JSON body.");
      if (typeof body.query !== "string" || body.query.trim() === "") throw failure(400, "Query is missing.");
      const depth = body.search_depth ?? "basic";
      if (!DEPTHS.includes(depth)) throw failure(400, `Invalid search depth. Must be one of: ${DEPTHS.join(", ")}.`);
      const maxResults = body.max_results ?? 5;
      if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > 20) throw failure(400, "max_results must be between 0 and 20.");
      if (behaviour.status !== undefined && behaviour.status !== 200) {
        const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
        sendJson(response, behaviour.status, behaviour.errorBody ?? errorForStatus(behaviour.status), headers);
        return;
      }
      if (behaviour.malformed !== undefined) {
        sendJson(response, 200, behaviour.malformed === true ? { query: body.query, answer: null, images: [] } : behaviour.malformed);
        return;
      }
      const results = (behaviour.results ?? TAVILY_RESULTS).slice(0, maxResults);
      sendJson(response, 200, { query: body.query, answer: null, images: [], results, response_time: 0.42, request_id: `tvly_req_${exchange.sequence}` });
    } catch (error) {
      if (!(error instanceof TavilyError)) throw error;
      sendJson(response, error.status, error.body);
    }
  }

  return startFakeServer(initial, "", handle, (response, error) => sendJson(response, 500, { detail: { error: `fake crashed: ${String(error)}` } }));
}

function errorForStatus(status: number): unknown {
  if (status === 401) return { detail: { error: "Unauthorized: missing or invalid API key." } };
  if (status === 429) return { detail: { error: "Your request has been blocked due to excessive requests. Please reduce rate of requests." } };
  if (status === 432) return { detail: { error: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com" } };
  if (status === 433) return { detail: { error: "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard." } };
  if (status >= 500) return { detail: { error: "Internal Server Error" } };
  return { detail: { error: `Request failed with status ${status} (fake upstream).` } };
}
