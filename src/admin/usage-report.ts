// `gw usage`: credits used per agent (with the balance left, for a calendar month) and the rows
// of a range, or their sums per day, model, agent, key, endpoint or tag as a table, JSON, CSV or a
// bar chart; --tag keeps the rows carrying any of some tags. Overage (an upstream's usage beyond what its calls held, not billed: docs/decisions.md §3)
// is a column of the tables and JSON when the range has any, and always a CSV column. Rows stream
// from the usage history (this home's log, or the Redis streams: usage-history.ts): what is held
// is the sums and the rows shown, never the month, so a million-row month reports in seconds
// (docs/decisions.md §15, §21). A whole month's sums (the default table, the JSON's head, --by
// anything but tag) come from the log's checkpoint and the rows after it, without the month.
import type { Config } from "../config/resolved-config.js";
import { canonicalPlanName } from "../config/resolved-config.js";
import type { AgentRecord, MetadataData } from "../store/records.js";
import type { UsageHistory, UsageReading } from "../store/usage-history.js";
import type { UsageRow } from "../store/usage-log.js";
import type { UsageSummary } from "../store/usage-rows.js";
import { overageOf, SUMMED_DIMENSIONS, type SummedDimension } from "../store/usage-sums.js";
import { AdminLookupError } from "./admin-requests.js";
import { type CsvCell, csvLine } from "./usage-csv.js";
import { AgentDirectory, tagsOf, type UsageDimension, type UsageGroup, UsageTally } from "./usage-groups.js";
import { describeRange, iso, type ReportRange } from "./usage-range.js";

export const USAGE_FORMATS = ["table", "json", "csv"] as const;
export type UsageFormat = (typeof USAGE_FORMATS)[number];

/** Without --rows, a table lists this many of the range's last rows (a month can hold millions). */
export const RECENT_ROWS = 20;
/** Invalid rows named one by one on stderr; past this, only counted. */
const WARNINGS_LISTED = 100;

export interface UsageOptions {
  range: ReportRange;
  /** --agent: a name or id. */
  agent?: string;
  /** --tag: only rows carrying any of these tags. */
  tags?: readonly string[];
  by?: UsageDimension;
  format: UsageFormat;
  chart: boolean;
  /** --rows: list every row of the range in the table, not only the last ones. */
  allRows: boolean;
  /** Days of the range after this one are not listed by --by day (they have not happened). */
  now: Date;
}

/**
 * Where a report goes: `gw usage` writes to the terminal (src/cli/usage-output.ts), the admin API
 * into its answer's body (json and csv only). `write` takes bytes of the JSON or CSV document and
 * resolves when they may be followed by more; the rest serve the table and chart for people.
 */
export interface ReportOutput {
  write(text: string): Promise<void>;
  line(text?: string): void;
  table(headers: string[], rows: CsvCell[][], empty?: string): void;
  /** Bars as lines of text, as wide as the output allows. */
  chart(bars: Array<{ label: string; value: number }>): string[];
  /** A warning beside the report (stderr for the CLI). */
  note(text: string): void;
}

export interface AgentUsage {
  agent: string;
  plan: string;
  used: number;
  /** The plan's monthly credits less `used`: only when the range is one calendar month. */
  balance?: number;
  /** Credits not billed beyond what the agent's calls held (only when there are any). */
  overage?: number;
}

interface Report {
  out: ReportOutput;
  config: Config;
  agents: AgentDirectory;
  only: AgentRecord | undefined;
  /** --tag: only rows carrying any of these. */
  tags: ReadonlySet<string> | undefined;
  /** The range's rows as they were when the report began: every pass reads the same ones. */
  reading: UsageReading;
  skipped: SkippedRows;
  options: UsageOptions;
}

