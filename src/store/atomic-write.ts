// Write a whole file so that a reader (or a crash at any moment) sees the old or the new
// content, never a mix: temp file in the same directory, fsync, rename.
import { randomBytes } from "node:crypto";
import { closeSync, promises as fs, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import path from "node:path";

/** `mode`: the new file's permissions (owner-only unless said otherwise). */
export function writeFileAtomic(file: string, content: string, mode = 0o600): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  const fd = openSync(temporary, "w", mode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}

/**
 * The same without blocking: `<file>.<pid>.<random>.tmp` beside it, so that writes of one file
 * running at once never share a temp file (the last rename wins); the temp file is removed when
 * the write fails; a `.tmp` name left over is a write a crash cut short.
 */
export async function writeFileAtomically(file: string, content: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await fs.open(temporary, "wx", 0o600);
  try {
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}
