// `gw restore`: read the archive into a staging folder next to the home (read-archive.ts checks
// every entry and checksum on the way), check the copy opens as a start would open it, and only
// then move it into place. A home that is not empty is refused unless forced; forced, its gw
// entries (config.json, data/, tls/) are moved aside into `.gw-replaced-<time>/` inside it (never
// deleted), and every other file in it is left as it is (docs/decisions.md §14).
import { createReadStream, promises as fs } from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { createBlobStore } from "../../blobs/create-blob-store.js";
import { loadConfigFile } from "../../config/load-config.js";
import { homePaths } from "../../config/paths.js";
import { MetadataStore } from "../../store/metadata-store.js";
import { runningOwner } from "../../store/serve-lock.js";
import { UsageLog } from "../../store/usage-log.js";
import { CliError } from "../cli-error.js";
import type { BackupManifest } from "./backup-manifest.js";
import { gwEntryNames } from "./home-entries.js";
import { ArchiveRefusedError, extractVerified } from "./read-archive.js";
import { refuseRestoreIntoRedisHome } from "./redis-home-refusal.js";

export interface RestoreResult {
  home: string;
  files: number;
  dataBytes: number;
  manifest: BackupManifest;
  /** Where --force moved the home's previous gw files; null when nothing was moved. */
  setAside: string | null;
  /** What else the operator should know (blobs written to the configured store ...). */
  notes: string[];
}

/** `archive` is a file path, or "-" for stdin. */
export async function restoreHome(archive: string, homeDirectory: string, options: { force: boolean; now?: Date }): Promise<RestoreResult> {
  const home = path.resolve(homeDirectory);
  refuseRestoreIntoRedisHome(homePaths(home));
  const present = await homeEntries(home);
  const server = runningOwner(homePaths(home).dataDir);
  if (server) {
    // Its files would be swapped under it, and it would go on with the old balances in memory.
    throw new CliError(`a gw serve (pid ${server.pid} on ${server.host}${server.url ? `, ${server.url}` : ""}) is running on ${home}: stop it first`);
  }
  if (present.length > 0 && !options.force) {
    throw new CliError(
      `${home} is not empty (${present.slice(0, 5).join(", ")}${present.length > 5 ? " ..." : ""}): restore into an empty or new folder, ` +
        `or pass --force to replace its gw files (${gwEntryNames().join(", ")}; moved aside into ${home}/.gw-replaced-<time>/, not deleted) and leave everything else in it as it is`,
    );
  }
  const source = await openSource(archive);
  await fs.mkdir(path.dirname(home), { recursive: true });
  const staging = await fs.mkdtemp(path.join(path.dirname(home), `.${path.basename(home)}.gw-restore-`));
  let manifest: BackupManifest;
  try {
    manifest = await extractVerified(source, staging);
    await assertOpens(staging);
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    const reason = error instanceof ArchiveRefusedError ? error.message : (error as Error).message;
    throw new CliError(`refusing to restore ${archive === "-" ? "stdin" : archive}: ${reason}; nothing was written to ${home}`);
  }
  const setAside = await moveIntoPlace(staging, home, present, options.now ?? new Date());
  const notes = await placeBlobs(home, manifest);
  return { home, files: manifest.files.length, dataBytes: manifest.files.reduce((sum, file) => sum + file.size, 0), manifest, setAside, notes };
}

/** The names in the home folder; empty when it does not exist. */
async function homeEntries(home: string): Promise<string[]> {
  try {
    return (await fs.readdir(home)).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return [];
    if (code === "ENOTDIR") throw new CliError(`${home} is a file, not a folder: pick another --home`);
    throw error;
  }
}

async function openSource(archive: string): Promise<Readable> {
  if (archive === "-") return process.stdin;
  try {
    const stat = await fs.stat(archive);
    if (!stat.isFile()) throw new CliError(`${archive} is not a file`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new CliError(`${archive} does not exist`);
    throw error;
  }
  return createReadStream(archive);
}

/** The restored data must open as the server opens it: the same refusal at restore, not at the next start. */
async function assertOpens(staging: string): Promise<void> {
  const paths = homePaths(staging);
  const store = await MetadataStore.open(paths.metadata);
  store.close();
  UsageLog.open(paths.usageDir).close();
}

/** A missing home becomes the staging folder in one rename; an existing one gets its entries. */
async function moveIntoPlace(staging: string, home: string, present: string[], now: Date): Promise<string | null> {
  if (present.length === 0) {
    try {
      // Missing, or an empty folder (rename may replace one): the staging folder takes its place at once.
      await fs.rename(staging, home);
      return null;
    } catch {
      // A mount point, say: moved entry by entry below.
    }
  }
  const replaced = present.filter((name) => gwEntryNames().includes(name));
  let setAside: string | null = null;
  if (replaced.length > 0) {
    setAside = await fs.mkdtemp(
      path.join(
        home,
        `.gw-replaced-${now
          .toISOString()
          .replace(/\.\d{3}Z$/, "Z")
          .replace(/[-:]/g, "")}-`,
      ),
    );
    for (const name of replaced) await fs.rename(path.join(home, name), path.join(setAside, name));
  }
  for (const name of await fs.readdir(staging)) await fs.rename(path.join(staging, name), path.join(home, name));
  await fs.rmdir(staging);
  return setAside;
}

/**
 * The archive keeps blobs as data/blobs/<agent>/<file>, where the default store reads them. A
 * config whose store is elsewhere (storage.driver, storage.options.base) gets them written there,
 * and the copies under data/blobs removed.
 */
async function placeBlobs(home: string, manifest: BackupManifest): Promise<string[]> {
  const paths = homePaths(home);
  let storage: ReturnType<typeof loadConfigFile>["storage"];
  try {
    storage = loadConfigFile(paths.config).storage;
  } catch (error) {
    return [`the restored config does not load (${(error as Error).message}): the files' bytes stay in ${paths.blobsDir}`];
  }
  const base = typeof storage.options.base === "string" ? path.resolve(storage.options.base) : paths.blobsDir;
  if (storage.driver === "fs" && base === paths.blobsDir) return [];
  const prefix = `${path.relative(home, paths.blobsDir).split(path.sep).join("/")}/`;
  const blobs = manifest.files.filter((file) => file.path.startsWith(prefix));
  const store = await createBlobStore(storage, paths.blobsDir);
  try {
    for (const file of blobs) {
      const key = file.path.slice(prefix.length).split("/").join(":");
      await store.write(key, createReadStream(path.join(home, ...file.path.split("/"))));
    }
  } finally {
    await store.close();
  }
  await fs.rm(paths.blobsDir, { recursive: true, force: true });
  return [
    `${blobs.length} stored ${blobs.length === 1 ? "file's" : "files'"} bytes written to the configured store (${storage.driver === "fs" ? base : `driver ${storage.driver}`})`,
  ];
}
