// `gw backup`: stage a consistent snapshot of the home (snapshot-home.ts), pack it with its
// manifest (write-archive.ts), and remove the staging folder whatever happens.
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HomePaths } from "../../config/paths.js";
import { refuseBackupOfRedisHome } from "./redis-home-refusal.js";
import { snapshotHome } from "./snapshot-home.js";
import { type WrittenArchive, writeArchive } from "./write-archive.js";

export interface BackupResult extends WrittenArchive {
  /** What was left out or changed on the way (uploads in flight, files deleted meanwhile ...). */
  notes: string[];
}

export async function takeBackup(paths: HomePaths, output: string, now = new Date()): Promise<BackupResult> {
  refuseBackupOfRedisHome(paths);
  const staging = await stagingFolder(paths.home);
  try {
    const snapshot = await snapshotHome(paths, staging);
    return { ...(await writeArchive(snapshot, paths.home, output, now)), notes: snapshot.notes };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/**
 * Inside the home when it can be written: on the blobs' disk, so they are hard-linked rather than
 * copied (a dot-folder no part of gw reads). Else the system's temp folder, and the bytes are copied.
 */
async function stagingFolder(home: string): Promise<string> {
  try {
    return await fs.mkdtemp(path.join(home, ".gw-backup-"));
  } catch {
    return fs.mkdtemp(path.join(os.tmpdir(), "gw-backup-"));
  }
}
