// The lines of a usage log file, read a chunk at a time: a month of a million rows (300 MB) never
// sits in memory as one string. Lines are cut at the newline byte, which never occurs inside a
// multi-byte UTF-8 character, so a chunk boundary cannot split a character of a line that is
// decoded. Only complete lines are handed over: what follows the last newline is a write that was
// cut short, never acknowledged. Blank lines are counted (warnings number lines as an editor
// does) but not handed over.
import { closeSync, createReadStream, openSync, readSync } from "node:fs";
import { open } from "node:fs/promises";

const NEWLINE = 0x0a;
const CHUNK_BYTES = 1 << 20;
/** Backward reads look for a few rows: smaller steps. */
const BACKWARD_CHUNK_BYTES = 64 * 1024;

export interface LogLine {
  text: string;
  /** 1-based, blank lines included. */
  number: number;
}

/** Where a reading starts: the end of a complete line, and how many lines come before it. */
export interface LinePosition {
  bytes: number;
  lines: number;
}

/**
 * Hand each complete, non-blank line of `buffer` to `onLine` with its number (counting on from
 * `number`, blank lines included). Returns the last line's number and where the incomplete rest
 * of the buffer (after its last newline) begins.
 */
function eachCompleteLine(buffer: Buffer, number: number, onLine: (text: string, number: number) => void): { number: number; rest: number } {
  let start = 0;
  let counted = number;
  for (let newline = buffer.indexOf(NEWLINE); newline !== -1; newline = buffer.indexOf(NEWLINE, start)) {
    counted += 1;
    const text = buffer.toString("utf8", start, newline);
    if (text.trim()) onLine(text, counted);
    start = newline + 1;
  }
  return { number: counted, rest: start };
}

/**
 * Synchronously, for the log's opening (a start has nothing else to do meanwhile): every complete
 * line from `from` to the end of the file as it is now. Returns the position after the last
 * complete line, and the file's size (more when its last line is incomplete).
 */
export function readLinesSync(file: string, from: LinePosition, onLine: (text: string, number: number) => void): LinePosition & { size: number } {
  const fd = openSync(file, "r");
  try {
    let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    /** Bytes at the buffer's start carried over from the last read: the start of a line not yet complete. */
    let carried = 0;
    let readAt = from.bytes;
    let end = from.bytes;
    let number = from.lines;
    for (;;) {
      // A line longer than the buffer: room for more of it.
      if (carried === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)]);
      const read = readSync(fd, buffer, carried, buffer.length - carried, readAt);
      if (read === 0) break;
      readAt += read;
      const view = buffer.subarray(0, carried + read);
      const cut = eachCompleteLine(view, number, onLine);
      number = cut.number;
      end += cut.rest;
      carried = view.length - cut.rest;
      if (carried > 0 && cut.rest > 0) view.copy(buffer, 0, cut.rest);
    }
    return { bytes: end, lines: number, size: readAt };
  } finally {
    closeSync(fd);
  }
}

/**
 * The complete, non-blank lines of the file's first `bytes` (from `from`: a line's start, and
 * how many lines come before it), a chunk's worth at a time, without blocking (reports, lookups).
 */
export async function* readLines(file: string, bytes: number, from: LinePosition = { bytes: 0, lines: 0 }): AsyncGenerator<LogLine[]> {
  if (bytes <= from.bytes) return;
  let carry: Buffer | null = null;
  let number = from.lines;
  for await (const chunk of createReadStream(file, { start: from.bytes, end: bytes - 1, highWaterMark: CHUNK_BYTES })) {
    const buffer: Buffer = carry ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    const lines: LogLine[] = [];
    const cut = eachCompleteLine(buffer, number, (text, at) => lines.push({ text, number: at }));
    number = cut.number;
    carry = cut.rest < buffer.length ? buffer.subarray(cut.rest) : null;
    yield lines;
  }
}

/**
 * The complete, non-blank lines before `end` (the end of a line, and how many lines come up to
 * it), the last first: a report's last rows, read from the end of a month without its start.
 */
export async function* readLinesBackward(file: string, end: LinePosition): AsyncGenerator<LogLine> {
  const handle = await open(file, "r");
  try {
    let position = end.bytes;
    let number = end.lines;
    /** Bytes after `position` not handed over yet: the end of a line whose start is further back. */
    let carry: Buffer | null = null;
    while (position > 0) {
      const size = Math.min(BACKWARD_CHUNK_BYTES, position);
      position -= size;
      const chunk = Buffer.allocUnsafe(size);
      for (let filled = 0; filled < size; ) {
        const { bytesRead } = await handle.read(chunk, filled, size - filled, position + filled);
        if (bytesRead === 0) throw new Error(`${file} is shorter than ${end.bytes} bytes`);
        filled += bytesRead;
      }
      const buffer: Buffer = carry ? Buffer.concat([chunk, carry]) : chunk;
      // `buffer` ends with a newline; `stop` is the end (newline included) of the line looked at.
      let stop = buffer.length;
      while (stop > 0) {
        const newline = stop >= 2 ? buffer.lastIndexOf(NEWLINE, stop - 2) : -1;
        if (newline === -1 && position > 0) break; // this line starts in an earlier chunk
        const start = newline + 1;
        const text = buffer.toString("utf8", start, stop - 1);
        if (text.trim()) yield { text, number };
        number -= 1;
        stop = start;
      }
      carry = stop > 0 ? buffer.subarray(0, stop) : null;
    }
  } finally {
    await handle.close();
  }
}

/**
 * Whether a complete line of the file's first `bytes` holds `needle` (its UTF-8 bytes), searched in
 * the raw bytes so that only the lines that hold it are decoded: each such line goes to `matches`,
 * which says whether it is the one looked for.
 */
export async function someLineHolding(file: string, bytes: number, needle: string, matches: (text: string) => boolean): Promise<boolean> {
  if (bytes === 0) return false;
  const pattern = Buffer.from(needle);
  let carry: Buffer | null = null;
  for await (const chunk of createReadStream(file, { start: 0, end: bytes - 1, highWaterMark: CHUNK_BYTES })) {
    const buffer: Buffer = carry ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    const complete = buffer.lastIndexOf(NEWLINE) + 1;
    for (let found = buffer.indexOf(pattern); found !== -1 && found < complete; found = buffer.indexOf(pattern, found + 1)) {
      const start = buffer.lastIndexOf(NEWLINE, found) + 1;
      const end = buffer.indexOf(NEWLINE, found);
      if (matches(buffer.toString("utf8", start, end))) return true;
      found = end;
    }
    carry = complete < buffer.length ? buffer.subarray(complete) : null;
  }
  return false;
}
