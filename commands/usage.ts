import { Flags } from "@oclif/core";
import { AdminInputError, AdminLookupError } from "../src/admin/admin-requests.js";
import { USAGE_DIMENSIONS } from "../src/admin/usage-groups.js";
import { reportRange } from "../src/admin/usage-range.js";
import { printUsage, RECENT_ROWS, USAGE_FORMATS } from "../src/admin/usage-report.js";
import { CliError, UsageError } from "../src/cli/cli-error.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { openHome, withUsageHistory } from "../src/cli/home.js";
import { loadHomeConfig } from "../src/cli/home-config.js";
import { writeStdout } from "../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../src/cli/remote-admin.js";
import { terminalColumns } from "../src/cli/usage-chart.js";
import { terminalReport } from "../src/cli/usage-output.js";
import { isTag, TAG_RULE } from "../src/text/tag-syntax.js";

export default class Usage extends GwCommand {
  static override description = [
    "Credits used per agent and the usage rows of a range (default: this calendar month, UTC), or their sums per day, model, agent, key, endpoint or tag.",
    "",
    "Times are UTC. --since is inclusive. --until is exclusive as a time, but a date names a whole day that is included: --since 2025-03-01 --until 2025-03-31 is all of March. --since alone runs through today; --until alone starts at the beginning of its month. The balance (the plan's monthly credits less those used) is shown when the range is one calendar month.",
    "",
    `Without --by the table lists the last ${RECENT_ROWS} rows (--rows: every row); --format json and csv carry every row. Credits are integers, one credit a micro-dollar. The log is read streaming, so a month of a million rows reports in seconds.`,
    "",
    "Tags are what requests carried in x-gw-tags or as OpenAI metadata pairs (key:value). --by tag counts a row with several tags in each of its tags' groups (and once in the total); rows without tags are the group (none). --tag keeps the rows carrying that tag; given several times, any of them.",
  ].join("\n");
  static override examples = [
    "<%= config.bin %> usage",
    "<%= config.bin %> usage --agent research --period 2025-01 --json",
    "<%= config.bin %> usage --by model --since 2025-03-01 --until 2025-03-15",
    "<%= config.bin %> usage --chart",
    "<%= config.bin %> usage --by key --format csv > keys.csv",
    "<%= config.bin %> usage --by tag --tag customer:acme --tag customer:globex",
  ];
  static override flags = {
    agent: Flags.string({ description: "only this agent (name or id)" }),
    period: Flags.string({ description: "one calendar month, YYYY-MM [default: the current month, UTC]", exclusive: ["since", "until"] }),
    since: Flags.string({ description: "start, inclusive: YYYY-MM-DD or an ISO 8601 time (UTC unless it names a zone)" }),
    until: Flags.string({ description: "end: a YYYY-MM-DD date is included whole; an ISO 8601 time is exclusive" }),
    by: Flags.option({ description: "sum the rows per day, model, agent, key, endpoint or tag", options: USAGE_DIMENSIONS })(),
    tag: Flags.string({ description: "only rows carrying this tag (repeat for any of several)", multiple: true }),
    format: Flags.option({ description: "table for people, json or csv for programs", options: USAGE_FORMATS, default: "table" as const })(),
    json: Flags.boolean({ description: "the same as --format json (kept for scripts)", default: false, exclusive: ["format"] }),
    chart: Flags.boolean({
      description: "a bar chart of the credits per day (or per --by group), as wide as the terminal ($COLUMNS overrides; 80 when not a terminal)",
      default: false,
      exclusive: ["json", "rows"],
    }),
    rows: Flags.boolean({ description: `list every row of the range in the table [default: the last ${RECENT_ROWS}]`, default: false, exclusive: ["by"] }),
    ...remoteAdminFlags,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Usage);
    const format = flags.json ? "json" : flags.format;
    if (flags.chart && format !== "table") throw new UsageError(`--chart draws for a terminal; it cannot be combined with --format ${format}`);
    if (flags.rows && format !== "table") throw new UsageError(`--rows lists rows in the table; --format ${format} carries every row already`);
    for (const tag of flags.tag ?? []) if (!isTag(tag)) throw new UsageError(`--tag ${JSON.stringify(tag)} cannot be a tag: a tag is ${TAG_RULE}`);
    const now = new Date();
    const range = asCommandLineError(() => reportRange(flags, now));
    const admin = remoteAdmin(flags);
    if (admin) {
      // The gateway writes the document; the table and chart are drawn from a home's history only.
      if (format === "table") throw new UsageError("with --url, give --format json or --format csv: the report is the gateway's document");
      const query = new URLSearchParams({ format });
      for (const name of ["period", "since", "until", "agent", "by"] as const) if (flags[name] !== undefined) query.set(name, flags[name]);
      for (const tag of flags.tag ?? []) query.append("tag", tag);
      return remotely(() => admin.usageReport(query, writeStdout));
    }
    const paths = await openHome(flags.home);
    const config = await loadHomeConfig(paths);
    const out = terminalReport(terminalColumns(process.env, process.stdout));
    // On a home whose state is in Redis, the rows every instance wrote are read from its streams.
    await withUsageHistory(paths, (metadata, history) =>
      printUsage(out, config, metadata, history, {
        range,
        ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
        ...(flags.by !== undefined ? { by: flags.by } : {}),
        ...(flags.tag !== undefined ? { tags: flags.tag } : {}),
        format,
        chart: flags.chart,
        allRows: flags.rows,
        now,
      }).catch((error: unknown) => {
        throw error instanceof AdminLookupError ? new CliError(error.message) : error;
      }),
    );
  }
}

/** A range the command line names wrongly is a usage error (exit 2). */
function asCommandLineError<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw error instanceof AdminInputError ? new UsageError(error.message) : error;
  }
}
