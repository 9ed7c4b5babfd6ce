// Brave Search's web search (https://api-dashboard.search.brave.com/api-reference/web/search/get): GET /res/v1/web/search?q=&count=, the key in
// `X-Subscription-Token`, results from `web.results` (no `web` section = no results).

import { upstreamTarget } from "../../net/upstream-http.js";
import { isObject } from "../openai-message-parts.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { plainText, presentString, sendSearch } from "../search-text.js";
import type { SearchCapability, SearchHit } from "../search-types.js";
import { readRedactedJson } from "../sse.js";
import { fromBraveHttpError } from "./brave-error.js";

/** Brave gives at most 20 results a page. */
export const BRAVE_MAX_COUNT = 20;

export function createBraveSearch(context: ProviderContext): SearchCapability {
  // The API origin; a base URL ending in /res/v1 works too.
  const { origin, path: basePath } = upstreamTarget((context.config.baseUrl ?? "https://api.search.brave.com").replace(/\/+$/, "").replace(/\/res\/v1$/, ""));
  const prefix = basePath.replace(/\/+$/, "");
  const headers: Record<string, string> = {};
  if (context.config.apiKey) headers["x-subscription-token"] = context.config.apiKey;

  return {
    async search({ query, maxResults }, { signal }) {
      const count = Math.max(1, Math.min(BRAVE_MAX_COUNT, Math.floor(maxResults)));
      const params = new URLSearchParams({ q: query, count: String(count), text_decorations: "false" });
      const target = { origin, path: `${prefix}/res/v1/web/search?${params}` };
      const response = await sendSearch(context, { method: "GET", target, headers, signal, mapError: fromBraveHttpError });
      return { results: convertFromBraveResults(context.name, await readRedactedJson(context, response, signal)).slice(0, count) };
    },
  };
}

export function convertFromBraveResults(provider: string, body: unknown): SearchHit[] {
  if (!isObject(body)) throw new UpstreamNetworkError(provider, "invalid_response", "the answer is not a JSON object");
  if (body.type === "ErrorResponse") throw new UpstreamNetworkError(provider, "invalid_response", "the answer is an error body with a 2xx status");
  if (body.web === undefined || body.web === null) return [];
  if (!isObject(body.web) || !Array.isArray(body.web.results))
    throw new UpstreamNetworkError(provider, "invalid_response", "the answer's web section has no results list");
  const hits: SearchHit[] = [];
  for (const item of body.web.results) {
    if (!isObject(item)) continue;
    const url = presentString(item.url);
    if (!url) continue;
    const hit: SearchHit = { title: plainText(presentString(item.title) ?? url), url, snippet: plainText(presentString(item.description) ?? "") };
    const published = presentString(item.page_age) ?? presentString(item.age);
    if (published) hit.published = published;
    hits.push(hit);
  }
  return hits;
}
