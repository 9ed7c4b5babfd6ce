// CSV lines (RFC 4180 quoting) for `gw usage --format csv`: a field holding a comma, a quote, a
// line break or edge spaces is quoted, its quotes doubled. Lines end in \n, as Unix tools expect.
export type CsvCell = string | number | null | undefined;

export function csvLine(cells: CsvCell[]): string {
  return `${cells.map(csvField).join(",")}\n`;
}

function csvField(cell: CsvCell): string {
  if (cell === null || cell === undefined) return "";
  const text = String(cell);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
