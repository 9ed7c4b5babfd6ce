// Temp folders for tests, removed when the test file's process ends, so a suite run leaves nothing
// in the temp directory. Removal waits for the end of the process (ava runs each test file in its
// own child process: workerThreads is false), after every test and after.always hook, so a server
// or subprocess still closing never finds its home gone.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const created: string[] = [];

process.once("exit", removeTempDirs);

/** A new empty folder under the system temp directory, named `${prefix}XXXXXX`. */
export function tempDir(prefix = "gw-test-"): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(directory);
  return directory;
}

/** A new empty folder `name` inside a new temp folder: for stores that write beside their folder (a usage log's watermark file). */
export function tempSubdir(prefix: string, name = "data"): string {
  const directory = path.join(tempDir(prefix), name);
  mkdirSync(directory);
  return directory;
}

/** Remove the folders made so far (also done when the process exits). */
export function removeTempDirs(): void {
  for (const directory of created.splice(0)) rmSync(directory, { recursive: true, force: true, maxRetries: 3 });
}
