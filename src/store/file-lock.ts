// Cross-process exclusive lock around read-modify-write of a shared file, so that concurrent
// `gw keys create` processes and a running server never lose each other's writes.
import { mkdirSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import lockfile from "proper-lockfile";

export async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  // proper-lockfile needs the target to exist; it locks `<file>.lock` (a directory).
  mkdirSync(path.dirname(file), { recursive: true });
  if (!existsSync(file)) writeFileSync(file, "", { flag: "a" });
  const release = await lockfile.lock(file, {
    realpath: false,
    stale: 10_000,
    retries: { retries: 200, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
  });
  try {
    return await work();
  } finally {
    await release();
  }
}
