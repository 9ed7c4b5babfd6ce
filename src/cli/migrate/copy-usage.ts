// The usage history into Redis: every month's valid rows, in order, through the same settle script
// the servers bill with (RedisCreditStore.settle), so Redis's totals are computed as they always
// are and each row lands in its own month's stream and totals. Settle writes a row id once (a key
// kept 70 days), so a migration run again within that time writes no row twice. The embedded
// balances are what its usage log counts: each month's valid rows, by the file they are in.
import type { RedisCreditStore } from "../../store/redis-credit-store.js";
import type { UsageRow } from "../../store/usage-log.js";
import { usageLogSlices, usageRows } from "../../store/usage-rows.js";

/** Credits per agent (and per key prefix) per month, as one side of the migration counts them. */
export interface UsageTotals {
  agents: Map<string, Map<string, number>>;
  keys: Map<string, Map<string, number>>;
}

export interface UsageCopy {
  months: Array<{ period: string; rows: number }>;
  /** The embedded home's totals, from the rows read. */
  before: UsageTotals;
  /** Rows the home's own log leaves out of every balance (invalid credits or agent), one message each. */
  skipped: string[];
}

/** Rows settled together: the connection pipelines them in order, so each month's stream keeps the log's order. */
const BATCH = 256;

export async function copyUsage(usageDirectory: string, credits: RedisCreditStore): Promise<UsageCopy> {
  const before: UsageTotals = { agents: new Map(), keys: new Map() };
  const copy: UsageCopy = { months: [], before, skipped: [] };
  const everything = { since: Number.NEGATIVE_INFINITY, until: Number.POSITIVE_INFINITY };
  for (const slice of usageLogSlices(usageDirectory, everything)) {
    const { period } = slice;
    let rows = 0;
    for await (const batch of usageRows([slice], everything, (warning) => copy.skipped.push(warning))) {
      const settled: Array<Promise<void>> = [];
      for (const row of batch) {
        // A row from before rows had ids gets one that names its place, the same on every run.
        const named: UsageRow = typeof row.id === "string" && row.id !== "" ? row : { ...row, id: `migrated-${period}-${rows}` };
        rows += 1;
        add(before.agents, row.agent, period, row.credits);
        if (typeof row.keyPrefix === "string") add(before.keys, row.keyPrefix, period, row.credits);
        settled.push(credits.settle(null, named));
        if (settled.length >= BATCH) await Promise.all(settled.splice(0));
      }
      await Promise.all(settled);
    }
    copy.months.push({ period, rows });
  }
  return copy;
}

/** Redis's totals for the same agents, keys and months (its month hashes; a key's lifetime from its lifetime hash). */
export async function redisTotals(
  credits: RedisCreditStore,
  before: UsageTotals,
  agentOfKey: Map<string, string>,
): Promise<{ agents: UsageTotals["agents"]; keyLifetimes: Map<string, number> }> {
  const agents = new Map<string, Map<string, number>>();
  for (const [agentId, months] of before.agents) {
    for (const period of months.keys()) {
      const { planUsed } = await credits.balance({ agentId, allowance: 0 }, period);
      add(agents, agentId, period, planUsed);
    }
  }
  const keyLifetimes = new Map<string, number>();
  for (const [prefix, months] of before.keys) {
    const last = [...months.keys()].sort().at(-1);
    if (last === undefined) continue;
    const account = { agentId: agentOfKey.get(prefix) ?? "-", allowance: 0, key: { prefix, budget: { credits: 0, period: "total" as const } } };
    keyLifetimes.set(prefix, (await credits.balance(account, last)).keySpent);
  }
  return { agents, keyLifetimes };
}

export function sum(months: Map<string, number> | undefined): number {
  let total = 0;
  for (const credits of months?.values() ?? []) total += credits;
  return total;
}

function add(totals: Map<string, Map<string, number>>, name: string, period: string, credits: number): void {
  let months = totals.get(name);
  if (!months) {
    months = new Map();
    totals.set(name, months);
  }
  months.set(period, (months.get(period) ?? 0) + credits);
}