export async function printUsage(out: ReportOutput, config: Config, metadata: MetadataData, history: UsageHistory, options: UsageOptions): Promise<void> {
  const agents = new AgentDirectory(metadata);
  let only: AgentRecord | undefined;
  if (options.agent !== undefined) {
    only = agents.find(options.agent);
    if (!only) throw new AdminLookupError("agent", `no agent "${options.agent}"`);
  }
  const tags = options.tags?.length ? new Set(options.tags) : undefined;
  const report: Report = { out, config, agents, only, tags, reading: await history.reading(options.range), skipped: new SkippedRows(out), options };
  const dimension = options.by ?? (options.chart ? "day" : undefined);
  if (dimension) return printGroups(report, dimension);
  if (options.format === "csv") return printRowsCsv(report);
  if (options.format === "json") return printRowsJson(report, metadata);
  return printRowsTable(report, metadata);
}

/** Which lines were left out goes to stderr, so stdout stays the report. */
class SkippedRows {
  count = 0;

  constructor(private readonly out: ReportOutput) {}

  readonly add = (warning: string): void => {
    this.count += 1;
    if (this.count <= WARNINGS_LISTED) this.out.note(warning);
  };

  /** The end of the list on stderr, when it was cut. */
  finish(): void {
    if (this.count > WARNINGS_LISTED) this.out.note(`${(this.count - WARNINGS_LISTED).toLocaleString("en-US")} more invalid rows not listed`);
  }

  /** The line the report prints, or null when none was skipped. */
  line(notCountedIn: string): string | null {
    if (this.count === 0) return null;
    return `${count(this.count, "invalid row")} skipped (not counted in ${notCountedIn}); the lines are listed on stderr`;
  }
}

/** One pass over the range: every row --agent lets through goes to `tally`, then to `each`. */
async function readRange(report: Report, tally: UsageTally, each?: (row: UsageRow) => void, batchDone?: () => Promise<void>): Promise<void> {
  for await (const batch of report.reading.rows(report.skipped.add)) {
    for (const row of batch) if (tally.add(row)) each?.(row);
    await batchDone?.();
  }
  report.skipped.finish();
}

/**
 * What a report that needs only sums (and the last rows) reads of a whole month without --tag:
 * the log's checkpoint and the rows after it (usage-rows.ts `usageSummary`), not the month.
 * Undefined otherwise: such a report reads the range. Called only by a report that will use it
 * (it names the checkpoint's skipped rows at once).
 */
function summaryOf(report: Report): UsageSummary | undefined {
  return report.tags ? undefined : report.reading.summary?.(report.skipped.add);
}

/**
 * The pass readRange makes, from a summary: the same sums (per agent; per group of `dimension`,
 * which --agent and --tag leave unused), then the rows after the checkpoint, to `each` too.
 */
async function readSummary(
  report: Report,
  summary: UsageSummary,
  tally: UsageTally,
  each?: (row: UsageRow) => void,
  dimension?: SummedDimension,
): Promise<void> {
  for (const [agent, sums] of summary.agents) tally.addAgentSums(agent, sums);
  if (dimension) for (const [value, sums] of summary.groups[dimension]) tally.addGroupSums(value, sums);
  for await (const batch of summary.rowsAfter) for (const row of batch) if (tally.add(row)) each?.(row);
  report.skipped.finish();
}

// --- sums per group ----------------------------------------------------------------------------

