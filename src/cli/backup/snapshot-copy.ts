// How one file of a live home is copied into a backup's staging folder, by the way gw writes it:
//
// - replaced whole by rename (config, metadata, records, projects, jobs): one copy from one open
//   file is one version, never a mix;
// - appended (the .jsonl logs): bytes up to the size seen at open, cut after the last complete
//   line, so a row being written at that moment is left out rather than half in;
// - written once and never changed (blobs, a job's reference photo): hard-linked when the staging
//   folder is on the same disk (no bytes copied; a delete after that leaves the link's bytes), else
//   copied.
//
// Each returns false when the source is gone (deleted meanwhile), so the caller decides what that means.
import { promises as fs } from "node:fs";

export async function copyWhole(source: string, destination: string): Promise<boolean> {
  try {
    await fs.copyFile(source, destination);
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
  await fs.chmod(destination, 0o600);
  return true;
}

export async function linkOrCopy(source: string, destination: string): Promise<boolean> {
  try {
    await fs.link(source, destination);
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    // Another disk (EXDEV), or a filesystem without hard links: copy instead.
  }
  return copyWhole(source, destination);
}

/** Copy an append-only log up to its last complete line; false when it does not exist. */
export async function copyCompleteLines(source: string, destination: string): Promise<boolean> {
  let input: fs.FileHandle;
  try {
    input = await fs.open(source, "r");
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
  try {
    const { size } = await input.stat();
    const output = await fs.open(destination, "w", 0o600);
    try {
      await copyRange(input, output, size);
      await output.truncate(await endOfLastLine(input, size));
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
  return true;
}

async function copyRange(input: fs.FileHandle, output: fs.FileHandle, size: number): Promise<void> {
  const chunk = Buffer.alloc(1024 * 1024);
  let position = 0;
  while (position < size) {
    const { bytesRead } = await input.read(chunk, 0, Math.min(chunk.length, size - position), position);
    if (bytesRead === 0) break; // cut short by someone else: what was read is all there is
    await output.write(chunk, 0, bytesRead, position);
    position += bytesRead;
  }
}

/** The length up to and including the last newline of the first `size` bytes (0 when there is none). */
async function endOfLastLine(file: fs.FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const { bytesRead } = await file.read(chunk, 0, end - start, start);
    const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (newline !== -1) return start + newline + 1;
    end = start;
  }
  return 0;
}

export function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}
