// Cross-process exclusive lock around read-modify-write of a shared file, so that concurrent
// `gw keys create` processes and a running server never lose each other's writes.
import { mkdirSync } from "node:fs";
import path from "node:path";
import lockfile from "proper-lockfile";

export async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  // The lock is a directory `<file>.lock` beside the file; the file itself may not exist yet.
  mkdirSync(path.dirname(file), { recursive: true });
  const release = await lockfile.lock(file, {
    realpath: false,
    lockfilePath: `${file}.lock`,
    stale: 10_000,
    retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
  });
  try {
    return await work();
  } finally {
    await release();
  }
}
