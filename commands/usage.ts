import { Flags } from "@oclif/core";
import { jsonFlag } from "../src/cli/flags.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { loadConfig, openHome, withMetadata } from "../src/cli/home.js";
import { note, printJson, printLine, printTable } from "../src/cli/output.js";
import { assertPeriod, usageReport } from "../src/cli/usage-report.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";

export default class Usage extends GwCommand {
  static override description = "Credits used and left per agent for a period (calendar month, UTC), and that period's usage rows.";
  static override examples = ["<%= config.bin %> usage", "<%= config.bin %> usage --agent research --period 2025-01 --json"];
  static override flags = {
    agent: Flags.string({ description: "only this agent" }),
    period: Flags.string({ description: "YYYY-MM [default: the current month, UTC]" }),
    json: jsonFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Usage);
    const period = flags.period ?? periodOf(new Date());
    assertPeriod(period);
    const paths = await openHome(flags.home);
    const config = loadConfig(paths);
    const metadata = await withMetadata(paths, async (store) => store.data);
    const { rows, warnings } = UsageLog.readPeriod(paths.usageDir, period);
    const report = usageReport(config, metadata, period, rows, flags.agent, warnings.length);
    // Which lines were left out goes to stderr, so stdout stays the report.
    for (const warning of warnings) note(warning);
    if (flags.json) return printJson(report);
    printLine(`period ${report.period}`);
    printTable(
      ["AGENT", "PLAN", "USED", "BALANCE"],
      report.agents.map((agent) => [agent.agent, agent.plan, agent.used, agent.balance]),
      "no agents",
    );
    if (report.skipped)
      printLine(`${report.skipped} invalid ${report.skipped === 1 ? "row" : "rows"} skipped (not counted in USED); the lines are listed on stderr`);
    if (report.rows.length === 0) return printLine("no usage rows in this period");
    const names = new Map(metadata.agents.map((agent) => [agent.id, agent.name]));
    printLine();
    printTable(
      ["TIME", "AGENT", "KEY", "ENDPOINT", "MODEL", "PROVIDER", "CREDITS", "REQUEST"],
      report.rows.map((row) => [row.time, names.get(row.agent) ?? row.agent, row.keyPrefix, row.endpoint, row.model, row.provider, row.credits, row.requestId]),
    );
  }
}
