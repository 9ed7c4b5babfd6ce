// A staged snapshot as a .tar.gz: manifest.json first (each file's size and SHA-256), then the
// files in the order they were taken. Written to a temp file beside the output and renamed into
// place, so a backup that fails or is stopped never leaves a truncated archive under its name.
import { createHash } from "node:crypto";
import { createReadStream, promises as fs } from "node:fs";
import path from "node:path";
import { create as createTar } from "tar";
import { gwVersion } from "../../config/project-root.js";
import { BACKUP_FORMAT, type BackupManifest, MANIFEST_NAME, type ManifestFile, serializeManifest } from "./backup-manifest.js";
import type { Snapshot } from "./snapshot-home.js";

export interface WrittenArchive {
  /** The archive's path; null when it went to stdout. */
  path: string | null;
  /** Files in the archive besides the manifest. */
  files: number;
  /** Bytes of the archive (compressed). */
  bytes: number;
  /** Bytes of the files it holds (uncompressed). */
  dataBytes: number;
  manifest: BackupManifest;
}

/** `gw-backup-20260315T120000Z.tar.gz`: sorts by time, and no character a shell or Windows minds. */
export function defaultArchiveName(now: Date): string {
  return `gw-backup-${now
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z")
    .replace(/[-:]/g, "")}.tar.gz`;
}

/** `output` is a file path, or "-" for stdout. */
export async function writeArchive(snapshot: Snapshot, sourceHome: string, output: string, now: Date): Promise<WrittenArchive> {
  const files: ManifestFile[] = [];
  for (const name of snapshot.files) files.push({ path: name, ...(await describe(path.join(snapshot.directory, ...name.split("/")))) });
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    version: 1,
    gwVersion: gwVersion(),
    createdAt: now.toISOString(),
    sourceHome,
    contents: snapshot.contents,
    files,
  };
  await fs.writeFile(path.join(snapshot.directory, MANIFEST_NAME), serializeManifest(manifest), { mode: 0o600 });
  // portable: no owner names or ids of this machine in the archive.
  const pack = createTar({ gzip: true, portable: true, cwd: snapshot.directory }, [MANIFEST_NAME, ...snapshot.files]);
  const bytes = output === "-" ? await toStdout(pack) : await toFile(pack, output);
  return {
    path: output === "-" ? null : path.resolve(output),
    files: files.length,
    bytes,
    dataBytes: files.reduce((sum, file) => sum + file.size, 0),
    manifest,
  };
}

async function describe(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest("hex") };
}

async function toFile(pack: AsyncIterable<Buffer>, output: string): Promise<number> {
  const target = path.resolve(output);
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
  const handle = await fs.open(temporary, "wx", 0o600).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot write ${target}: ${error.code === "ENOENT" ? "its folder does not exist" : error.message}`);
  });
  let bytes = 0;
  try {
    try {
      for await (const chunk of pack) {
        await handle.write(chunk);
        bytes += chunk.length;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, target);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
  return bytes;
}

async function toStdout(pack: AsyncIterable<Buffer>): Promise<number> {
  let bytes = 0;
  for await (const chunk of pack) {
    bytes += chunk.length;
    // Waiting for each chunk to be flushed keeps at most one chunk in memory whatever reads the pipe.
    await new Promise<void>((resolve, reject) => process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())));
  }
  return bytes;
}
