// Writing what the gateway made (a picture, speech) to the file a command chose for it.
import { promises as fs } from "node:fs";
import { CliError } from "./cli-error.js";

export interface OutputTarget {
  path: string;
  /** Default names are never overwritten; a name the user gave is. */
  exclusive: boolean;
}

export async function writeOutputFile(target: OutputTarget, bytes: Uint8Array): Promise<void> {
  try {
    await fs.writeFile(target.path, bytes, { flag: target.exclusive ? "wx" : "w" });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new CliError(`${target.path} already exists; pass -o FILE to choose where to save it`);
    throw new CliError(`${target.path}: ${(error as Error).message}`);
  }
}
