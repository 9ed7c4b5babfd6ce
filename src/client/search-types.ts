// Shapes of POST /v1/search as the client sends and reads it, derived from the gateway's request
// schema (`z.input`) and answer types (type imports only: erased, so the client never loads the
// gateway; docs/decisions.md §1). A server change the client does not follow fails tsc.
import type { z } from "zod";
import type { SearchResponseBody, SearchResultItem as ServerSearchResultItem, searchRequestSchema } from "../gateway/search/search-service.js";

/** POST /v1/search: the query (1 to 500 characters) and how many results (1 to 20; the gateway's default 10 when left out). */
export type SearchRequest = z.input<typeof searchRequestSchema>;

/** One result: the page's title, address and a snippet of its text; `publishedDate` ("YYYY-MM-DD") when the vendor gives one. */
export type SearchResultItem = ServerSearchResultItem;

/** POST /v1/search's 200 answer: `{success: true, data: {query, provider, results}}`. */
export type SearchBody = SearchResponseBody;
