// Temp files of the streaming fs driver's writes: `<base>/.partial/<pid>-<random>`. The pid in the
// name is what tells, at a start, a write that died with its process (garbage at once, whatever
// its age: a crash during uploads must not hold their bytes on disk for an hour) from one that
// another gw on the same home may be receiving right now.
import { randomBytes } from "node:crypto";
import { type Dirent, promises as fs } from "node:fs";
import path from "node:path";

export const PARTIAL_DIRECTORY = ".partial";

/** This process's writes in flight: one process may open several stores on one base (tests do). */
const writing = new Set<string>();

/** A fresh temp file path, this process's own until `releasePartialFile`. */
export function claimPartialFile(directory: string): string {
  const file = path.join(directory, `${process.pid}-${randomBytes(8).toString("hex")}`);
  writing.add(file);
  return file;
}

export function releasePartialFile(file: string): void {
  writing.delete(file);
}

/**
 * Remove every temp file no live write owns. Kept: this process's writes in flight, and files of
 * another live process written to within `quietForMs` (after that long without a byte it is no
 * upload: its pid was reused by an unrelated process). Returns how many were removed.
 */
export async function sweepPartialFiles(directory: string, quietForMs: number): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(directory, { withFileTypes: true });
  } catch {
    return 0;
  }
  let removed = 0;
  for (const entry of entries) {
    const file = path.join(directory, entry.name);
    // Not a file the driver made: not the sweep's to judge.
    if (!entry.isFile() || writing.has(file)) continue;
    if (writtenByAnotherLiveProcess(entry.name)) {
      const stat = await fs.stat(file).catch(() => null);
      if (!stat || Date.now() - stat.mtimeMs < quietForMs) continue;
    }
    await fs.rm(file, { force: true });
    removed += 1;
  }
  return removed;
}

function writtenByAnotherLiveProcess(name: string): boolean {
  const pid = Number(/^(\d+)-/.exec(name)?.[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    // Signal 0 only asks whether the process exists.
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // It exists, and belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
