// unstorage's `fs` driver with two additions the gateway needs for files of up to 50 MB:
//
// - `setItemRaw` takes a Node stream (as well as bytes) and writes it to a temp file under
//   `<base>/.partial/`, fsyncs it and renames it into place. unstorage 1.x hands the value to the
//   driver untouched, but the stock fs driver writes straight to the final path: a failed or
//   aborted upload would leave a truncated blob behind. Here the key holds all bytes or none.
// - `getItemStream` opens the file and returns a read stream with its size. unstorage 1.x has
//   no streaming read (`getItemRaw` reads the whole file into memory).
//
// Everything else (hasItem, removeItem, getKeys, clear ...) is the stock driver.
import { randomBytes } from "node:crypto";
import { mkdirSync, promises as fs } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { defineDriver, type Driver } from "unstorage";
import fsDriver, { type FSStorageOptions } from "unstorage/drivers/fs";

export interface StreamingFsOptions extends FSStorageOptions {
  base: string;
}

export interface StreamingDriverExtras {
  /** Marks a driver whose `setItemRaw` accepts a Node Readable. */
  readonly streamsWrites: true;
  getItemStream(key: string): Promise<{ body: Readable; sizeBytes: number } | null>;
  /** Remove temp files of writes that died with a previous process. */
  sweepPartials(olderThanMs: number): Promise<number>;
}

export type StreamingFsDriver = Driver<StreamingFsOptions, never> & StreamingDriverExtras;

export const PARTIAL_DIRECTORY = ".partial";

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
      const temporary = path.join(partialDirectory, `${process.pid}-${randomBytes(8).toString("hex")}`);
      const handle = await fs.open(temporary, "wx", 0o600);
      try {
        try {
          if (value instanceof Readable) {
            for await (const chunk of value) await handle.write(chunk as Buffer);
          } else if (typeof value === "string") {
            await handle.write(value, null, "utf8");
          } else if (value instanceof Uint8Array) {
            await handle.write(value);
          } else {
            throw new TypeError("[unstorage] [gw-fs] setItemRaw takes a Readable, a Uint8Array or a string");
          }
          await handle.sync();
        } finally {
          await handle.close();
        }
        await fs.mkdir(path.dirname(file), { recursive: true });
        await fs.rename(temporary, file);
      } catch (error) {
        await fs.rm(temporary, { force: true });
        throw error;
      }
    },
    async getItemStream(key: string) {
      let handle: fs.FileHandle;
      try {
        handle = await fs.open(fileOf(key), "r");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw error;
      }
      try {
        const { size } = await handle.stat();
        return { body: handle.createReadStream({ autoClose: true }), sizeBytes: size };
      } catch (error) {
        await handle.close();
        throw error;
      }
    },
    async sweepPartials(olderThanMs: number) {
      let names: string[];
      try {
        names = await fs.readdir(partialDirectory);
      } catch {
        return 0;
      }
      let removed = 0;
      for (const name of names) {
        const file = path.join(partialDirectory, name);
        const stat = await fs.stat(file).catch(() => null);
        if (stat && Date.now() - stat.mtimeMs >= olderThanMs) {
          await fs.rm(file, { force: true });
          removed += 1;
        }
      }
      return removed;
    },
  };
  return driver;
});

export function isStreamingDriver(driver: Driver): driver is Driver & StreamingDriverExtras {
  return (driver as Partial<StreamingDriverExtras>).streamsWrites === true;
}
