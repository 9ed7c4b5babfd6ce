// Brave Search's web search (https://api-dashboard.search.brave.com/api-reference/web/search/get): GET /res/v1/web/search?q=&count=, the key in
// `X-Subscription-Token`, results from `web.results` (no `web` section = no results).

import { isObject } from "../../json/json-values.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { searchHit } from "../search-text.js";
import type { SearchCapability, SearchHit } from "../search-types.js";
import { readAs } from "../upstream-schema.js";
import { BraveResults, BraveSearchAnswer } from "./brave-api.js";
import { braveRequest } from "./brave-request.js";

/** Brave gives at most 20 results a page. */
export const BRAVE_MAX_COUNT = 20;

export function createBraveSearch(context: ProviderContext): SearchCapability {
  const vendor = braveRequest(context);

  return {
    async search({ query, maxResults }, { signal }) {
      const count = Math.max(1, Math.min(BRAVE_MAX_COUNT, Math.floor(maxResults)));
      const params = new URLSearchParams({ q: query, count: String(count), text_decorations: "false" });
      const response = await vendor.send({ method: "GET", path: `/res/v1/web/search?${params}`, answer: "search", signal });
      return { results: convertFromBraveResults(context.name, await vendor.readJson(response, signal)).slice(0, count) };
    },
  };
}

export function convertFromBraveResults(provider: string, body: unknown): SearchHit[] {
  if (!isObject(body)) throw new UpstreamNetworkError(provider, "invalid_response", "the answer is not a JSON object");
  if (body.type === "ErrorResponse") throw new UpstreamNetworkError(provider, "invalid_response", "the answer is an error body with a 2xx status");
  const answer = readAs(BraveSearchAnswer, body);
  if (!answer) throw new UpstreamNetworkError(provider, "invalid_response", "the answer's web section has no results list");
  const results = readAs(BraveResults, answer.web?.results) ?? [];
  return results.flatMap((item) => searchHit({ url: item.url, title: item.title, snippet: item.description, published: item.page_age ?? item.age }) ?? []);
}
