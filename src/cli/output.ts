// Writing results: JSON for --json, aligned tables for people, raw text for pipelines.

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Write to stdout and wait when the pipe is full, so streamed output is neither buffered nor lost. */
export function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const flushed = process.stdout.write(text, (error) => (error ? reject(error) : undefined));
    if (flushed) resolve();
    else process.stdout.once("drain", resolve);
  });
}

export function printLine(text = ""): void {
  process.stdout.write(`${text}\n`);
}

/** Notes for people (what was done, warnings): stderr, so stdout stays a clean result. */
export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

export type Cell = string | number | boolean | null | undefined;

/** A plain aligned table; an empty list prints `empty` instead (e.g. "no keys"). */
export function printTable(headers: string[], rows: Cell[][], empty?: string): void {
  if (rows.length === 0) {
    if (empty) note(empty);
    return;
  }
  const text = [headers, ...rows.map((row) => row.map(formatCell))];
  const widths = headers.map((_, column) => Math.max(...text.map((row) => (row[column] ?? "").length)));
  for (const row of text) {
    const line = row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  ");
    printLine(line.trimEnd());
  }
}

function formatCell(cell: Cell): string {
  if (cell === null || cell === undefined || cell === "") return "-";
  if (typeof cell === "boolean") return cell ? "yes" : "no";
  if (typeof cell === "number") return groupedNumber(cell);
  return cell;
}

/**
 * `cell.toLocaleString("en-US")` ("128,000"): whole numbers grouped here, since the first
 * toLocaleString of a process loads ICU's number formatting, ~35 ms of a listing's start.
 */
export function groupedNumber(value: number): string {
  if (!Number.isSafeInteger(value) || Object.is(value, -0)) return value.toLocaleString("en-US");
  const digits = String(Math.abs(value)).replace(/\B(?=(\d{3})+$)/g, ",");
  return value < 0 ? `-${digits}` : digits;
}

/** `gw chat ... | head` closes the pipe early: stop quietly instead of crashing on EPIPE. */
export function exitQuietlyOnBrokenPipe(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}
