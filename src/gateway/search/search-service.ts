// POST /v1/search without HTTP: check the request (query 1-500 characters, max_results 1-20,
// nothing else: 400 naming the field, nothing sent), pick the search models allowlisted in
// `tools.search` whose provider is configured (none: 503 search_not_configured), hold the dearest
// one's price (402), and ask them in order: a vendor failure of any kind (5xx, 429, a timeout, a
// refused key, SearXNG's 200 with every engine unresponsive) moves on to the next; when all fail,
// 502 (504 when only timeouts, connect timeouts included) listing each provider's cause, never a
// key. An answer over its size cap ends the search there (502 naming the cap: the vendor answered).
// The first answer is billed at its provider's price (one usage row) and returned with dates as YYYY-MM-DD.
import { z } from "zod";
import type { SearchModelEntry } from "../../config/search-catalog-schema.js";
import { isTimeoutFailure, UpstreamHttpError, UpstreamNetworkError } from "../../providers/provider-errors.js";
import type { SearchAnswer } from "../../providers/search-types.js";
import { usageEntry } from "../billing/usage-entry.js";
import { ModelRequiresUpgradeError, SearchNotConfiguredError, UpstreamUnavailableError } from "../errors.js";
import { allowedModelIdsDefaultFirst, providerServes } from "../models/tool-allowlist.js";
import { parseWithSchema } from "../request-schema.js";
import { modelsView, type ServiceContext } from "../service-context.js";
import type { ToolCallContext } from "../upstream-calls/tool-provider-call.js";
import { answerTooLarge } from "../upstream-calls/upstream-attempts.js";
import { normalizePublishedDate } from "./published-date.js";

export const MAX_QUERY_LENGTH = 500;
export const MAX_SEARCH_RESULTS = 20;

export const searchRequestSchema = z
  .object({
    query: z.string().trim().min(1, "the query is empty").max(MAX_QUERY_LENGTH, `at most ${MAX_QUERY_LENGTH} characters`),
    max_results: z.number().int().min(1).max(MAX_SEARCH_RESULTS).default(10),
  })
  .strict();

export type SearchBody = z.output<typeof searchRequestSchema>;

export function parseSearchRequest(json: Record<string, unknown>): SearchBody {
  return parseWithSchema(searchRequestSchema, json);
}

export interface SearchResultItem {
  title: string;
  url: string;
  snippet: string;
  /** YYYY-MM-DD; absent when the vendor gives no date. */
  publishedDate?: string;
}

export interface SearchResponseBody {
  success: true;
  data: { query: string; provider: string; results: SearchResultItem[] };
}

export class SearchService {
  constructor(private readonly shared: ServiceContext) {}

  async search(body: SearchBody, context: ToolCallContext): Promise<{ body: SearchResponseBody; upstreamRequestId?: string }> {
    const candidates = this.candidates(context);
    const price = Math.max(...candidates.map((model) => model.pricing.perRequest));
    const reservation = await this.shared.ledger.reserve(context, price);
    // The answering provider is billed its own price: one row, `search`, units {requests, results}.
    const bill = (model: SearchModelEntry, results: number) =>
      this.shared.ledger.settle(
        reservation,
        usageEntry(context, {
          endpoint: "search",
          model: model.id,
          provider: model.provider,
          units: { requests: 1, results },
          credits: model.pricing.perRequest,
        }),
      );
    const failures: string[] = [];
    let timeoutsOnly = true;
    for (const model of candidates) {
      const search = this.shared.providers().get(model.provider)?.search;
      if (!search) {
        // Its provider left with a config reload since the candidates were chosen.
        failures.push(`${model.provider}: not configured for this capability`);
        timeoutsOnly = false;
        continue;
      }
      this.shared.observer?.attempted(context.requestId, model.provider);
      let answer: SearchAnswer;
      try {
        answer = await search.search({ model: model.model, query: body.query, maxResults: body.max_results }, { signal: context.signal });
      } catch (error) {
        if (context.signal.aborted) {
          this.shared.ledger.release(reservation);
          throw error;
        }
        const cause = causeOf(error);
        this.shared.warn(`${context.requestId} search provider failed: provider ${model.provider}: ${cause}`);
        if (error instanceof UpstreamNetworkError && error.failure === "answer_too_large") {
          // The vendor answered (more than any search needs): billed its price, like an answer (docs/decisions.md §9).
          await bill(model, 0);
          throw answerTooLarge(error);
        }
        if (!(error instanceof UpstreamNetworkError && isTimeoutFailure(error.failure))) timeoutsOnly = false;
        failures.push(`${model.provider}: ${cause}`);
        continue;
      }
      const results = answer.results.slice(0, body.max_results).map((hit) => this.item(hit));
      await bill(model, results.length);
      const outcome: { body: SearchResponseBody; upstreamRequestId?: string } = {
        body: { success: true, data: { query: body.query, provider: model.provider, results } },
      };
      if (answer.upstreamRequestId) outcome.upstreamRequestId = answer.upstreamRequestId;
      return outcome;
    }
    this.shared.ledger.release(reservation);
    throw new UpstreamUnavailableError("No search provider could answer this search.", {
      status: timeoutsOnly ? 504 : 502,
      code: timeoutsOnly ? "upstream_timeout" : "upstream_unavailable",
      failures,
    });
  }

  /** Whether a search would find a model to call for a caller on this plan (the Responses API's hosted web_search asks). */
  availableTo(plan: Pick<ToolCallContext["plan"], "freeTierOnly">): boolean {
    return this.served().some((model) => model.freeTier || !plan.freeTierOnly);
  }

  /** The allowlisted search models with a configured search provider, in allowlist order (the default first). */
  private served(): SearchModelEntry[] {
    const view = modelsView(this.shared);
    return allowedModelIdsDefaultFirst(view.config, "search")
      .map((id) => view.config.catalog.search.find((model) => model.id === id))
      .filter((model): model is SearchModelEntry => model !== undefined && providerServes(view, model.provider, "search"));
  }

  /** The served models this caller's plan reaches; none set up is 503, none on the plan 403. */
  private candidates(context: ToolCallContext): SearchModelEntry[] {
    const served = this.served();
    const [first] = served;
    if (first === undefined) {
      throw new SearchNotConfiguredError(
        "Web search is not configured on this gateway: no search provider is set up and allowlisted in tools.search (gw tools enable search brave/web).",
      );
    }
    const reachable = context.plan.freeTierOnly ? served.filter((model) => model.freeTier) : served;
    if (reachable.length === 0) throw new ModelRequiresUpgradeError(first.id, context.planName);
    return reachable;
  }

  private item(hit: SearchAnswer["results"][number]): SearchResultItem {
    const item: SearchResultItem = { title: hit.title, url: hit.url, snippet: hit.snippet };
    const date = normalizePublishedDate(hit.published, this.shared.now());
    if (date !== undefined) item.publishedDate = date;
    return item;
  }
}

/** A vendor failure in words: its status and message (already free of keys), or the network cause. */
function causeOf(error: unknown): string {
  if (error instanceof UpstreamHttpError) {
    try {
      const parsed = JSON.parse(error.body) as { error?: { message?: unknown } };
      if (typeof parsed.error?.message === "string") return `HTTP ${error.status}: ${parsed.error.message}`;
    } catch {
      // not JSON
    }
    return `HTTP ${error.status}`;
  }
  if (error instanceof UpstreamNetworkError) return error.detail;
  return error instanceof Error ? error.message : String(error);
}
