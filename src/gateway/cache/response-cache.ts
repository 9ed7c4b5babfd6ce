// The exact-match response cache (docs/decisions.md §22): an answer kept per agent under the hash
// of the endpoint, the route's first upstream and model, and the canonical request body, then
// replayed to the same agent's identical request until its lifetime ends. Off unless a key or
// the request asks (cache-lifetime.ts). A hit is billed through the ledger like any call, at
// `billing.cacheHitPrice` of what the call it repeats cost, in a usage row marked `cached`. The
// cache never fails a request: an entry that cannot be read is a miss, one that cannot be written
// is logged.
import { hash } from "node:crypto";
import { stringify } from "safe-stable-stringify";
import type { PlanLimits } from "../../config/config-schema.js";
import type { CacheTotals, ResponseCacheStore } from "../../store/response-cache.js";
import type { UsageRow } from "../../store/usage-log.js";
import type { Caller } from "../auth/key-authenticator.js";
import { assertKeyAllowsModel } from "../auth/key-limits.js";
import type { DeferredAdmission } from "../auth/rate-limiter.js";
import { usageEntry } from "../billing/usage-entry.js";
import { resolveRoutes } from "../routing/route-resolver.js";
import type { ServiceContext } from "../service-context.js";
import type { BatchLineBilling } from "../upstream-calls/chat-metering.js";
import { cacheLifetime } from "./cache-lifetime.js";
import { type AnswerGiven, type CachedAnswer, type CachedUsage, decodeCachedAnswer, encodeCachedAnswer } from "./cached-answer.js";

/** What the cache needs of a request to decide, find and bill it. */
export interface CacheQuestion {
  endpoint: string;
  model: string;
  /** The request as gw acts on it; hashed in a canonical form (keys sorted). */
  body: unknown;
  /** Whether the answer is sampled: then only the request's own header turns the cache on. */
  sampled: boolean;
  /** The request's x-gw-cache header, or null. */
  header: string | null;
  caller: Caller;
  plan: PlanLimits;
  requestId: string;
  admission?: DeferredAdmission;
  /** A batch's line: a hit's row is named and marked as the line's. */
  batch?: BatchLineBilling;
  /** The request's tags, on a hit's row. */
  tags?: readonly string[];
}

/** A request whose answer the cache keeps: where, for how long, and the usage rows its call writes. */
export class CacheEntry {
  /** Told of each usage row the call writes (ChatCallContext.recorded), for the hit's row. */
  readonly recorded = (row: UsageRow): void => {
    this.rows.push(row);
  };
  private readonly rows: UsageRow[] = [];

  constructor(
    readonly question: CacheQuestion,
    readonly hash: string,
    readonly ttlSeconds: number,
  ) {}

  /** What the call billed, summed over its rows; undefined when it wrote none. */
  usage(): CachedUsage | undefined {
    const last = this.rows.at(-1);
    if (!last) return undefined;
    const units: Record<string, number> = {};
    let credits = 0;
    for (const row of this.rows) {
      credits += row.credits;
      for (const [name, count] of Object.entries(row.units)) units[name] = (units[name] ?? 0) + count;
    }
    return { provider: last.provider, model: last.model, units, credits };
  }
}

export class ResponseCache {
  private lastTotals: CacheTotals = { entries: 0, bytes: 0 };

  constructor(
    private readonly store: ResponseCacheStore,
    private readonly shared: Pick<ServiceContext, "config" | "ledger" | "latency" | "warn" | "observer">,
  ) {}

  /**
   * The cache entry this request's answer lives under, or undefined when the cache is off for it.
   * Checks first what a call would: the key's model patterns (403) and the route (404, 403).
   */
  entryFor(question: CacheQuestion): CacheEntry | undefined {
    const config = this.shared.config();
    const ttlSeconds = cacheLifetime(question.header, question.caller.key.cacheTtlSeconds, question.sampled, config.cache.maxTtlSeconds);
    if (ttlSeconds === undefined) return undefined;
    assertKeyAllowsModel(question.caller.key, question.model);
    const [first] = resolveRoutes(config, question.model, { planName: question.caller.agent.plan, plan: question.plan, latency: this.shared.latency });
    const upstream = first ? `${first.provider}\n${first.upstreamModel}` : "";
    const key = `${question.endpoint}\n${upstream}\n${stringify(question.body)}`;
    return new CacheEntry(question, hash("sha256", key, "hex"), ttlSeconds);
  }

  /**
   * The answer kept for this request, billed as a hit (its usage row written, marked cached), or
   * undefined on a miss. A hit counts against the key's rate limit like any request (429), and
   * one that costs credits is held first like any call (402).
   */
  async hit(entry: CacheEntry): Promise<CachedAnswer | undefined> {
    const { caller } = entry.question;
    let answer: CachedAnswer | undefined;
    try {
      const bytes = await this.store.get(caller.agent.id, entry.hash);
      answer = bytes && decodeCachedAnswer(bytes);
    } catch (error) {
      this.shared.warn(`response cache: reading an entry failed (${messageOf(error)}); answered from the upstream`);
    }
    if (!answer) {
      this.shared.observer?.cacheMissed?.(entry.question.requestId, entry.question.endpoint);
      return undefined;
    }
    await this.billHit(entry, answer.usage);
    return answer;
  }

  /** Keep the answer the call just gave (it billed `entry`'s rows); an answer over the size bound is not kept. */
  async keep(entry: CacheEntry, answer: AnswerGiven): Promise<void> {
    const usage = entry.usage();
    if (!usage) return;
    const bytes = encodeCachedAnswer({ ...answer, usage });
    const { maxEntryBytes, maxBytes } = this.shared.config().cache;
    if (bytes.length > maxEntryBytes) return;
    try {
      await this.store.put(entry.question.caller.agent.id, entry.hash, bytes, entry.ttlSeconds * 1000, maxBytes);
    } catch (error) {
      this.shared.warn(`response cache: an answer was not kept (${messageOf(error)})`);
    }
  }

  /** Entries and bytes kept now, for the metrics; the last ones read when the store cannot be read now (a scrape must not fail). */
  async totals(): Promise<CacheTotals> {
    try {
      this.lastTotals = await this.store.totals();
    } catch (error) {
      this.shared.warn(`response cache: totals not read (${messageOf(error)})`);
    }
    return this.lastTotals;
  }

  private async billHit(entry: CacheEntry, usage: CachedUsage): Promise<void> {
    const { ledger, config } = this.shared;
    const { caller, plan, endpoint, admission, batch } = entry.question;
    await admission?.ensure();
    const credits = Math.round(usage.credits * config().billing.cacheHitPrice);
    const row = usageEntry(entry.question, { endpoint, model: usage.model, provider: usage.provider, units: usage.units, credits });
    row.cached = true;
    if (batch) row.batch = batch.id;
    if (credits === 0) {
      await ledger.record(row, batch?.rowId);
      return;
    }
    const reservation = await ledger.reserve({ caller, plan }, credits);
    await ledger.settle(reservation, row, { rowId: batch?.rowId });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
