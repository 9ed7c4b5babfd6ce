// The web search endpoint for the client, on GwClient's transport; `client.search` is one built
// with the client's key.
import { GwApiError, isRecord } from "./gw-api-error.js";
import type { HttpTransport } from "./http-transport.js";
import type { SearchBody, SearchRequest } from "./search-types.js";

export interface SearchCallOptions {
  signal?: AbortSignal;
}

export class SearchClient {
  constructor(private readonly transport: HttpTransport) {}

  /**
   * POST /v1/search: the query and `max_results` go as given; the gateway checks them (and says
   * what it takes), so the client holds no copy of its limits.
   */
  async search(request: SearchRequest, options: SearchCallOptions = {}): Promise<SearchBody> {
    const answer = await this.transport.json<unknown>("/v1/search", { json: request, signal: options.signal });
    if (!isRecord(answer) || !isRecord(answer.data) || !Array.isArray(answer.data.results))
      throw new GwApiError("unexpected search answer from the gateway: no `data.results`", 200, undefined, undefined, undefined, answer);
    return answer as unknown as SearchBody;
  }
}
