// One `gw serve` per home. Two servers on one embedded home would each hold their own credit
// reservations and rate buckets in memory and each count the usage log from its own start, so
// together they would spend past every balance. The running server owns `data/serve.json`
// (its pid, host, address and start), touched every HEARTBEAT_MS while it runs and removed when
// it stops. A second server refuses while the owner lives. The owner is gone when its process is
// (same host, so a restart after SIGKILL starts at once) or when the file went untouched for
// STALE_MS (a reused pid, or an owner on another host sharing the folder). The check and the
// write run under the home's cross-process file lock, so two servers started together cannot
// both win.
import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { isObject } from "../json/json-values.js";
import { withFileLock } from "./file-lock.js";

const HEARTBEAT_MS = 10_000;
const STALE_MS = 30_000;

export interface ServeOwner {
  pid: number;
  host: string;
  /** Where it listens, once it does. */
  url?: string;
  startedAt: string;
}

export class ServeLockedError extends Error {
  constructor(readonly owner: ServeOwner) {
    const where = owner.url ? `, ${owner.url}` : "";
    super(`another gw serve (pid ${owner.pid} on ${owner.host}${where}, since ${owner.startedAt}) is using this home`);
    this.name = "ServeLockedError";
  }
}

export interface ServeLock {
  /** Say where the server listens (for the message a second server prints). */
  listening(url: string): void;
  release(): void;
}

export function serveLockFile(dataDir: string): string {
  return path.join(dataDir, "serve.json");
}

/** Become the home's server, or throw ServeLockedError naming the one that is. */
export async function takeServeLock(dataDir: string): Promise<ServeLock> {
  const file = serveLockFile(dataDir);
  const owner: ServeOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  await withFileLock(file, async () => {
    const current = runningOwner(dataDir);
    if (current) throw new ServeLockedError(current);
    writeFileSync(file, JSON.stringify(owner));
  });
  const heartbeat = setInterval(() => touch(file), HEARTBEAT_MS);
  heartbeat.unref();
  return {
    listening(url) {
      owner.url = url;
      writeFileSync(file, JSON.stringify(owner));
    },
    release() {
      clearInterval(heartbeat);
      // Only its own: a file another server wrote after this one was judged gone stays.
      if (readOwner(file)?.pid === owner.pid && readOwner(file)?.host === owner.host) rmSync(file, { force: true });
    },
  };
}

/** The live server of this home, if any (for commands that must not run beside one). */
export function runningOwner(dataDir: string): ServeOwner | undefined {
  const file = serveLockFile(dataDir);
  const owner = readOwner(file);
  if (!owner || owner.pid === process.pid) return undefined;
  const touched = statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (Date.now() - touched > STALE_MS) return undefined;
  if (owner.host === hostname() && !isAlive(owner.pid)) return undefined;
  return owner;
}

function readOwner(file: string): ServeOwner | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.pid !== "number" || typeof value.host !== "string" || typeof value.startedAt !== "string") return undefined;
  return { pid: value.pid, host: value.host, startedAt: value.startedAt, ...(typeof value.url === "string" ? { url: value.url } : {}) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // Removed under us (a restore): the next server judges by the process, as it would anyway.
  }
}
