// A self-hosted SearXNG's JSON API (https://docs.searxng.org/dev/search_api.html): GET {baseUrl}/search?q=&format=json.
// No count parameter: the page it gives is cut to maxResults. A 200 with no results and every
// engine listed as unresponsive is a failure, not an empty answer. An optional key is sent as a
// Bearer token, for instances behind an authenticating proxy.

import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { searchHit } from "../search-text.js";
import type { SearchCapability, SearchHit } from "../search-types.js";
import { readAs } from "../upstream-schema.js";
import { SearxngResults, SearxngSearchAnswer } from "./searxng-api.js";
import { searxngRequest } from "./searxng-request.js";

export function createSearxngSearch(context: ProviderContext): SearchCapability {
  const vendor = searxngRequest(context);

  return {
    async search({ query, maxResults }, { signal }) {
      const params = new URLSearchParams({ q: query, format: "json" });
      const response = await vendor.send({ method: "GET", path: `/search?${params}`, answer: "search", signal });
      return {
        results: convertFromSearxngResults(context.name, await vendor.readJson(response, signal)).slice(0, Math.max(1, Math.floor(maxResults))),
      };
    },
  };
}

export function convertFromSearxngResults(provider: string, body: unknown): SearchHit[] {
  const answer = readAs(SearxngSearchAnswer, body);
  if (!answer) throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no results list");
  const hits = (readAs(SearxngResults, answer.results) ?? []).flatMap(
    (item) => searchHit({ url: item.url, title: item.title, snippet: item.content, published: item.publishedDate }) ?? [],
  );
  if (hits.length === 0) {
    const unresponsive = unresponsiveEngines(answer.unresponsive_engines);
    if (unresponsive.length > 0) {
      throw new UpstreamNetworkError(provider, "invalid_response", `no results: every engine SearXNG asked was unresponsive: ${unresponsive.join(", ")}`);
    }
  }
  return hits;
}

/** `[["google", "timeout"], ...]` -> `google (timeout)`. */
function unresponsiveEngines(list: readonly unknown[] | undefined): string[] {
  return (list ?? []).map((entry) => {
    if (Array.isArray(entry)) {
      const [engine, error] = entry.map((part) => (part === null || part === undefined ? "" : String(part)));
      return error ? `${engine} (${error})` : String(engine);
    }
    return String(entry);
  });
}
