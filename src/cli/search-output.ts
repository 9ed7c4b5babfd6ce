// How `gw search` shows results to people: a numbered list, each result its title, then its
// address and date, then its snippet wrapped to the terminal's width, a blank line between
// results. Text from the web is shown as text: escape sequences a page could use to drive the
// terminal are dropped, other control characters become spaces, runs of whitespace one space.
import type { SearchResultItem } from "../client/search-types.js";
import { replaceC0AndC1Controls, withoutTerminalEscapes } from "../text/control-characters.js";

/** When nothing says how wide the output is (a pipe, a file). */
export const DEFAULT_WIDTH = 80;
/** The least room a wrapped line keeps beside its indent, however narrow the terminal. */
const MIN_TEXT_WIDTH = 20;

/** $COLUMNS when it is a positive number, else the terminal's width, else 80. */
export function outputWidth(env: NodeJS.ProcessEnv = process.env, stdout: { isTTY?: boolean; columns?: number } = process.stdout): number {
  const columns = Number(env.COLUMNS);
  if (env.COLUMNS?.trim() && Number.isInteger(columns) && columns > 0) return columns;
  if (stdout.isTTY && stdout.columns && stdout.columns > 0) return stdout.columns;
  return DEFAULT_WIDTH;
}

/**
 * One line of plain text: terminal escape sequences (colours, titles, links) removed, other control
 * characters as spaces, whitespace runs as one space, trimmed.
 */
export function plainText(text: string): string {
  return replaceC0AndC1Controls(withoutTerminalEscapes(text), " ").replace(/\s+/g, " ").trim();
}

/**
 * `text` in lines of at most `width` characters (code points), each after `indent` spaces but the
 * first, which follows `first` (a prefix of the same length, such as "3. "). Words break at
 * spaces; a word longer than a line (a long address) is cut across lines.
 */
export function wrap(text: string, width: number, indent: number, first = " ".repeat(indent)): string[] {
  const room = Math.max(MIN_TEXT_WIDTH, width - indent);
  const lines: string[] = [];
  let line: string[] = [];
  let length = 0;
  for (const word of plainText(text).split(" ")) {
    if (!word) continue;
    let rest = Array.from(word);
    if (length > 0 && length + 1 + rest.length > room) {
      lines.push(line.join(""));
      line = [];
      length = 0;
    }
    if (length > 0) {
      line.push(" ");
      length += 1;
    }
    while (length + rest.length > room) {
      const taken = rest.slice(0, room - length);
      line.push(taken.join(""));
      lines.push(line.join(""));
      line = [];
      length = 0;
      rest = rest.slice(taken.length);
    }
    line.push(rest.join(""));
    length += rest.length;
  }
  if (length > 0) lines.push(line.join(""));
  const pad = " ".repeat(indent);
  return lines.map((text, index) => `${index === 0 ? first : pad}${text}`);
}

/**
 * The results as the text `gw search` prints: for each, `N. Title`, the address (never cut, so it
 * can be copied whole) and the date when there is one, the snippet, all lines after the first
 * indented under the title; a blank line between results.
 */
export function resultLines(results: SearchResultItem[], width: number): string[] {
  const lines: string[] = [];
  results.forEach((result, index) => {
    const number = `${index + 1}. `;
    const indent = number.length;
    const pad = " ".repeat(indent);
    if (index > 0) lines.push("");
    const title = plainText(result.title) || "(untitled)";
    lines.push(...wrap(title, width, indent, number));
    const address = plainText(result.url).replace(/ /g, "%20");
    const date = result.publishedDate ? plainText(result.publishedDate) : "";
    lines.push(`${pad}${address}${date ? ` · ${date}` : ""}`);
    lines.push(...wrap(result.snippet ?? "", width, indent));
  });
  return lines;
}

/** The note on stderr above the list: how many results, and which provider answered. */
export function resultsHeader(count: number, provider: string): string {
  return `${count} result${count === 1 ? "" : "s"} from ${provider}`;
}