async function printGroups(report: Report, dimension: UsageDimension): Promise<void> {
  const { options } = report;
  const tally = new UsageTally(report.agents, report.only, dimension, report.tags);
  // Sums per agent serve --agent too; those per day, model, key or endpoint are over every agent.
  const summed = dimension === "agent" || (isSummed(dimension) && !report.only);
  const summary = summed ? summaryOf(report) : undefined;
  if (summary) await readSummary(report, summary, tally, undefined, isSummed(dimension) ? dimension : undefined);
  else await readRange(report, tally);
  const groups = tally.groups(options.range, options.now.getTime());
  const overage = tally.overage > 0;
  const columns = groupColumns(dimension, overage);
  if (options.format === "json") {
    const body = {
      ...rangeFields(report),
      by: dimension,
      groups: groups.map((group) =>
        Object.fromEntries(columns.map((column, index) => [column, groupCells(dimension, group, overage)[index]]).filter(([, cell]) => cell !== undefined)),
      ),
      total: { rows: tally.rows, credits: tally.credits, ...(overage ? { overage: tally.overage } : {}) },
      ...(report.skipped.count > 0 ? { skipped: report.skipped.count } : {}),
    };
    return report.out.write(`${JSON.stringify(body, null, 2)}\n`);
  }
  if (options.format === "csv") {
    // A fixed set of columns for programs: overage always.
    return report.out.write([csvLine(groupColumns(dimension, true)), ...groups.map((group) => csvLine(groupCells(dimension, group, true)))].join(""));
  }
  report.out.line(`${options.chart ? `credits per ${dimension}, ` : ""}${describeScope(report)}`);
  if (groups.length === 0) report.out.line(`no usage rows in this ${options.range.period ? "period" : "range"}`);
  else {
    if (options.chart) {
      const bars = groups.map((group) => ({ label: group.value, value: group.credits }));
      for (const line of report.out.chart(bars)) report.out.line(line);
    } else {
      report.out.table(
        columns.map((column) => column.toUpperCase()),
        groups.map((group) => groupCells(dimension, group, overage)),
      );
    }
    report.out.line(`total ${credits(tally.credits, report.config)} in ${count(tally.rows, "row")}`);
    if (dimension === "tag") report.out.line(TAG_GROUPS_NOTE);
    if (overage) report.out.line(overageLine(tally.overage));
  }
  const skipped = report.skipped.line("these totals");
  if (skipped) report.out.line(skipped);
}

function isSummed(dimension: UsageDimension): dimension is SummedDimension {
  return (SUMMED_DIMENSIONS as readonly string[]).includes(dimension);
}

function groupColumns(dimension: UsageDimension, overage: boolean): string[] {
  const columns = dimension === "key" ? ["key", "name", "agent", "rows", "credits"] : [dimension, "rows", "credits"];
  return overage ? [...columns, "overage"] : columns;
}

function groupCells(dimension: UsageDimension, group: UsageGroup, overage: boolean): CsvCell[] {
  const cells = dimension === "key" ? [group.value, group.label, group.agent, group.rows, group.credits] : [group.value, group.rows, group.credits];
  return overage ? [...cells, group.overage] : cells;
}

/** Under the sums per tag: why they can add up to more than the total. */
const TAG_GROUPS_NOTE = "a row with several tags counts in each of its tags' groups, and once in the total; (none) is the rows without tags";

/** Under a table whose rows have overage: what it is. */
function overageLine(overage: number): string {
  return `overage ${count(overage, "credit")}: upstream usage beyond what the calls held, not billed (each row names its provider)`;
}

// --- rows --------------------------------------------------------------------------------------

const ROW_HEADERS = ["TIME", "AGENT", "KEY", "ENDPOINT", "MODEL", "PROVIDER", "CREDITS", "REQUEST", "OVERAGE"];
/** `batch` (the batch a line belonged to), `cached` (a response-cache hit) and `tags` (space-separated) come after the older columns. */
export const ROW_CSV_HEADERS = ["time", "agent", "key", "endpoint", "model", "provider", "credits", "request_id", "overage", "batch", "cached", "tags"];

/** A row's cells, overage last (left out of tables whose range has none). In a table the endpoint says when the row was a batch's line or a cache hit. */
function rowCells(row: UsageRow, agents: AgentDirectory, overage = true): CsvCell[] {
  const cells: CsvCell[] = [row.time, agents.displayName(row.agent), row.keyPrefix, endpointText(row), row.model, row.provider, row.credits, row.requestId];
  if (overage) cells.push(overageOf(row));
  return cells;
}

function endpointText(row: UsageRow): string {
  const marks = [row.batch === undefined ? undefined : "batch", row.cached ? "cached" : undefined].filter((mark) => mark !== undefined);
  return marks.length === 0 ? row.endpoint : `${row.endpoint} (${marks.join(", ")})`;
}

