// The web search endpoint for the client, on GwClient's transport; `client.search` is one built
// with the client's key.
import { answerShape, hasData } from "./answer-shape.js";
import type { HttpTransport } from "./http-transport.js";
import type { SearchBody, SearchRequest } from "./search-types.js";

export interface SearchCallOptions {
  signal?: AbortSignal;
}

const SEARCH = answerShape(
  "search",
  (body): body is SearchBody => hasData(body, (data) => Array.isArray(data.results)),
  "unexpected search answer from the gateway: no `data.results`",
);

export class SearchClient {
  constructor(private readonly transport: HttpTransport) {}

  /**
   * POST /v1/search: the query and `max_results` go as given; the gateway checks them (and says
   * what it takes), so the client holds no copy of its limits.
   */
  async search(request: SearchRequest, options: SearchCallOptions = {}): Promise<SearchBody> {
    return this.transport.json("/v1/search", SEARCH, { json: request, signal: options.signal });
  }
}
