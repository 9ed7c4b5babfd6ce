// Tables for `gw audio voices` and `gw catalog audio`: prices in dollars from credits, lengths in
// words, and rows cut to the terminal's width (long voice names, many languages; a pipe gets it all).
import type { Cell } from "./output.js";

const CREDITS_PER_USD = 1_000_000;
const ELLIPSIS = "…";

/** Credits (micro-dollars) as dollars: $0.015, $0.30; zero is "free". */
export function usd(credits: number): string {
  if (credits === 0) return "free";
  return `$${(credits / CREDITS_PER_USD).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

/** 7200 -> "2h", 1500 -> "25m", 90 -> "1m30s". */
export function duration(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  const parts = [hours ? `${hours}h` : "", minutes ? `${minutes}m` : "", rest ? `${rest}s` : ""].join("");
  return parts || "0s";
}

/**
 * The rows with cells cut (…) so that, laid out as printTable lays them (two spaces apart), a line
 * is at most `width` characters: the columns in `shrink` give up room in that order, each down to
 * its header's width (at least 8). No width (not a terminal): the rows as they are.
 */
export function fitColumns(headers: string[], rows: string[][], width: number | undefined, shrink: number[]): Cell[][] {
  if (!width) return rows;
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => shown(row[column]).length)));
  let excess = widths.reduce((sum, columnWidth) => sum + columnWidth, 0) + 2 * (headers.length - 1) - width;
  for (const column of shrink) {
    if (excess <= 0) break;
    const least = Math.max(headers[column]!.length, 8);
    const given = Math.min(excess, Math.max(0, widths[column]! - least));
    widths[column]! -= given;
    excess -= given;
  }
  return rows.map((row) => row.map((cell, column) => cut(cell, widths[column]!)));
}

function shown(cell: string | undefined): string {
  return cell === undefined || cell === "" ? "-" : cell;
}

function cut(cell: string, room: number): string {
  return cell.length > room ? `${cell.slice(0, Math.max(0, room - 1))}${ELLIPSIS}` : cell;
}

/** The terminal's width when stdout is one. */
export function terminalWidth(): number | undefined {
  return process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : undefined;
}
