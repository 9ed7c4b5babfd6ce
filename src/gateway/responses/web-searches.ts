// The searches the model asks for through gw_web_search, run by the search service as POST
// /v1/search runs them (the caller's plan, the allowlist, the credit hold, one `search` usage row
// per answered search), and whether a caller is offered the tool at all (docs/decisions.md §19).
import { GatewayError } from "../errors.js";
import type { SearchService } from "../search/search-service.js";
import type { ToolCallContext } from "../upstream-calls/tool-provider-call.js";
import { failedSearchOutcome, noQueryOutcome, SEARCH_RESULTS_PER_CALL, type SearchOutcome, searchResultsOutcome } from "./web-search-tool.js";

export class WebSearches {
  constructor(private readonly search: SearchService) {}

  /** A search model the caller's plan reaches is allowlisted and its provider configured (asked before the model is offered the tool). */
  offeredTo(context: Pick<ToolCallContext, "plan">): boolean {
    return this.search.availableTo(context.plan);
  }

  /**
   * One query's search (undefined: the model's call had none). A search no provider could answer (a 5xx of the search service) is a
   * failed search the model is told of; a refusal for the caller (credits, plan) ends the response.
   */
  async run(query: string | undefined, context: ToolCallContext): Promise<SearchOutcome> {
    if (query === undefined) return noQueryOutcome();
    try {
      const answer = await this.search.search({ query, max_results: SEARCH_RESULTS_PER_CALL }, context);
      return searchResultsOutcome(query, answer.body.data.results);
    } catch (error) {
      if (error instanceof GatewayError && error.status >= 500 && !context.signal.aborted) return failedSearchOutcome(query, error.code);
      throw error;
    }
  }
}
