// Summing usage rows for `gw usage` as they stream past: credits per agent (for balances) and
// per group of one dimension (--by day|model|agent|key|endpoint|tag), with the overage beside them
// (credits an upstream's usage came to beyond what its calls held, not billed). Only the sums are
// kept. A row with several tags counts in each of its tags' groups (and once in the totals);
// rows can be limited to those carrying any of some tags (--tag).
import { findAgent } from "../store/provisioning.js";
import type { AgentRecord, KeyRecord, MetadataData } from "../store/records.js";
import type { UsageRow } from "../store/usage-log.js";
import { type GroupSums, groupValue, NO_VALUE, overageOf, type RowSums } from "../store/usage-sums.js";
import type { ReportRange } from "./usage-range.js";
import { DAY_MS, dayLabel, startOfDay } from "./usage-range.js";

export const USAGE_DIMENSIONS = ["day", "model", "agent", "key", "endpoint", "tag"] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

export interface UsageGroup {
  /** The group's value: a day (YYYY-MM-DD, UTC), model, agent name, key prefix, endpoint or tag. */
  value: string;
  rows: number;
  credits: number;
  /** Credits not billed: the upstream's usage beyond what the calls held. */
  overage: number;
  /** --by key: the key's label (`gw keys create --name`) and its agent, when known. */
  label?: string;
  agent?: string;
}

/** Usage rows name their agent by id (older rows by name): both resolve, once per distinct value. */
export class AgentDirectory {
  private readonly resolved = new Map<string, AgentRecord | undefined>();
  private readonly keys: Map<string, KeyRecord>;

  constructor(private readonly metadata: MetadataData) {
    this.keys = new Map(metadata.keys.map((key) => [key.prefix, key]));
  }

  /** The agent `gw usage --agent` names (by name or id), if there is one. */
  find(nameOrId: string): AgentRecord | undefined {
    return findAgent(this.metadata, nameOrId);
  }

  resolve(raw: string): AgentRecord | undefined {
    const known = this.resolved.get(raw);
    if (known !== undefined || this.resolved.has(raw)) return known;
    const agent = this.metadata.agents.find((candidate) => candidate.id === raw) ?? this.metadata.agents.find((candidate) => candidate.name === raw);
    this.resolved.set(raw, agent);
    return agent;
  }

  /** The agent's name, or the row's own text for an agent that no longer exists. */
  displayName(raw: string): string {
    return this.resolve(raw)?.name ?? raw;
  }

  key(prefix: string): KeyRecord | undefined {
    return this.keys.get(prefix);
  }

  agentName(id: string): string | undefined {
    return this.metadata.agents.find((agent) => agent.id === id)?.name;
  }
}

interface Sum {
  rows: number;
  credits: number;
  overage: number;
  /** --by key: the agent of the key's first row, for a key the metadata no longer has. */
  agent?: string;
}

export class UsageTally {
  rows = 0;
  credits = 0;
  overage = 0;
  /** Credits per agent id, for the agents the metadata knows. */
  readonly agentCredits = new Map<string, number>();
  /** Overage per agent id, for the agents that have any. */
  readonly agentOverage = new Map<string, number>();
  private readonly sums = new Map<string, Sum>();

  constructor(
    private readonly agents: AgentDirectory,
    private readonly only: AgentRecord | undefined,
    private readonly dimension: UsageDimension | undefined,
    /** --tag: only rows carrying at least one of these. */
    private readonly tags?: ReadonlySet<string>,
  ) {}

  /** Whether the row is one the report counts: --agent names its agent (or none), --tag one of its tags (or none). */
  accepts(row: UsageRow): boolean {
    if (this.only && this.agents.resolve(row.agent) !== this.only) return false;
    return !this.tags || tagsOf(row).some((tag) => this.tags!.has(tag));
  }

  /**
   * Count an agent's rows at once, as `add` would count them one by one: from a checkpoint's sums
   * per agent (a whole month's report without --tag). With --by agent they are its groups too;
   * with --by day, model, key or endpoint the groups come from `addGroupSums`.
   */
  addAgentSums(raw: string, sums: RowSums): void {
    if (this.tags) throw new Error("sums per agent cannot be kept to some tags");
    const agent = this.agents.resolve(raw);
    if (this.only && agent !== this.only) return;
    this.rows += sums.rows;
    this.credits += sums.credits;
    this.overage += sums.overage;
    if (agent) this.agentCredits.set(agent.id, (this.agentCredits.get(agent.id) ?? 0) + sums.credits);
    if (agent && sums.overage > 0) this.agentOverage.set(agent.id, (this.agentOverage.get(agent.id) ?? 0) + sums.overage);
    if (this.dimension === "agent") this.addSumsTo(agent?.name ?? raw, sums);
  }

