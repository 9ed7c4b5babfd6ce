// Keys as `gw keys list` and GET /admin/v1/keys show them: each key with its label, agent, plan,
// limits, cache lifetime, budget, what it spent in its budget's period, expiry and last use. Spend
// and last use come from the usage history (this home's log or the Redis streams), read streaming.
import { type Config, canonicalPlanName } from "../config/resolved-config.js";
import type { KeyRecord, MetadataData } from "../store/records.js";
import type { UsageHistory } from "../store/usage-history.js";
import { periodOf } from "../store/usage-log.js";
import { periodRange } from "../store/usage-rows.js";

export interface KeyListing {
  id: string;
  name: string | null;
  prefix: string;
  agent: string;
  plan: string;
  budget: { credits: number; period: "month" | "total" } | null;
  /** Credits this key spent this month (UTC), or over its life when its budget is a lifetime one. */
  spent: number;
  expiresAt: string | null;
  expired: boolean;
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  /** Seconds the response cache keeps this key's answers; null when the key does not cache. */
  cacheTtlSeconds: number | null;
  lastUsedAt: string | null;
  createdAt: string;
  revokedAt: string | null;
}

interface KeyUse {
  month: number;
  total: number;
  last: string | null;
}

export async function keyListing(config: Config, metadata: MetadataData, history: UsageHistory, keys: KeyRecord[], now: Date): Promise<KeyListing[]> {
  const uses = await keyUses(history, new Set(keys.map((key) => key.prefix)), now);
  const agents = new Map(metadata.agents.map((agent) => [agent.id, agent]));
  return keys.map((key) => {
    const agent = agents.get(key.agentId);
    const use = uses.get(key.prefix) ?? { month: 0, total: 0, last: null };
    return {
      id: key.id,
      name: key.name ?? null,
      prefix: key.prefix,
      agent: agent?.name ?? key.agentId,
      plan: agent ? (canonicalPlanName(config, agent.plan) ?? agent.plan) : "",
      budget: key.budget ?? null,
      spent: key.budget?.period === "total" ? use.total : use.month,
      expiresAt: key.expiresAt ?? null,
      expired: key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now.getTime(),
      models: key.models ?? null,
      rpm: key.rpm ?? null,
      tpm: key.tpm ?? null,
      cacheTtlSeconds: key.cacheTtlSeconds ?? null,
      lastUsedAt: use.last,
      createdAt: key.createdAt,
      revokedAt: key.revokedAt,
    };
  });
}

/**
 * Per key prefix: credits this month, credits ever, and the time of its latest usage row. Month
 * by month: a month whose log has a checkpoint gives its sums per key from it and only the rows
 * after it are read (usage-rows.ts `usageSummary`), so a listing does not read a million rows.
 * A month's credits are those of its log, as the key budgets count them.
 */
async function keyUses(history: UsageHistory, prefixes: Set<string>, now: Date): Promise<Map<string, KeyUse>> {
  const current = periodOf(now);
  const uses = new Map<string, KeyUse>();
  const count = (prefix: string, period: string, credits: number, time: string | undefined) => {
    let use = uses.get(prefix);
    if (!use) {
      use = { month: 0, total: 0, last: null };
      uses.set(prefix, use);
    }
    use.total += credits;
    if (period === current) use.month += credits;
    if (time !== undefined && (use.last === null || time > use.last)) use.last = time;
  };
  for (const period of await history.periods()) {
    const reading = await history.reading(periodRange(period));
    const summary = reading.summary?.();
    if (summary) {
      for (const [prefix, sums] of summary.groups.key) if (prefixes.has(prefix)) count(prefix, period, sums.credits, sums.last);
    }
    for await (const batch of summary?.rowsAfter ?? reading.rows()) {
      for (const row of batch) if (prefixes.has(row.keyPrefix)) count(row.keyPrefix, period, row.credits, typeof row.time === "string" ? row.time : undefined);
    }
  }
  return uses;
}
