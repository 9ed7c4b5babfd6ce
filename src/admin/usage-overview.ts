// The console's view of the usage history (docs/decisions.md §27): one streaming pass over a
// range's rows, kept by an agent, key, model, endpoint and tag filter, summed per day, agent,
// model, key, endpoint and tag, with the last rows for a table; and the same rows as the CSV
// `gw usage --format csv` writes (its columns, its quoting, one line per row). Only sums and the
// last rows are held. A row's agent is its id (older rows: its name); the log vouches only for
// agent and credits, so any other field that is not text groups as "(none)".
// Rows are judged, named and written as `gw usage` does (usage-groups.ts, usage-report.ts).
import type { AgentRecord, MetadataData } from "../store/records.js";
import type { UsageHistory } from "../store/usage-history.js";
import type { UsageRow } from "../store/usage-log.js";
import type { UsageRange } from "../store/usage-rows.js";
import { dayOf, NO_VALUE, textValue as text } from "../store/usage-sums.js";
import { csvLine } from "./usage-csv.js";
import { AgentDirectory, tagsOf } from "./usage-groups.js";
import { DAY_MS, dayLabel, startOfDay } from "./usage-range.js";
import { csvCells, ROW_CSV_HEADERS } from "./usage-report.js";

export { NO_VALUE };

export interface UsageFilter {
  /** An agent's id. */
  agentId?: string;
  /** A key's visible prefix. */
  key?: string;
  model?: string;
  endpoint?: string;
  tag?: string;
}

export interface UsageSum {
  value: string;
  rows: number;
  credits: number;
}

export interface UsageOverview {
  rows: number;
  credits: number;
  /** Every day of the range up to today (UTC), days without rows included. */
  days: UsageSum[];
  /** Agents by name (a row of an agent that no longer exists: its own text); largest first. */
  agents: UsageSum[];
  /** Credits per agent id, for the agents the metadata knows. */
  agentCredits: Map<string, number>;
  models: UsageSum[];
  keys: UsageSum[];
  endpoints: UsageSum[];
  /** A row with several tags counts in each; rows without tags are (none). */
  tags: UsageSum[];
  /** The range's last rows, newest first. */
  recent: UsageRow[];
  /** Invalid rows left out. */
  skipped: number;
}

/** The agent a row names, by id or (older rows) by name: `gw usage`'s directory, by row. */
export class RowAgents {
  readonly directory: AgentDirectory;

  constructor(metadata: MetadataData) {
    this.directory = new AgentDirectory(metadata);
  }

  of(row: UsageRow): AgentRecord | undefined {
    return this.directory.resolve(row.agent);
  }

  displayName(row: UsageRow): string {
    return this.directory.displayName(row.agent);
  }
}

export function rowMatches(row: UsageRow, filter: UsageFilter, agents: RowAgents): boolean {
  if (filter.agentId !== undefined && agents.of(row)?.id !== filter.agentId) return false;
  if (filter.key !== undefined && row.keyPrefix !== filter.key) return false;
  if (filter.model !== undefined && row.model !== filter.model) return false;
  if (filter.endpoint !== undefined && row.endpoint !== filter.endpoint) return false;
  if (filter.tag !== undefined && !tagsOf(row).includes(filter.tag)) return false;
  return true;
}

class Sums {
  private readonly sums = new Map<string, UsageSum>();

  add(value: string, credits: number): void {
    const sum = this.sums.get(value);
    if (sum) {
      sum.rows += 1;
      sum.credits += credits;
    } else this.sums.set(value, { value, rows: 1, credits });
  }

  get(value: string): UsageSum | undefined {
    return this.sums.get(value);
  }

  largestFirst(): UsageSum[] {
    return [...this.sums.values()].sort((a, b) => b.credits - a.credits || b.rows - a.rows || (a.value < b.value ? -1 : 1));
  }
}

export async function usageOverview(
  history: UsageHistory,
  metadata: MetadataData,
  range: UsageRange,
  filter: UsageFilter,
  now: number,
  recentRows = 100,
): Promise<UsageOverview> {
  const agents = new RowAgents(metadata);
  const days = new Sums();
  const byAgent = new Sums();
  const models = new Sums();
  const keys = new Sums();
  const endpoints = new Sums();
  const tags = new Sums();
  const agentCredits = new Map<string, number>();
  const recent: UsageRow[] = [];
  let rows = 0;
  let credits = 0;
  let skipped = 0;
  const reading = await history.reading(range);
  for await (const batch of reading.rows(() => skipped++)) {
    for (const row of batch) {
      if (!rowMatches(row, filter, agents)) continue;
      rows += 1;
      credits += row.credits;
      const agent = agents.of(row);
      if (agent) agentCredits.set(agent.id, (agentCredits.get(agent.id) ?? 0) + row.credits);
      days.add(dayOf(row.time), row.credits);
      byAgent.add(agent?.name ?? row.agent, row.credits);
      models.add(text(row.model), row.credits);
      keys.add(text(row.keyPrefix), row.credits);
      endpoints.add(text(row.endpoint), row.credits);
      const rowTagList = tagsOf(row);
      if (rowTagList.length === 0) tags.add(NO_VALUE, row.credits);
      for (const tag of rowTagList) tags.add(tag, row.credits);
      recent.push(row);
      if (recent.length > recentRows) recent.shift();
    }
  }
  const dayList: UsageSum[] = [];
  const last = Math.min(range.until - 1, startOfDay(now));
  for (let day = startOfDay(range.since); day <= last; day += DAY_MS) {
    const label = dayLabel(day);
    dayList.push(days.get(label) ?? { value: label, rows: 0, credits: 0 });
  }
  return {
    rows,
    credits,
    days: dayList,
    agents: byAgent.largestFirst(),
    agentCredits,
    models: models.largestFirst(),
    keys: keys.largestFirst(),
    endpoints: endpoints.largestFirst(),
    tags: tags.largestFirst(),
    recent: recent.reverse(),
    skipped,
  };
}

/** The CSV of `gw usage --format csv`: its header, then one line per kept row, in batches as read. */
export async function* usageCsv(history: UsageHistory, metadata: MetadataData, range: UsageRange, filter: UsageFilter): AsyncGenerator<string> {
  const agents = new RowAgents(metadata);
  yield csvLine(ROW_CSV_HEADERS);
  const reading = await history.reading(range);
  for await (const batch of reading.rows()) {
    let out = "";
    for (const row of batch) if (rowMatches(row, filter, agents)) out += csvLine(csvCells(row, agents.directory));
    if (out) yield out;
  }
}