/** A row's cells in the CSV of rows (`gw usage --format csv`, the console's export). */
export function csvCells(row: UsageRow, agents: AgentDirectory): CsvCell[] {
  return [
    row.time,
    agents.displayName(row.agent),
    row.keyPrefix,
    row.endpoint,
    row.model,
    row.provider,
    row.credits,
    row.requestId,
    overageOf(row),
    row.batch,
    row.cached ? "true" : "",
    tagsOf(row).join(" "),
  ];
}

async function printRowsCsv(report: Report): Promise<void> {
  let out = csvLine(ROW_CSV_HEADERS);
  const flush = async () => {
    if (out) await report.out.write(out);
    out = "";
  };
  await readRange(
    report,
    new UsageTally(report.agents, report.only, undefined, report.tags),
    (row) => {
      out += csvLine(csvCells(row, report.agents));
    },
    flush,
  );
  await flush();
}

/**
 * The object `gw usage --json` has always printed ({period, agents, rows, skipped?}), written as
 * JSON.stringify(..., null, 2) would, but with the rows streamed: one pass sums the agents, a
 * second over the same bytes writes the rows.
 */
async function printRowsJson(report: Report, metadata: MetadataData): Promise<void> {
  const tally = new UsageTally(report.agents, report.only, undefined, report.tags);
  const summary = summaryOf(report);
  if (summary) await readSummary(report, summary, tally);
  else await readRange(report, tally);
  const head = { ...rangeFields(report, { withAgent: false }), agents: agentUsage(report, metadata, tally) };
  let out = `{\n${Object.entries(head)
    .map(([name, value]) => member(name, value))
    .join(",\n")},\n  "rows": [`;
  let first = true;
  const filter = new UsageTally(report.agents, report.only, undefined, report.tags);
  for await (const batch of report.reading.rows()) {
    for (const row of batch) {
      if (!filter.add(row)) continue;
      out += `${first ? "\n" : ",\n"}    ${JSON.stringify(row)}`;
      first = false;
    }
    await report.out.write(out);
    out = "";
  }
  out += first ? "]" : "\n  ]";
  if (report.skipped.count > 0) out += `,\n${member("skipped", report.skipped.count)}`;
  await report.out.write(`${out}\n}\n`);
}

function member(name: string, value: unknown): string {
  return `  ${JSON.stringify(name)}: ${JSON.stringify(value, null, 2).replaceAll("\n", "\n  ")}`;
}

/**
 * The agents' credits, then the rows: the last RECENT_ROWS of them, or with --rows every one,
 * printed by a second pass over the same bytes in columns as wide as the first pass measured.
 */
async function printRowsTable(report: Report, metadata: MetadataData): Promise<void> {
  const { options } = report;
  const tally = new UsageTally(report.agents, report.only, undefined, report.tags);
  const recent: UsageRow[] = [];
  const widths = ROW_HEADERS.map((header) => header.length);
  const keepRecent = (row: UsageRow) => {
    recent.push(row);
    if (recent.length > RECENT_ROWS) recent.shift();
  };
  const summary = options.allRows ? undefined : summaryOf(report);
  if (summary) {
    await readSummary(report, summary, tally, keepRecent);
    // Fewer than that after the checkpoint: the rest from the end of what it counted.
    recent.unshift(...(await summary.lastRowsBefore(RECENT_ROWS - recent.length, (row) => tally.accepts(row))));
  } else {
    await readRange(report, tally, (row) => {
      if (!options.allRows) return keepRecent(row);
      rowText(row, report.agents).forEach((cell, column) => {
        if (cell.length > widths[column]!) widths[column] = cell.length;
      });
    });
  }
  report.out.line(describeScope(report, { withAgent: false }));
  const agents = agentUsage(report, metadata, tally);
  const balances = hasBalances(report);
  const overage = tally.overage > 0;
  const agentHeaders = balances ? ["AGENT", "PLAN", "USED", "BALANCE"] : ["AGENT", "PLAN", "USED"];
  report.out.table(
    overage ? [...agentHeaders, "OVERAGE"] : agentHeaders,
    agents.map((agent) => {
      const cells: CsvCell[] = balances ? [agent.agent, agent.plan, agent.used, agent.balance] : [agent.agent, agent.plan, agent.used];
      return overage ? [...cells, agent.overage ?? 0] : cells;
    }),
    "no agents",
  );
  const skipped = report.skipped.line("USED");
  if (skipped) report.out.line(skipped);
  if (tally.rows === 0) return report.out.line(`no usage rows in this ${options.range.period ? "period" : "range"}`);
  report.out.line();
  const headers = overage ? ROW_HEADERS : ROW_HEADERS.slice(0, -1);
  if (!options.allRows) {
    report.out.table(
      headers,
      recent.map((row) => rowCells(row, report.agents, overage)),
    );
    if (tally.rows > recent.length)
      report.out.line(`the last ${recent.length} of ${count(tally.rows, "row")}; --rows lists every one, --by day|model|agent|key|endpoint|tag sums them`);
    if (overage) report.out.line(overageLine(tally.overage));
    return;
  }
  await report.out.write(`${aligned(headers, widths)}\n`);
  const filter = new UsageTally(report.agents, report.only, undefined, report.tags);
  for await (const batch of report.reading.rows()) {
    let out = "";
    for (const row of batch) if (filter.add(row)) out += `${aligned(rowText(row, report.agents, overage), widths)}\n`;
    if (out) await report.out.write(out);
  }
  if (overage) report.out.line(overageLine(tally.overage));
}

