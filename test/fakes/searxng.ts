/**
 * Fake SearXNG instance (reference search.md §3), on 127.0.0.1 port 0; `url` is its origin, or
 * origin + `basePath` when one is given (an instance under a path).
 *  - GET/POST /search (or /) with q and format: format=json answers {query, number_of_results: 0,
 *    results, answers: [], corrections: [], infoboxes: [], suggestions: [], unresponsive_engines}
 *    with the configured results (default SEARXNG_RESULTS, dated by `publishedDate` or null);
 *    no format (or html) answers an HTML page; a format not in `formats` (default html, json)
 *    is 403 with an HTML body, as SearXNG does; format=json without q is 400.
 *  - `allEnginesUnresponsive`: 200 with no results and every engine in unresponsive_engines.
 *  - `bearer`: an authenticating proxy in front, requiring `Authorization: Bearer <bearer>` (401).
 */
import type http from "node:http";
import { type CommonBehaviour, type Exchange, type FakeServer, interrupted, queryOf, sendJson, startFakeServer } from "./audio-fake-server.js";

export interface SearxngResultInput {
  title: string;
  url: string;
  content?: string;
  engine?: string;
  publishedDate?: string | null;
  [field: string]: unknown;
}

export interface SearxngBehaviour extends CommonBehaviour {
  results?: SearxngResultInput[]; // default SEARXNG_RESULTS
  unresponsiveEngines?: Array<[string, string]>; // sent as unresponsive_engines (default [])
  allEnginesUnresponsive?: boolean; // 200, no results, unresponsive_engines = unresponsiveEngines ?? SEARXNG_DEAD_ENGINES
  status?: number; // non-200: answer this status with errorBody (default a short HTML page)
  errorBody?: string;
  retryAfter?: string; // Retry-After on error answers
  malformed?: true | string; // a 200 that is no answer: JSON without results; a string is the body as it is
}

export interface FakeSearxngOptions extends SearxngBehaviour {
  formats?: string[]; // settings.yml search.formats (default ["html", "json"]); leave json out for the 403
  bearer?: string; // when set, `Authorization: Bearer <bearer>` is required (401 otherwise)
  basePath?: string; // the instance served under a path (`/searx`)
}

export interface RecordedSearxngRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  query: Record<string, string>;
}

export type FakeSearxng = FakeServer<SearxngBehaviour, RecordedSearxngRequest>;

export const SEARXNG_RESULTS: SearxngResultInput[] = [
  {
    title: "Async in Rust",
    url: "https://example.test/rust-async",
    content: "An introduction to async &amp; await …",
    engine: "duckduckgo",
    engines: ["duckduckgo", "brave"],
    publishedDate: "2025-12-31T23:00:00",
  },
  { title: "Rust async book", url: "https://example.test/async-book", content: "Futures and executors.", engine: "brave", publishedDate: null },
  { title: "Tokio", url: "https://example.test/tokio", content: "An asynchronous runtime for Rust.", engine: "duckduckgo", publishedDate: null },
  { title: "async-std", url: "https://example.test/async-std", content: "Async version of the Rust standard library.", engine: "brave" },
];

export const SEARXNG_DEAD_ENGINES: Array<[string, string]> = [
  ["google", "timeout"],
  ["duckduckgo", "CAPTCHA"],
  ["brave", "too many requests"],
];

const page = (title: string) => `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`;

export function startFakeSearxng(options: FakeSearxngOptions = {}): Promise<FakeSearxng> {
  const { formats = ["html", "json"], bearer, basePath = "", ...initial } = options;
  const prefix = basePath.replace(/\/+$/, "");

  async function handle(exchange: Exchange<SearxngBehaviour>, requests: RecordedSearxngRequest[]): Promise<void> {
    const { request, response, url, behaviour } = exchange;
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const query = queryOf(url);
    if (request.method === "POST") Object.assign(query, Object.fromEntries(new URLSearchParams(exchange.body.toString("utf8"))));
    requests.push({ method: request.method ?? "GET", path, headers: { ...request.headers }, query });
    if (await interrupted(exchange)) return;
    if (bearer !== undefined && request.headers.authorization !== `Bearer ${bearer}`) {
      response.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" });
      response.end("401 Unauthorized");
      return;
    }
    const local = path.startsWith(prefix) ? path.slice(prefix.length) || "/" : undefined;
    if ((local !== "/search" && local !== "/") || !["GET", "POST"].includes(request.method ?? "")) {
      sendHtml(response, 404, page("Page not found"));
      return;
    }
    const format = query.format ?? "html";
    if (!formats.includes(format)) {
      sendHtml(response, 403, page("403 Forbidden"));
      return;
    }
    if (format !== "json") {
      sendHtml(response, 200, page(query.q ? `${query.q} - SearXNG` : "SearXNG"));
      return;
    }
    if (!query.q) {
      sendJson(response, 400, { error: "No query" });
      return;
    }
    if (behaviour.status !== undefined && behaviour.status !== 200) {
      const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
      sendHtml(response, behaviour.status, behaviour.errorBody ?? page(`${behaviour.status} error`), headers);
      return;
    }
    if (behaviour.malformed !== undefined) {
      sendJson(response, 200, behaviour.malformed === true ? { query: query.q, number_of_results: 0 } : behaviour.malformed);
      return;
    }
    const results = behaviour.allEnginesUnresponsive ? [] : (behaviour.results ?? SEARXNG_RESULTS);
    const unresponsive = behaviour.allEnginesUnresponsive ? (behaviour.unresponsiveEngines ?? SEARXNG_DEAD_ENGINES) : (behaviour.unresponsiveEngines ?? []);
    sendJson(response, 200, {
      query: query.q,
      number_of_results: 0,
      results: results.map((result, index) => ({ engines: [result.engine ?? "duckduckgo"], positions: [index + 1], score: 1, category: "general", ...result })),
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [],
      unresponsive_engines: unresponsive,
    });
  }

  return startFakeServer(initial, prefix, handle, (response, error) => sendHtml(response, 500, page(`fake crashed: ${String(error)}`)));
}

function sendHtml(response: http.ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "text/html; charset=utf-8", "content-length": String(Buffer.byteLength(html)), ...headers });
  response.end(html);
}
