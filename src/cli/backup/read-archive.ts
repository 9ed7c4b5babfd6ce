// Read a backup archive into a staging folder, checking every entry against the manifest as it
// comes: manifest.json first, then only the files it lists, each once, as a plain file, with the
// listed size and SHA-256. Anything else refuses the whole archive: a path that is absolute, has
// `..` or leaves gw's entries (tar path traversal), a symbolic or hard link (it could point
// outside the home), a device, a file missing, extra or altered. Nothing here writes outside
// `staging`; the caller moves it into the home only after this resolved.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { Parser, type ReadEntry } from "tar";
import { type BackupManifest, MANIFEST_NAME, MAX_MANIFEST_BYTES, type ManifestFile, parseManifest } from "./backup-manifest.js";
import { isGwArchivePath } from "./home-entries.js";

/** A flaw of the archive itself (as opposed to a failure to read or write). */
export class ArchiveRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArchiveRefusedError";
  }
}

const FILE_TYPES = new Set(["File", "OldFile", "ContiguousFile"]);
/** gzip cannot pack more than about 1032:1, so a genuine backup is always under this. */
const MAX_DECOMPRESSION_RATIO = 1100;

export async function extractVerified(source: Readable, staging: string): Promise<BackupManifest> {
  const parser = new Parser({ strict: true, maxDecompressionRatio: MAX_DECOMPRESSION_RATIO });
  const reader = new EntryReader(staging);
  let failure: unknown = null;
  let chain = Promise.resolve();
  parser.on("entry", (entry: ReadEntry) => {
    chain = chain.then(async () => {
      if (failure !== null) return entry.resume();
      try {
        await reader.take(entry);
      } catch (error) {
        failure = error;
        entry.resume();
        parser.abort(error as Error);
      }
    });
  });
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on("end", resolve);
    parser.on("error", reject);
    source.on("error", reject);
  });
  source.pipe(parser);
  try {
    await parsed;
  } catch (error) {
    failure ??= error;
  } finally {
    source.unpipe(parser);
    // Stopped early (a refused entry): close the file rather than read the rest.
    if (!source.readableEnded) source.destroy();
  }
  await chain;
  if (failure !== null) throw describeFailure(failure);
  return reader.finish();
}

class EntryReader {
  private manifest: BackupManifest | null = null;
  private readonly expected = new Map<string, ManifestFile>();
  private readonly directories = new Set<string>();
  private readonly seen = new Set<string>();

  constructor(private readonly staging: string) {}

  async take(entry: ReadEntry): Promise<void> {
    if (this.manifest === null) return this.takeManifest(entry);
    const name = entry.path;
    refuseOutside(name);
    if (entry.type === "Directory") {
      // Folder entries (an archive re-packed by hand has them) are fine when they hold listed files.
      if (!this.directories.has(name.replace(/\/+$/, ""))) throw new ArchiveRefusedError(`entry ${name} is a folder not in the manifest`);
      return entry.resume();
    }
    if (entry.type === "SymbolicLink" || entry.type === "Link") {
      throw new ArchiveRefusedError(
        `entry ${name} is a ${entry.type === "Link" ? "hard" : "symbolic"} link (to ${entry.linkpath ?? "?"}); a gw backup has none`,
      );
    }
    if (!FILE_TYPES.has(entry.type)) throw new ArchiveRefusedError(`entry ${name} is a ${entry.type}, not a file; a gw backup has none`);
    const listed = this.expected.get(name);
    if (!listed) throw new ArchiveRefusedError(`entry ${name} is not in the manifest`);
    if (this.seen.has(name)) throw new ArchiveRefusedError(`entry ${name} appears twice`);
    this.seen.add(name);
    if (entry.size !== listed.size) throw new ArchiveRefusedError(`${name} has ${entry.size} bytes, the manifest says ${listed.size}`);
    const sha256 = await this.write(entry, name);
    if (sha256 !== listed.sha256) throw new ArchiveRefusedError(`${name} does not match its checksum in the manifest: the archive is damaged or was altered`);
  }

  /** Every listed file arrived. */
  finish(): BackupManifest {
    if (this.manifest === null) throw new ArchiveRefusedError("the archive is empty: not a gw backup");
    const missing = [...this.expected.keys()].filter((name) => !this.seen.has(name));
    if (missing.length > 0) {
      throw new ArchiveRefusedError(
        `${missing.length} ${missing.length === 1 ? "file" : "files"} of the manifest not in the archive (${missing.slice(0, 3).join(", ")})`,
      );
    }
    return this.manifest;
  }

  private async takeManifest(entry: ReadEntry): Promise<void> {
    if (entry.path !== MANIFEST_NAME || !FILE_TYPES.has(entry.type)) {
      throw new ArchiveRefusedError(`the first entry is ${entry.path}, not ${MANIFEST_NAME}: not a gw backup`);
    }
    if (entry.size > MAX_MANIFEST_BYTES) throw new ArchiveRefusedError(`${MANIFEST_NAME} is ${entry.size} bytes: not a gw backup manifest`);
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    try {
      this.manifest = parseManifest(Buffer.concat(chunks).toString("utf8"));
    } catch (error) {
      throw new ArchiveRefusedError((error as Error).message);
    }
    for (const file of this.manifest.files) {
      this.expected.set(file.path, file);
      const segments = file.path.split("/");
      for (let length = 1; length < segments.length; length += 1) this.directories.add(segments.slice(0, length).join("/"));
    }
  }

  /** The entry's bytes into the staging folder; returns their SHA-256. */
  private async write(entry: ReadEntry, name: string): Promise<string> {
    const file = path.join(this.staging, ...name.split("/"));
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const hash = createHash("sha256");
    const handle = await fs.open(file, "wx", 0o600);
    try {
      for await (const chunk of entry) {
        hash.update(chunk as Buffer);
        await handle.write(chunk as Buffer);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    return hash.digest("hex");
  }
}

/** The path checks, each with its own reason (the manifest check alone would say less). */
function refuseOutside(name: string): void {
  if (path.posix.isAbsolute(name) || /^[A-Za-z]:/.test(name)) throw new ArchiveRefusedError(`entry ${name} has an absolute path`);
  if (name.split(/[\\/]/).includes("..")) throw new ArchiveRefusedError(`entry ${name} climbs out with ".."`);
  if (!isGwArchivePath(name.replace(/\/+$/, ""))) throw new ArchiveRefusedError(`entry ${name} is not a gw file (config.json, data/, tls/)`);
}

function describeFailure(error: unknown): Error {
  if (error instanceof ArchiveRefusedError) return error;
  const message = (error as Error).message ?? String(error);
  // tar's own findings (bad header checksum, truncated data, not a tar at all) are flaws of the archive too.
  if ((error as { code?: string }).code?.startsWith("TAR_")) return new ArchiveRefusedError(`not a readable gw backup (${message})`);
  return error as Error;
}
