// GET /ready's checks: can this gateway do its work right now? The config is loaded (a Gateway
// never runs without one), the metadata and usage-log folders take a new file (what an atomic
// metadata write and a new month's log need) or, on Redis, the shared state store answers a PING
// in time, and the blob store takes and drops a small blob.
// Each probe writes and removes its own file, so it also fails as root on a read-only or full
// disk, where a permission check would pass. Only the check names leave this module: the causes
// (with paths) go to the server's log (docs/decisions.md §12).
import { constants } from "node:fs";
import { access, open, unlink } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import type { BlobStore } from "../blobs/blob-store.js";

/** The checks of the embedded state, in order; on Redis, `state` (the shared store answers) replaces metadata and usage_log. */
export const EMBEDDED_CHECKS = ["config", "metadata", "usage_log", "blob_store"] as const;
export const SHARED_STATE_CHECKS = ["config", "state", "blob_store"] as const;
export type ReadinessCheck = (typeof EMBEDDED_CHECKS)[number] | (typeof SHARED_STATE_CHECKS)[number];

export interface ReadinessResult {
  ready: boolean;
  /** Each check run, in order, and how it went. */
  checks: Partial<Record<ReadinessCheck, "ok" | "failed">>;
  /** The causes of the failed checks, for the server's log only (they name paths). */
  causes: Partial<Record<ReadinessCheck, string>>;
}

export interface ReadinessTargets {
  config: () => unknown;
  /** The embedded state's files, or the shared state store's probe (a PING within its command timeout). */
  state: { driver: "embedded"; metadataFile: string; usageDir: string } | { driver: "redis"; ping: () => Promise<void> };
  blobs: BlobStore;
}

/** A blob key no agent's file can have (theirs are `<agent>:<file>`), reused so a crash leaves at most one. */
const PROBE_KEY = "gw-ready-probe";
/** A blob store that does not answer within this long is not reachable. */
const BLOB_PROBE_TIMEOUT_MS = 5000;

export function readinessChecks(targets: Pick<ReadinessTargets, "state">): readonly ReadinessCheck[] {
  return targets.state.driver === "embedded" ? EMBEDDED_CHECKS : SHARED_STATE_CHECKS;
}

export async function checkReadiness(targets: ReadinessTargets): Promise<ReadinessResult> {
  const { state } = targets;
  const probes: Partial<Record<ReadinessCheck, () => Promise<void>>> = {
    config: async () => {
      if (!targets.config()) throw new Error("no config loaded");
    },
    blob_store: () => withTimeout(probeBlobs(targets.blobs), BLOB_PROBE_TIMEOUT_MS),
  };
  if (state.driver === "embedded") {
    probes.metadata = async () => {
      await probeDirectory(path.dirname(state.metadataFile));
      await access(state.metadataFile, constants.W_OK);
    };
    probes.usage_log = () => probeDirectory(state.usageDir);
  } else probes.state = state.ping;
  const names = readinessChecks(targets);
  const outcomes = await Promise.all(
    names.map(async (name) => {
      try {
        await probes[name]?.();
        return undefined;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    }),
  );
  const result: ReadinessResult = { ready: true, checks: {}, causes: {} };
  names.forEach((name, index) => {
    const cause = outcomes[index];
    result.checks[name] = cause === undefined ? "ok" : "failed";
    if (cause === undefined) return;
    result.ready = false;
    result.causes[name] = cause;
  });
  return result;
}

/** Create, write and remove a file in `directory`; the name is per process, so parallel probes share it. */
async function probeDirectory(directory: string): Promise<void> {
  const file = path.join(directory, `.ready-probe-${process.pid}`);
  const handle = await open(file, "w", 0o600);
  try {
    await handle.write("ready\n");
  } finally {
    await handle.close();
  }
  await unlink(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error; // a parallel probe removed it first
  });
}

async function probeBlobs(blobs: BlobStore): Promise<void> {
  await blobs.write(PROBE_KEY, Readable.from([Buffer.from("ready\n")]));
  await blobs.remove(PROBE_KEY);
}

function withTimeout(work: Promise<void>, milliseconds: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${milliseconds} ms`)), milliseconds);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