  /**
   * A group's rows at once, from a checkpoint's sums per day, model, key or endpoint over every
   * agent: only without --agent and --tag (whose rows the sums do not tell apart).
   */
  addGroupSums(value: string, sums: GroupSums): void {
    if (this.only || this.tags || this.dimension === undefined || this.dimension === "agent" || this.dimension === "tag") {
      throw new Error(`sums per group cannot be counted by ${this.dimension}, nor kept to an agent or tags`);
    }
    // A key's agent, as `add` names it from the key's first row.
    this.addSumsTo(value, sums, sums.agent === undefined ? undefined : (this.agents.resolve(sums.agent)?.name ?? sums.agent));
  }

  private addSumsTo(value: string, sums: RowSums, agent?: string): void {
    const sum = this.sums.get(value);
    if (sum) {
      sum.rows += sums.rows;
      sum.credits += sums.credits;
      sum.overage += sums.overage;
    } else {
      this.sums.set(value, { rows: sums.rows, credits: sums.credits, overage: sums.overage, ...(this.dimension === "key" ? { agent } : {}) });
    }
  }

  /** Count the row unless --agent names another agent or --tag other tags; says whether it was counted. */
  add(row: UsageRow): boolean {
    const agent = this.agents.resolve(row.agent);
    if (this.only && agent !== this.only) return false;
    if (this.tags && !tagsOf(row).some((tag) => this.tags!.has(tag))) return false;
    const overage = overageOf(row);
    this.rows += 1;
    this.credits += row.credits;
    this.overage += overage;
    if (agent) this.agentCredits.set(agent.id, (this.agentCredits.get(agent.id) ?? 0) + row.credits);
    if (agent && overage > 0) this.agentOverage.set(agent.id, (this.agentOverage.get(agent.id) ?? 0) + overage);
    if (this.dimension === "tag") {
      const tags = tagsOf(row);
      if (tags.length === 0) this.addTo(NO_VALUE, row, overage, agent);
      for (const tag of tags) this.addTo(tag, row, overage, agent);
    } else if (this.dimension) {
      // The summed dimensions group by the same rule as the log's checkpoint sums (usage-sums.ts).
      this.addTo(this.dimension === "agent" ? (agent?.name ?? row.agent) : groupValue(this.dimension, row), row, overage, agent);
    }
    return true;
  }

  private addTo(value: string, row: UsageRow, overage: number, agent: AgentRecord | undefined): void {
    const sum = this.sums.get(value);
    if (sum) {
      sum.rows += 1;
      sum.credits += row.credits;
      sum.overage += overage;
    } else {
      this.sums.set(value, { rows: 1, credits: row.credits, overage, ...(this.dimension === "key" ? { agent: agent?.name ?? row.agent } : {}) });
    }
  }

  /**
   * The groups: days in order, every day of the range up to `today` included (a day without
   * spend is part of the picture), then any row whose time did not parse; other dimensions by
   * credits, largest first.
   */
  groups(range: ReportRange, today: number): UsageGroup[] {
    if (this.dimension === "day") {
      const days = new Map(this.sums);
      const last = Math.min(range.until - 1, startOfDay(today));
      for (let day = startOfDay(range.since); day <= last; day += DAY_MS) {
        const label = dayLabel(day);
        if (!days.has(label)) days.set(label, { rows: 0, credits: 0, overage: 0 });
      }
      return [...days.entries()]
        .sort(([a], [b]) => (a === NO_VALUE ? 1 : b === NO_VALUE ? -1 : a < b ? -1 : a > b ? 1 : 0))
        .map(([value, sum]) => this.group(value, sum));
    }
    return [...this.sums.entries()]
      .sort(([a, left], [b, right]) => right.credits - left.credits || (a < b ? -1 : a > b ? 1 : 0))
      .map(([value, sum]) => this.group(value, sum));
  }

  private group(value: string, sum: Sum): UsageGroup {
    const group: UsageGroup = { value, rows: sum.rows, credits: sum.credits, overage: sum.overage };
    if (this.dimension !== "key") return group;
    const key = this.agents.key(value);
    if (key?.name) group.label = key.name;
    const agent = key ? this.agents.agentName(key.agentId) : sum.agent;
    if (agent) group.agent = agent;
    return group;
  }
}

/**
 * A row's tags, each once: the gateway writes a list of distinct strings, but the log vouches only
 * for agent and credits, so anything else (older rows, a hand-edited line) reads as none.
 */
export function tagsOf(row: UsageRow): readonly string[] {
  const tags: unknown = row.tags;
  if (!Array.isArray(tags)) return [];
  const strings = tags.filter((tag): tag is string => typeof tag === "string" && tag !== "");
  return strings.length === tags.length && new Set(strings).size === strings.length ? strings : [...new Set(strings)];
}