/** A row's cells as printTable shows them: numbers with thousands separators, "-" for nothing. */
function rowText(row: UsageRow, agents: AgentDirectory, overage = true): string[] {
  return rowCells(row, agents, overage).map((cell) => {
    if (cell === null || cell === undefined || cell === "") return "-";
    return typeof cell === "number" ? cell.toLocaleString("en-US") : String(cell);
  });
}

/** Columns two spaces apart, as printTable lays them out. */
function aligned(cells: string[], widths: number[]): string {
  return cells
    .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
    .join("  ")
    .trimEnd();
}

// --- shared ------------------------------------------------------------------------------------

/**
 * Balances are shown for one calendar month of all the agent's rows: a range cut elsewhere, or
 * rows kept by --tag, are not what the plan's credits were spent on.
 */
function hasBalances(report: Report): boolean {
  return report.options.range.period !== undefined && !report.tags;
}

/** The range, and the agent and tags the rows were limited to. */
function describeScope(report: Report, options: { withAgent: boolean } = { withAgent: true }): string {
  const agent = options.withAgent && report.only ? `, agent ${report.only.name}` : "";
  const tags = report.tags ? `, ${report.tags.size === 1 ? "tag" : "tags"} ${[...report.tags].join(" or ")}` : "";
  return `${describeRange(report.options.range)}${agent}${tags}`;
}

function agentUsage(report: Report, metadata: MetadataData, tally: UsageTally): AgentUsage[] {
  return (report.only ? [report.only] : metadata.agents).map((agent) => {
    const plan = canonicalPlanName(report.config, agent.plan) ?? agent.plan;
    const used = tally.agentCredits.get(agent.id) ?? 0;
    const overage = tally.agentOverage.get(agent.id);
    const usage: AgentUsage = { agent: agent.name, plan, used };
    if (hasBalances(report)) usage.balance = (report.config.resolvedPlans[plan]?.monthlyCredits ?? 0) - used;
    if (overage !== undefined) usage.overage = overage;
    return usage;
  });
}

/** `period` for a calendar month (the key --json has always had), else `since` and `until`. */
function rangeFields(report: Report, options: { withAgent: boolean } = { withAgent: true }): Record<string, string> {
  const { range } = report.options;
  const fields: Record<string, string> = range.period ? { period: range.period } : {};
  if (!range.period || options.withAgent) Object.assign(fields, { since: iso(range.since), until: iso(range.until) });
  if (options.withAgent && report.only) fields.agent = report.only.name;
  return fields;
}

function credits(value: number, config: Config): string {
  const dollars = value / config.billing.creditsPerUsd;
  return `${count(value, "credit")} ($${dollars.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })})`;
}

function count(value: number, noun: string): string {
  return `${value.toLocaleString("en-US")} ${noun}${value === 1 ? "" : "s"}`;
}
