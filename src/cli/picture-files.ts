// Reading a local picture file for a command that sends it inline (edit, describe, upscale,
// background removal): a clear message for a missing file, a directory or one over the gateway's
// limit on one picture, checked before anything is read or sent.
import { promises as fs } from "node:fs";
import { CliError } from "./cli-error.js";

/** The gateway's own limit on one picture (gateway/media/picture-input.ts). */
export const MAX_PICTURE_BYTES = 20 * 1024 * 1024;

/** `label` prefixes messages, e.g. `--image`. */
export async function readPictureFile(file: string, label?: string): Promise<Buffer> {
  const name = label ? `${label} ${file}` : file;
  let stat: Awaited<ReturnType<typeof fs.stat>>;
  try {
    stat = await fs.stat(file);
  } catch (error) {
    throw new CliError(`${name}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  if (stat.isDirectory()) throw new CliError(`${name}: is a directory`);
  if (!stat.isFile()) throw new CliError(`${name}: not a regular file`);
  if (stat.size > MAX_PICTURE_BYTES) throw new CliError(`${name} is larger than the ${MAX_PICTURE_BYTES / 1024 / 1024} MB the gateway accepts for one picture`);
  return fs.readFile(file);
}
