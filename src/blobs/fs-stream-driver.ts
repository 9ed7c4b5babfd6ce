// unstorage's `fs` driver with three changes the gateway needs for files of up to 50 MB:
//
// - `setItemRaw` takes a Node stream (as well as bytes) and writes it to a temp file under
//   `<base>/.partial/` (file-sink.ts: batched writes, handed to the disk as they go), fsyncs it
//   and renames it into place. unstorage 1.x hands the value to the driver untouched, but the
//   stock fs driver writes straight to the final path: a failed or aborted upload would leave a
//   truncated blob behind. Here the key holds all bytes or none.
// - `getItemStream` opens the file and returns a read stream with its size. unstorage 1.x has
//   no streaming read (`getItemRaw` reads the whole file into memory).
// - `removeItem` throws when the file is there and cannot be removed. The stock driver resolves
//   with the error instead, so a blob left behind (or a directory in its place) went unnoticed.
//
// Everything else (hasItem, getKeys, clear ...) is the stock driver.
import { promises as fs, mkdirSync } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { type Driver, defineDriver } from "unstorage";
import fsDriver, { type FSStorageOptions } from "unstorage/drivers/fs";
import { writeStreamSynced } from "./file-sink.js";
import { claimPartialFile, PARTIAL_DIRECTORY, releasePartialFile, sweepPartialFiles } from "./partial-files.js";

export { PARTIAL_DIRECTORY };

export interface StreamingFsOptions extends FSStorageOptions {
  base: string;
}

export interface StreamingDriverExtras {
  /** Marks a driver whose `setItemRaw` accepts a Node Readable. */
  readonly streamsWrites: true;
  getItemStream(key: string): Promise<{ body: Readable; sizeBytes: number } | null>;
  /** Remove temp files no live write owns (see partial-files.ts). */
  sweepPartials(quietForMs: number): Promise<number>;
}

/**
 * A download reads the file in chunks of this size: a quarter of the reads, socket writes and
 * stream turns of the 64 KiB default, for one such buffer more per download (scripts/bench-transfer.mjs).
 */
const READ_CHUNK_BYTES = 256 * 1024;

export type StreamingFsDriver = Driver<StreamingFsOptions, never> & StreamingDriverExtras;

export const streamingFsDriver = defineDriver((options: StreamingFsOptions) => {
  const base = path.resolve(options.base);
  const partialDirectory = path.join(base, PARTIAL_DIRECTORY);
  const stock = fsDriver({ ignore: ["**/node_modules/**", "**/.git/**", `**/${PARTIAL_DIRECTORY}/**`], ...options, base });

  /** Same mapping as the stock driver (`a:b` -> `<base>/a/b`), refusing anything outside base. */
  const fileOf = (key: string): string => {
    const file = path.resolve(base, key.replace(/:/g, "/"));
    if (!file.startsWith(`${base}${path.sep}`) || key.split(":").some((segment) => segment === "" || segment === "." || segment === "..")) {
      throw new Error(`[unstorage] [gw-fs] Invalid key: ${JSON.stringify(key)}`);
    }
    return file;
  };

  const driver: StreamingFsDriver = {
    ...stock,
    name: "gw-fs",
    options,
    streamsWrites: true,
    async setItemRaw(key: string, value: unknown) {
      if (options.readOnly) return;
      const file = fileOf(key);
      mkdirSync(partialDirectory, { recursive: true });
      const temporary = claimPartialFile(partialDirectory);
      try {
        await writeThenRename(temporary, file, value);
      } finally {
        releasePartialFile(temporary);
      }
    },
    async removeItem(key: string) {
      if (options.readOnly) return;
      await fs.unlink(fileOf(key)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    },
    async getItemStream(key: string) {
      const file = fileOf(key);
      let handle: fs.FileHandle;
      try {
        handle = await fs.open(file, "r");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw error;
      }
      try {
        const stat = await handle.stat();
        // Opening a directory succeeds; reading it would fail only once the answer had started.
        if (!stat.isFile()) throw new Error(`[unstorage] [gw-fs] ${file} is not a regular file: the blob's bytes are not there`);
        // Reading to the known last byte ends the stream without one more read to find EOF, so the
        // answer is complete before a client holding every byte can hang up.
        const end = stat.size > 0 ? stat.size - 1 : undefined;
        return { body: handle.createReadStream({ autoClose: true, end, highWaterMark: READ_CHUNK_BYTES }), sizeBytes: stat.size };
      } catch (error) {
        await handle.close();
        throw error;
      }
    },
    sweepPartials(quietForMs: number) {
      return sweepPartialFiles(partialDirectory, quietForMs);
    },
  };
  return driver;
});

/** Every byte of `value` to `temporary`, fsynced, then renamed to `file`; on failure no temp file stays. */
async function writeThenRename(temporary: string, file: string, value: unknown): Promise<void> {
  const handle = await fs.open(temporary, "wx", 0o600);
  try {
    try {
      if (value instanceof Readable) {
        await writeStreamSynced(handle, value);
      } else {
        if (typeof value === "string") await handle.write(value, null, "utf8");
        else if (value instanceof Uint8Array) await handle.write(value);
        else throw new TypeError("[unstorage] [gw-fs] setItemRaw takes a Readable, a Uint8Array or a string");
        await handle.sync();
      }
    } finally {
      await handle.close();
    }
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}

export function isStreamingDriver(driver: Driver): driver is Driver & StreamingDriverExtras {
  return (driver as Partial<StreamingDriverExtras>).streamsWrites === true;
}
