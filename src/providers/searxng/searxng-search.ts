// A self-hosted SearXNG's JSON API (https://docs.searxng.org/dev/search_api.html): GET {baseUrl}/search?q=&format=json.
// No count parameter: the page it gives is cut to maxResults. A 200 with no results and every
// engine listed as unresponsive is a failure, not an empty answer. An optional key is sent as a
// Bearer token, for instances behind an authenticating proxy.

import { upstreamTarget } from "../../net/upstream-http.js";
import { isObject } from "../openai-message-parts.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { plainText, presentString, sendSearch } from "../search-text.js";
import type { SearchCapability, SearchHit } from "../search-types.js";
import { readRedactedJson } from "../sse.js";
import { fromSearxngHttpError } from "./searxng-error.js";

export function createSearxngSearch(context: ProviderContext): SearchCapability {
  // The instance's address, which may have a path (https://example.org/searx); `/search` at its end works too.
  const base = context.config.baseUrl ? upstreamTarget(context.config.baseUrl.replace(/\/+$/, "").replace(/\/search$/, "")) : undefined;
  const headers: Record<string, string> = {};
  if (context.config.apiKey) headers.authorization = `Bearer ${context.config.apiKey}`;

  return {
    async search({ query, maxResults }, { signal }) {
      if (!base) {
        throw new UpstreamNetworkError(
          context.name,
          "connect",
          `the ${context.name} provider (searxng) has no baseUrl: set it to your SearXNG instance's address`,
        );
      }
      const params = new URLSearchParams({ q: query, format: "json" });
      const target = { origin: base.origin, path: `${base.path.replace(/\/+$/, "")}/search?${params}` };
      const response = await sendSearch(context, { method: "GET", target, headers, signal, mapError: fromSearxngHttpError });
      return {
        results: convertFromSearxngResults(context.name, await readRedactedJson(context, response, signal)).slice(0, Math.max(1, Math.floor(maxResults))),
      };
    },
  };
}

export function convertFromSearxngResults(provider: string, body: unknown): SearchHit[] {
  if (!isObject(body) || !Array.isArray(body.results)) throw new UpstreamNetworkError(provider, "invalid_response", "the answer has no results list");
  const hits: SearchHit[] = [];
  for (const item of body.results) {
    if (!isObject(item)) continue;
    const url = presentString(item.url);
    if (!url) continue;
    const hit: SearchHit = { title: plainText(presentString(item.title) ?? url), url, snippet: plainText(presentString(item.content) ?? "") };
    const published = presentString(item.publishedDate);
    if (published) hit.published = published;
    hits.push(hit);
  }
  if (hits.length === 0) {
    const unresponsive = unresponsiveEngines(body.unresponsive_engines);
    if (unresponsive.length > 0) {
      throw new UpstreamNetworkError(provider, "invalid_response", `no results: every engine SearXNG asked was unresponsive: ${unresponsive.join(", ")}`);
    }
  }
  return hits;
}

/** `[["google", "timeout"], ...]` -> `google (timeout)`. */
function unresponsiveEngines(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((entry) => {
    if (Array.isArray(entry)) {
      const [engine, error] = entry.map((part) => (part === null || part === undefined ? "" : String(part)));
      return error ? `${engine} (${error})` : String(engine);
    }
    return String(entry);
  });
}
