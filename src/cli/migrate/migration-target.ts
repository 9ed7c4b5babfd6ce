// Where `gw migrate` moves a home: the `state` and `storage` sections its config.json will say
// (as written: `${ENV}` references kept, S3 credentials only as references), and the same with the
// references resolved, which the copy itself uses. A redis state needs blobs every instance reads
// (docs/decisions.md §21): a home whose files are on this machine's disk must say where they go.
import path from "node:path";
import type { BlobStoreSettings } from "../../blobs/create-blob-store.js";
import { signingSecretForConfig } from "../../blobs/signing-secret.js";
import { interpolateEnv } from "../../config/interpolate-env.js";
import type { HomePaths } from "../../config/paths.js";
import { CliError, UsageError } from "../cli-error.js";

export interface MigrateFlags {
  redisUrl: string;
  prefix: string;
  blobsTo?: "s3" | "fs";
  s3Endpoint?: string;
  s3Bucket?: string;
  s3Region?: string;
  blobsDir?: string;
}

export interface MigrationTarget {
  /** The state section written into config.json: the url exactly as given. */
  state: { driver: "redis"; url: string; prefix: string };
  /** The url with its references resolved, for the copy. */
  redisUrl: string;
  /** The storage section written into config.json and the shared config. */
  storage: Record<string, unknown>;
  /** Where the blobs go, resolved; undefined when they stay where the home keeps them (already shared). */
  blobs?: BlobStoreSettings & { label: string };
}

const ACCESS_KEY = "AWS_ACCESS_KEY_ID";
const SECRET_KEY = "AWS_SECRET_ACCESS_KEY";

export function migrationTarget(
  flags: MigrateFlags,
  rawStorage: Record<string, unknown>,
  paths: HomePaths,
  env: NodeJS.ProcessEnv = process.env,
): MigrationTarget {
  const redisUrl = interpolateEnv(flags.redisUrl, env);
  if (redisUrl.trim() === "") throw new CliError(`--redis-url ${flags.redisUrl} is empty once the environment is read: set the variable it names`);
  const state = { driver: "redis" as const, url: flags.redisUrl, prefix: flags.prefix };
  const storage: Record<string, unknown> = { ...rawStorage };
  let blobs: MigrationTarget["blobs"];
  if (flags.blobsTo === "s3") {
    if (!flags.s3Endpoint || !flags.s3Bucket) throw new UsageError("--blobs-to s3 needs --s3-endpoint and --s3-bucket");
    for (const name of [ACCESS_KEY, SECRET_KEY])
      if (!env[name]) throw new CliError(`--blobs-to s3 reads the bucket's credentials from ${ACCESS_KEY} and ${SECRET_KEY}: ${name} is not set`);
    const options: Record<string, unknown> = { endpoint: flags.s3Endpoint, bucket: flags.s3Bucket, region: flags.s3Region ?? "us-east-1" };
    storage.driver = "s3";
    storage.options = { ...options, accessKeyId: `\${${ACCESS_KEY}}`, secretAccessKey: `\${${SECRET_KEY}}` };
    blobs = {
      driver: "s3",
      options: interpolateEnv(storage.options as Record<string, unknown>, env),
      label: `s3 bucket ${flags.s3Bucket} at ${flags.s3Endpoint}`,
    };
  } else if (flags.blobsTo === "fs") {
    if (!flags.blobsDir) throw new UsageError("--blobs-to fs needs --blobs-dir (a folder every instance mounts)");
    const base = path.resolve(flags.blobsDir);
    storage.driver = "fs";
    storage.options = { base };
    blobs = { driver: "fs", options: { base }, label: `folder ${base}` };
  } else if (isLocalDisk(rawStorage)) {
    throw new CliError(
      "this home stores its files on this machine's disk (storage.driver fs without options.base), which other instances cannot read: " +
        "say where they go with --blobs-to s3 --s3-endpoint URL --s3-bucket NAME, or --blobs-to fs --blobs-dir DIR (a shared volume); nothing was changed",
    );
  }
  // One secret for every instance; a home that had none carries its generated key, so links it handed out keep working.
  storage.signingSecret ??= signingSecretForConfig(path.join(paths.dataDir, "storage", "signing.key"));
  return { state, redisUrl, storage, blobs };
}

function isLocalDisk(storage: Record<string, unknown>): boolean {
  const driver = storage.driver ?? "fs";
  const options = storage.options as Record<string, unknown> | undefined;
  return driver === "fs" && typeof options?.base !== "string";
}
