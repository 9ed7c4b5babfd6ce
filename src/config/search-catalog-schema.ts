// The web search models in the config's catalog (docs/decisions.md §9): per provider mode, its
// provider and its price per answered search in credits. The built-in entries are below; a
// config that lists `catalog.search` replaces them as a whole.
import { z } from "zod";
import { catalogEntryFields, uniqueIds } from "./catalog-entry-fields.js";

export const searchModelSchema = z
  .object({
    ...catalogEntryFields("a search model id is <provider>/<mode>", true),
    /** Credits (micro-dollars) per answered search. */
    pricing: z.object({ perRequest: z.number().int().nonnegative() }).strict(),
  })
  .strict();

export const searchModelListSchema = uniqueIds(searchModelSchema, "search");

export type SearchModelInput = z.input<typeof searchModelSchema>;
export type SearchModelEntry = z.output<typeof searchModelSchema>;

export const DEFAULT_SEARCH_MODEL_INPUTS: SearchModelInput[] = [
  { id: "brave/web", provider: "brave", model: "web", name: "Brave Search", description: "Brave's independent web index.", pricing: { perRequest: 5000 } },
  {
    id: "tavily/basic",
    provider: "tavily",
    model: "basic",
    name: "Tavily (basic)",
    description: "Search built for agents; snippets extracted from each page.",
    pricing: { perRequest: 8000 },
  },
  { id: "tavily/advanced", provider: "tavily", model: "advanced", name: "Tavily (advanced)", freeTier: false, pricing: { perRequest: 16000 } },
  {
    id: "searxng/web",
    provider: "searxng",
    model: "web",
    name: "SearXNG (self-hosted)",
    description: "Your own SearXNG instance's JSON API: free, results from the engines it asks.",
    pricing: { perRequest: 0 },
  },
];
