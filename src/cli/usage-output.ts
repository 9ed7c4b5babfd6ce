// Where `gw usage` writes its report (src/admin/usage-report.ts): the document or the table on
// stdout, warnings on stderr, charts as wide as the terminal.
import type { ReportOutput } from "../admin/usage-report.js";
import { note, printLine, printTable, writeStdout } from "./output.js";
import { barChart } from "./usage-chart.js";

export function terminalReport(columns: number): ReportOutput {
  return {
    write: writeStdout,
    line: printLine,
    table: printTable,
    chart: (bars) => barChart(bars, columns, (value) => value.toLocaleString("en-US")),
    note,
  };
}
