// `gw backup` and `gw restore` copy an embedded home's files. A home whose state is in Redis keeps
// its agents, keys, balances, usage rows and most of its config in Redis and its files' bytes in a
// shared store, none of which an archive of the home holds, and a restore would replace its
// config with an embedded one: both are refused before anything is read or written, saying what
// backs such a deployment up instead (docs/decisions.md §14, §21).
import { existsSync } from "node:fs";
import { readBootstrap } from "../../config/bootstrap-sections.js";
import type { HomePaths } from "../../config/paths.js";
import { CliError } from "../cli-error.js";

const WHAT_REPLACES_A_BACKUP =
  "back up the Redis server itself (its persistence: `appendonly yes` and copies of its append-only and RDB snapshot files), " +
  "the bucket or shared folder of the stored files with the object store's own versioning or replication (or copies of the folder), " +
  "and each instance's config.json and data/usage-outbox.jsonl (rows waiting for Redis)";

/** Refuse a backup of a Redis home; a config that does not read is left to the backup, which says why. */
export function refuseBackupOfRedisHome(paths: HomePaths): void {
  if (!isRedisHome(paths)) return;
  throw new CliError(
    `${paths.home} keeps its state in Redis (state.driver "redis"), which a backup of the home does not hold, so gw backup would copy only its unused files: ` +
      `${WHAT_REPLACES_A_BACKUP}; nothing was written`,
  );
}

/** Refuse a restore into a Redis home: it would replace the instance's config with the archive's embedded one. */
export function refuseRestoreIntoRedisHome(paths: HomePaths): void {
  if (!isRedisHome(paths)) return;
  throw new CliError(
    `${paths.home} keeps its state in Redis (state.driver "redis"): a restore would replace its config with the archive's embedded one and leave Redis as it is. ` +
      `Restore the archive into a new home (--home NEW_DIR), which runs on the embedded state and can then move into Redis with \`gw migrate --to redis\`; ` +
      `a Redis deployment is restored from its own backups: ${WHAT_REPLACES_A_BACKUP}; nothing was written`,
  );
}

function isRedisHome(paths: HomePaths): boolean {
  if (!existsSync(paths.config)) return false;
  try {
    return readBootstrap(paths.config).state.driver === "redis";
  } catch {
    return false;
  }
}
