// Keys as `gw keys list` and GET /admin/v1/keys show them: each key with its label, agent, plan,
// limits, cache lifetime, budget, what it spent in its budget's period, expiry and last use. Spend
// and last use come from the usage history (this home's log or the Redis streams), read streaming.
import { type Config, canonicalPlanName } from "../config/resolved-config.js";
import type { KeyRecord, MetadataData } from "../store/records.js";
import type { UsageHistory } from "../store/usage-history.js";
import { periodOf } from "../store/usage-log.js";

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

/** Per key prefix: credits this month, credits ever, and the time of its latest usage row. */
async function keyUses(history: UsageHistory, prefixes: Set<string>, now: Date): Promise<Map<string, KeyUse>> {
  const month = periodOf(now);
  const range = { since: 0, until: Number.MAX_SAFE_INTEGER };
  const uses = new Map<string, KeyUse>();
  const reading = await history.reading(range);
  for await (const batch of reading.rows()) {
    for (const row of batch) {
      if (!prefixes.has(row.keyPrefix)) continue;
      let use = uses.get(row.keyPrefix);
      if (!use) {
        use = { month: 0, total: 0, last: null };
        uses.set(row.keyPrefix, use);
      }
      use.total += row.credits;
      if (row.time.startsWith(month)) use.month += row.credits;
      if (use.last === null || row.time > use.last) use.last = row.time;
    }
  }
  return uses;
}
