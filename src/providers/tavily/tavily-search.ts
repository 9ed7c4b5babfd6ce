// Tavily's search (https://docs.tavily.com/api-reference/endpoint/search): POST /search {query, max_results, search_depth} with
// `Authorization: Bearer tvly-...`; the catalog's model is the search depth (basic, advanced).

import { upstreamTarget } from "../../net/upstream-http.js";
import { isObject } from "../openai-message-parts.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { plainText, presentString, sendSearch } from "../search-text.js";
import type { SearchAnswer, SearchCapability, SearchHit } from "../search-types.js";
import { readRedactedJson } from "../sse.js";
import { fromTavilyHttpError } from "./tavily-error.js";

/** Tavily gives at most 20 results. */
export const TAVILY_MAX_RESULTS = 20;

export function createTavilySearch(context: ProviderContext): SearchCapability {
  const { origin, path: basePath } = upstreamTarget((context.config.baseUrl ?? "https://api.tavily.com").replace(/\/+$/, ""));
  const target = { origin, path: `${basePath.replace(/\/+$/, "")}/search` };
  const headers: Record<string, string> = {};
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  return {
    async search({ model, query, maxResults }, { signal }) {
      const count = Math.max(1, Math.min(TAVILY_MAX_RESULTS, Math.floor(maxResults)));
      const json = { query, max_results: count, search_depth: model };
      const response = await sendSearch(context, { method: "POST", target, headers, json, signal, mapError: fromTavilyHttpError });
      const answer = convertFromTavilyResults(context.name, await readRedactedJson(context, response, signal));
      answer.results = answer.results.slice(0, count);
      return answer;
    },
  };
}

export function convertFromTavilyResults(provider: string, body: unknown): SearchAnswer {
  if (!isObject(body) || !Array.isArray(body.results)) throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no results list");
  const results: SearchHit[] = [];
  for (const item of body.results) {
    if (!isObject(item)) continue;
    const url = presentString(item.url);
    if (!url) continue;
    const hit: SearchHit = { title: plainText(presentString(item.title) ?? url), url, snippet: plainText(presentString(item.content) ?? "") };
    const published = presentString(item.published_date);
    if (published) hit.published = published;
    results.push(hit);
  }
  const requestId = presentString(body.request_id);
  return requestId ? { results, upstreamRequestId: requestId } : { results };
}
