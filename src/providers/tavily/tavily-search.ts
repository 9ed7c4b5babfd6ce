// Tavily's search (https://docs.tavily.com/api-reference/endpoint/search): POST /search {query, max_results, search_depth} with
// `Authorization: Bearer tvly-...`; the catalog's model is the search depth (basic, advanced).

import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { searchHit } from "../search-text.js";
import type { SearchAnswer, SearchCapability } from "../search-types.js";
import { readAs } from "../upstream-schema.js";
import { TavilyResults, TavilySearchAnswer } from "./tavily-api.js";
import { tavilyRequest } from "./tavily-request.js";

/** Tavily gives at most 20 results. */
export const TAVILY_MAX_RESULTS = 20;

export function createTavilySearch(context: ProviderContext): SearchCapability {
  const vendor = tavilyRequest(context);

  return {
    async search({ model, query, maxResults }, { signal }) {
      const count = Math.max(1, Math.min(TAVILY_MAX_RESULTS, Math.floor(maxResults)));
      const json = { query, max_results: count, search_depth: model };
      const response = await vendor.send({ path: "/search", json, answer: "search", signal });
      const answer = convertFromTavilyResults(context.name, await vendor.readJson(response, signal));
      answer.results = answer.results.slice(0, count);
      return answer;
    },
  };
}

export function convertFromTavilyResults(provider: string, body: unknown): SearchAnswer {
  const answer = readAs(TavilySearchAnswer, body);
  if (!answer) throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no results list");
  const results = (readAs(TavilyResults, answer.results) ?? []).flatMap(
    (item) => searchHit({ url: item.url, title: item.title, snippet: item.content, published: item.published_date }) ?? [],
  );
  return answer.request_id ? { results, upstreamRequestId: answer.request_id } : { results };
}
