// The blob store named by the config's `storage.driver`: "fs" (default, streaming, under
// $GW_HOME/data/blobs unless `storage.options.base` says otherwise), "s3" (the gateway's own
// streaming S3 driver, s3-stream-driver.ts), or any other unstorage builtin driver by name
// ("redis", "memory" ...) with `storage.options` as its options.
import path from "node:path";
import { builtinDrivers, createStorage, type Driver } from "unstorage";
import type { BlobStore } from "./blob-store.js";
import { streamingFsDriver } from "./fs-stream-driver.js";
import { UnstorageBlobStore } from "./unstorage-blob-store.js";

export interface BlobStoreSettings {
  driver: string;
  options: Record<string, unknown>;
}

export async function createBlobStore(settings: BlobStoreSettings, defaultBase: string): Promise<UnstorageBlobStore> {
  const driver = await loadDriver(settings, defaultBase);
  return new UnstorageBlobStore(createStorage({ driver }));
}

async function loadDriver(settings: BlobStoreSettings, defaultBase: string): Promise<Driver> {
  if (settings.driver === "fs") {
    const base = typeof settings.options.base === "string" ? path.resolve(settings.options.base) : defaultBase;
    return streamingFsDriver({ ...settings.options, base });
  }
  // Before the builtin lookup: unstorage's own s3 driver holds whole files in memory. Loaded only
  // for S3, as the other drivers are: a server on the filesystem never loads the S3 client.
  if (settings.driver === "s3") return (await import("./s3-stream-driver.js")).streamingS3Driver(settings.options);
  // Only unstorage's own driver modules: the name never becomes an arbitrary import path.
  const drivers = builtinDrivers as Record<string, string>;
  const specifier = Object.hasOwn(drivers, settings.driver) ? drivers[settings.driver] : undefined;
  if (!specifier) throw new Error(`storage.driver "${settings.driver}" is not an unstorage driver (fs, s3, redis, memory ...)`);
  const module = (await import(specifier)) as { default: (options: unknown) => Driver };
  return module.default(settings.options);
}

export type { BlobStore };
